import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** The folder of plain SQL migrations, `NNNN_name.sql`, applied in order. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Arbitrary, fixed: the advisory lock every devstream-hub process takes to migrate. */
const MIGRATION_LOCK_KEY = 727_274_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationReport {
  applied: string[];
  current: number;
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const text = await readFile(`${dir}/${file}`, 'utf8');
    migrations.push({
      version: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ''),
      sql: text,
      checksum: createHash('sha256').update(text).digest('hex'),
    });
  }
  const versions = migrations.map((m) => m.version);
  if (new Set(versions).size !== versions.length) throw new Error(`Two migrations share a version number in ${dir}`);
  return migrations;
}

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock so that
 * several processes starting together apply each migration exactly once. Re-running is a no-op.
 * Refuses to run when an applied migration's file has changed (migrations are forward-only).
 */
export async function migrate(db: Kysely<Database>, migrations?: Migration[]): Promise<MigrationReport> {
  const all = migrations ?? (await loadMigrations());
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      await sql`
        create table if not exists schema_version (
          version integer primary key,
          name text not null,
          checksum text not null,
          applied_at timestamptz not null default now()
        )`.execute(conn);
      const done = await conn.selectFrom('schema_version').select(['version', 'name', 'checksum']).execute();
      const byVersion = new Map(done.map((row) => [row.version, row]));
      for (const m of all) {
        const row = byVersion.get(m.version);
        if (row && row.checksum !== m.checksum) {
          throw new Error(`Migration ${m.name} was changed after it was applied; add a new migration instead`);
        }
      }
      const applied: string[] = [];
      for (const m of all) {
        if (byVersion.has(m.version)) continue;
        await sql`begin`.execute(conn);
        try {
          await sql.raw(m.sql).execute(conn);
          await conn
            .insertInto('schema_version')
            .values({ version: m.version, name: m.name, checksum: m.checksum })
            .execute();
          await sql`commit`.execute(conn);
        } catch (error) {
          await sql`rollback`.execute(conn);
          throw new Error(`Migration ${m.name} failed: ${(error as Error).message}`, { cause: error });
        }
        applied.push(m.name);
      }
      return { applied, current: Math.max(0, ...all.map((m) => m.version)) };
    } finally {
      // A failed unlock (lost connection) must not hide the real error; the lock dies with the session.
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn).catch(() => {});
    }
  });
}
