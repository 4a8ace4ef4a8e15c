import { buildApp } from '../app.js';
import { openDb } from '../db/client.js';

/**
 * The OpenAPI document exactly as the service serves it at /openapi.json. Builds the app over an
 * empty in-memory database that no route is ever called on.
 */
export async function openApiDocument(): Promise<unknown> {
  const db = await openDb({ dataDir: 'memory://' });
  const app = await buildApp(
    {
      logLevel: 'silent',
      mcpStateless: false,
      allowedHosts: undefined,
      allowedOrigins: undefined,
      sessionIdleMs: 60_000,
      defaultProject: 'default',
      embedding: { provider: 'none', ollamaHost: 'http://127.0.0.1:11434', model: 'nomic-embed-text', timeoutMs: 1_000 },
      searchWeights: { vector: 1, keyword: 1, neighbours: 0.4 },
      graphs: { retention: 20, uploadLimit: 256 * 1024 * 1024, analyzeRoots: [] },
    },
    { db, schemaVersion: 0 },
  );
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await db.close();
  }
}
