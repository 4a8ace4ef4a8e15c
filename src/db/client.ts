import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './schema.js';

export type DbKind = 'postgres' | 'pglite';

/** The database handle the service passes around: one typed Kysely instance over either engine. */
export interface Db {
  kind: DbKind;
  kysely: Kysely<Database>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** A postgres:// URL; when absent, embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** PGlite's data directory; `memory://` for a throwaway in-memory database. */
  dataDir?: string;
  /** Postgres pool size (default 10). */
  poolSize?: number;
}

// timestamptz → Date, int8 (counts) → number: counts here never pass 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/** Opens the database: a `pg` pool when a URL is given, otherwise PGlite with pgvector in `dataDir`. */
export async function openDb(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'devstream-hub',
    });
    // An idle client losing its connection must not crash the process; the next query reports it.
    pool.on('error', () => {});
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { kind: 'postgres', kysely, close: () => kysely.destroy() };
  }
  const dataDir = options.dataDir ?? 'memory://';
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create({ dataDir, extensions: { vector } });
  const kysely = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    kind: 'pglite',
    kysely,
    close: async () => {
      await kysely.destroy();
      await pglite.close();
    },
  };
}
