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
