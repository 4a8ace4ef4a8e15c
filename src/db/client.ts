import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { PgliteChangeBus, PostgresChangeBus, type ChangeBus } from './change-bus.js';
import { lockDataDir } from './data-dir-lock.js';
import { isUnavailable } from './errors.js';
import { migrate, type Migration } from './migrate.js';
import { ConnectionTurns, PGliteDialect } from './pglite-dialect.js';
import { PGliteThread } from './pglite-thread.js';
import { PreparingClient } from './preparing-client.js';
import {
  buildTemplate,
  seedFromTemplate,
  TEMPLATE_CACHE_DIR,
  templateNames,
  type Template,
} from './pglite-template.js';
import type { Database } from './schema.js';

export type DbKind = 'postgres' | 'pglite';

/** The database handle the service passes around: one typed Kysely instance over either engine. */
export interface Db {
  kind: DbKind;
  kysely: Kysely<Database>;
  /**
   * The same database for the service's background work (the embedding worker, folding keyword
   * statistics, access counts). On PGlite its statements wait while requests do (ConnectionTurns);
   * on Postgres it is `kysely`.
   */
  background: Kysely<Database>;
  /** Connections in use and idle, and callers waiting for one (PGlite: its one connection). */
  poolStats(): PoolStats;
  /** A new listener for every instance's changes (change-bus.ts): a dedicated connection on Postgres. */
  openChangeBus(log: Pick<Logger, 'warn' | 'info' | 'error'>): ChangeBus;
  close(): Promise<void>;
}

export interface PoolStats {
  busy: number;
  idle: number;
  waiting: number;
}

export interface DbOptions {
  /** A postgres:// URL; when absent, embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** PGlite's data directory; `memory://` for a throwaway in-memory database. */
  dataDir?: string;
  /** Postgres pool size (default 10). */
  poolSize?: number;
  /**
   * PGlite: a fresh data folder may start as a copy of a cluster these migrations were applied to
   * (see pglite-template.ts), so that `migrate()` with the same list finds nothing to do; the
   * schema is the one they make (same catalogs, OIDs included) and `schema_version.applied_at` is
   * the copy's time. Unset: a fresh folder gets a bare cluster and the migrations run.
   */
  premigrated?: readonly Migration[];
}

/**
 * Session settings. Vector search: candidates per HNSW probe, and pgvector's iterative scan so
 * that filters (project, type, dates) cannot leave the vector branch short of results. No parallel
 * workers: every statement here is short and index-driven, and starting workers costs more than
 * it saves (measured: 40 ms for the hybrid search's exact branch, even when its one-time filter
 * then skips it).
 */
const SESSION_SETTINGS = {
  'hnsw.ef_search': '100',
  'hnsw.iterative_scan': 'relaxed_order',
  max_parallel_workers_per_gather: '0',
};

/**
 * PGlite's own. Fewer HNSW candidates per probe: its distances run in WASM, several times slower
 * than Postgres's: at 10,000 memories in one project the hybrid search's vector branch took 24 ms
 * of the statement's 43 at 100, 15 of 26 at 40 (still more than the 30 a search ranks).
 */
const PGLITE_SESSION_SETTINGS = {
  'hnsw.ef_search': '40',
  // The keyword statistics' trigger writes the counts in place (migrations/0016): one connection, no
  // writers to queue behind each other, and no fold holding every request.
  'devstream.stats_inline': 'on',
};

