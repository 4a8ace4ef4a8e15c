import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db, type DbOptions } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';

export interface TestDb {
  db: Db;
  schemaVersion: number;
  /** The scratch database's URL (Postgres only), for child processes. */
  url?: string;
  /** Closes the handle and removes the database (scratch Postgres database or PGlite directory). */
  dispose(): Promise<void>;
}

export interface Backend {
  name: 'pglite' | 'postgres';
  /**
   * A fresh migrated database of this kind. `poolSize` (Postgres; PGlite has one connection): 1 makes
   * a connection's own state (its prepared statements) visible to the test.
   */
  open(options?: { migrate?: boolean; poolSize?: number }): Promise<TestDb>;
}

/** Opens a database at `options`, migrated unless told not to; `remove` deletes its storage. */
export async function openTestDb(options: DbOptions, migrated: boolean, remove: () => Promise<void>): Promise<TestDb> {
  const db = await openDb(options);
  const schemaVersion = migrated ? (await migrate(db.kysely)).current : 0;
  return {
    db,
    schemaVersion,
    ...(options.databaseUrl ? { url: options.databaseUrl } : {}),
    async dispose() {
      await db.close();
      await remove();
    },
  };
}

/** A fresh PGlite database in a temporary folder (no Postgres server, no container probe: the fast tier uses it alone). */
export const pglite: Backend = {
  name: 'pglite',
  async open(options = {}) {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-pglite-'));
    return openTestDb({ dataDir: dir }, options.migrate !== false, () => rm(dir, { recursive: true, force: true }));
  },
};
