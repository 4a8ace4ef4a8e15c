import { FakeOllama } from '../../support/fake-ollama.js';
import { startService } from '../lib/child.js';
const fake = await new FakeOllama().start();
fake.dense = true;
const svc = await startService({
  cwd: '/work/main',
  env: {
    DATABASE_URL: process.env.DATABASE_URL!,
    LOG_LEVEL: 'warn',
    EMBEDDING_PROVIDER: 'ollama',
    OLLAMA_HOST: fake.url,
    OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text',
  },
});
console.log('up');
await new Promise((r) => setTimeout(r, 40_000));
await svc.stop();
await fake.stop();