// timestamptz → Date, int8 (counts) → number: counts here never pass 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/**
 * PGlite's Postgres settings, on top of its own (single-user mode, fsync off, no workers):
 * - shared_buffers 32MB, not 128MB: PGlite's WASM memory holds Postgres's shared memory, and all
 *   of it is touched at start (measured: resident WASM memory 151 MB at 128MB, 47 MB at 32MB, 29 MB
 *   at 16MB). Pages not in the buffers are one read away in the OS page cache (PGlite reads the
 *   folder's files with plain reads), which the process's RSS does not count. Hybrid search over
 *   3,000 memories of 768-D (REST, p50): 30–34 ms at 128MB, 31–33 ms at 32MB, 44–50 ms at 16MB.
 * - max_wal_size 128MB, min_wal_size 32MB, not 1GB / 80MB: what a checkpoint leaves of the WAL.
 *   PGlite never starts one by itself (a standalone backend has no checkpointer), so the service
 *   runs one every 64 MB of WAL (TableMaintenance), and each keeps at most max_wal_size of segments
 *   for reuse. Without both, 10,000 stores left 993 MB of WAL beside 110 MB of data.
 */
const PGLITE_START_PARAMS: readonly string[] = [
  ...PGlite.defaultStartParams,
  ...['-c', 'shared_buffers=32MB', '-c', 'max_wal_size=128MB', '-c', 'min_wal_size=32MB'],
];

/**
 * PGlite with pgvector on `dataDir` (a folder, or `memory://`), in a thread of its own
 * (pglite-thread.ts); a folder without a cluster gets one from initdb.
 */
function openPglite(dataDir: string): Promise<PGliteThread> {
  return PGliteThread.open(dataDir, PGLITE_START_PARAMS);
}

/** The two templates fresh PGlite folders are copied from: a bare cluster, and one with `migrations` applied. */
function pgliteTemplates(migrations: readonly Migration[] = []): { initdb: Template; migrated: Template } {
  const names = templateNames(PGLITE_START_PARAMS, migrations);
  const initdb: Template = { name: names.initdb, build: async (dataDir) => (await openPglite(dataDir)).close() };
  const migrated: Template = {
    name: names.migrated,
    async build(dataDir) {
      await seedFromTemplate(dataDir, TEMPLATE_CACHE_DIR, initdb); // else PGlite runs initdb
      const pglite = await openPglite(dataDir);
      try {
        const kysely = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
        await migrate(kysely, [...migrations]);
        await kysely.destroy();
      } finally {
        await pglite.close();
      }
    },
  };
  return { initdb, migrated };
}

/**
 * Builds the templates that fresh PGlite data folders are copied from (a bare cluster, and one
 * migrated with `migrations`) unless they are there; returns their folders. Run by `npm ci` (the
 * `prepare` script); a fresh start that finds none builds the one it needs.
 */
export async function preparePgliteTemplates(
  migrations: readonly Migration[],
): Promise<{ initdb: string; migrated: string }> {
  const templates = pgliteTemplates(migrations);
  return {
    initdb: await buildTemplate(TEMPLATE_CACHE_DIR, templates.initdb),
    migrated: await buildTemplate(TEMPLATE_CACHE_DIR, templates.migrated),
  };
}

/** Opens the database: a `pg` pool when a URL is given, otherwise PGlite with pgvector in `dataDir`. */
export async function openDb(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      // Set at connection start (the URL's own `options`, if any, come first).
      options: [
        new URL(options.databaseUrl).searchParams.get('options'),
        ...Object.entries(SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`),
      ]
        .filter(Boolean)
        .join(' '),
      max: options.poolSize ?? 10,
      // A request waits at most this long for a connection: a database that refuses them fails at
      // once (503); one that hangs or a pool that stays full fails after 5 s, not a client's timeout.
      connectionTimeoutMillis: 5_000,
      // Long-lived connections: a new backend's first queries fault in the page table of every
      // shared buffer they touch (without huge pages, searches ran 3–4× slower for its first second).
      idleTimeoutMillis: 600_000,
      application_name: 'devstream-hub',
      // Recurring statements are prepared once per connection (see there).
      Client: PreparingClient,
    });
    // A connection lost (Postgres restarting, a network cut) must not crash the process: the pool
    // reports it for idle clients, the client itself while it is checked out (pg-pool detaches its
    // own listener then, and a transaction holds a client between statements). The query in
    // flight, or the next one, fails with the cause; the pool drops the broken client.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      kind: 'postgres',
      kysely,
      background: kysely,
      poolStats: () => ({ busy: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      openChangeBus: (log) => new PostgresChangeBus(options.databaseUrl!, log),
      // Kysely ends the pool only once a query of its own has taken it (its driver's init).
      close: once(async () => {
        await kysely.destroy();
        if (!pool.ended) await pool.end();
      }),
    };
  }
  const dataDir = options.dataDir ?? 'memory://';
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  // One process per folder: a second PGlite on it would see only its own writes and lose them.
  const lock = inMemory ? null : await lockDataDir(dataDir);
  let pglite: PGliteThread | undefined;
  try {
    let premigrated = false;
    if (!inMemory) {
      const templates = pgliteTemplates(options.premigrated);
      premigrated =
        options.premigrated !== undefined && (await seedFromTemplate(dataDir, TEMPLATE_CACHE_DIR, templates.migrated));
      if (!premigrated) await seedFromTemplate(dataDir, TEMPLATE_CACHE_DIR, templates.initdb);
    }
    pglite = await openPglite(dataDir);
    // The template's migrations were applied to this database now, as it came to be.
    if (premigrated) await pglite.query('update schema_version set applied_at = now()');
    for (const [name, value] of Object.entries({ ...SESSION_SETTINGS, ...PGLITE_SESSION_SETTINGS }))
      await pglite.query('SELECT set_config($1, $2, false)', [name, value]);
  } catch (error) {
    await pglite?.close().catch(() => {});
    lock?.release();
    throw error;
  }
  const turns = new ConnectionTurns();
  const dialect = new PGliteDialect(pglite, { turns });
  const kysely = new Kysely<Database>({ dialect });
  const background = new Kysely<Database>({ dialect: new PGliteDialect(pglite, { turns, background: true }) });
  return {
    kind: 'pglite',
    kysely,
    background,
    poolStats: () => dialect.stats(),
    openChangeBus: (log) => new PgliteChangeBus(pglite, kysely, log),
    // Once: a second close (a test that closed the database under a running service) is a no-op.
    close: once(async () => {
      try {
        await background.destroy();
        await kysely.destroy();
        await pglite.close();
      } finally {
        lock?.release();
      }
    }),
  };
}

/**
 * Start-up against a database that is not up yet (a compose file starting both, a restart): tries
 * `select 1` until it answers, waiting 0.5 s doubling to 5 s between tries, for at most `timeoutMs`
 * (0: one try). Only an unreachable or starting database is waited for (isUnavailable): a wrong
 * password, a missing database or missing rights fail at once. Throws the last error when time is up.
 */
export async function waitForDatabase(
  db: Db,
  timeoutMs: number,
  onRetry: (error: unknown, waitMs: number) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let waitMs = 500; ; waitMs = Math.min(waitMs * 2, 5_000)) {
    try {
      await sql`select 1`.execute(db.kysely);
      return;
    } catch (error) {
      const left = deadline - Date.now();
      if (left <= 0 || !isUnavailable(error)) throw error;
      onRetry(error, Math.min(waitMs, left));
      await sleep(Math.min(waitMs, left));
    }
  }
}

/** `close` run once: later calls get the first call's promise. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
