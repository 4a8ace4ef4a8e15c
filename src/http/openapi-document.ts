import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { openDb } from '../db/client.js';

/**
 * The OpenAPI document exactly as the service serves it at /openapi.json with the default
 * configuration (its server: http://127.0.0.1:7000, the default HOST and PORT). Builds the app over
 * an empty in-memory database that no route is ever called on.
 */
export async function openApiDocument(): Promise<unknown> {
  const db = await openDb({ dataDir: 'memory://' });
  const defaults = loadConfig({});
  const app = await buildApp(
    {
      ...defaults,
      logLevel: 'silent',
      embedding: { ...defaults.embedding, provider: 'none' },
      publicUrl: `http://${defaults.host}:${defaults.port}`,
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
