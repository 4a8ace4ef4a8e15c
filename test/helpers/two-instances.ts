import { openDb } from '../../src/db/client.js';
import type { Backend, TestDb } from './backends.js';
import { startServer, type TestServer } from './server.js';

/**
 * Two instances of the service over one database (AUTH=required with `adminToken`): on Postgres B
 * has its own pool and change-bus listener on the same database, as another process would; on
 * PGlite both share the one in-process database. `lines` collects instance B's log lines.
 */
export async function twoInstances(
  backend: Backend,
  adminToken: string,
  lines: string[] = [],
): Promise<{ a: TestServer; b: TestServer; close(): Promise<void>; database: TestDb }> {
  const database = await backend.open();
  const second = database.url ? await openDb({ databaseUrl: database.url }) : undefined;
  const config = { auth: { mode: 'required' as const, adminToken } };
  const a = await startServer(database, config);
  const b = await startServer(
    second ? { ...database, db: second } : database,
    { ...config, logLevel: 'info' },
    { logStream: { write: (line: string) => void lines.push(line) } },
  );
  return {
    a,
    b,
    database,
    async close() {
      await a.close();
      await b.close();
      await second?.close();
      await database.dispose();
    },
  };
}
