import type { Config } from '../config.js';
import { openDb, waitForDatabase, type Db } from '../db/client.js';
import { loadMigrations, migrate, type Migration } from '../db/migrate.js';
import type { Logger } from '../logger.js';

/**
 * Opens the configured database and brings it to the latest migration, as every command that
 * needs it does (serve waits for Postgres to answer first, up to DB_CONNECT_TIMEOUT_S). A failure
 * on Postgres says what to do: the URL (password hidden), the SQLSTATE and a hint.
 */
export async function openMigrated(
  config: Config,
  wait?: { timeoutMs: number; log: Pick<Logger, 'warn'> },
): Promise<{ db: Db; version: number; applied: string[] }> {
  const migrations = await loadMigrations();
  // serve (the caller that waits): a fresh PGlite folder starts migrated (src/db/pglite-template.ts);
  // `migrate` runs them, to report what it applied.
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...(wait ? { premigrated: migrations } : {}),
  });
  try {
    return await migrated(db, migrations, wait);
  } catch (error) {
    await db.close().catch(() => {});
    throw config.databaseUrl ? new Error(describeDatabaseFailure(error, config.databaseUrl), { cause: error }) : error;
  }
}

async function migrated(
  db: Db,
  migrations: Migration[],
  wait?: { timeoutMs: number; log: Pick<Logger, 'warn'> },
): Promise<{ db: Db; version: number; applied: string[] }> {
  if (wait && db.kind === 'postgres') {
    await waitForDatabase(db, wait.timeoutMs, (error, waitMs) =>
      wait.log.warn(
        { err: { message: (error as Error).message, code: (error as { code?: string }).code }, retry_in_ms: waitMs },
        'waiting for the database (DB_CONNECT_TIMEOUT_S)',
      ),
    );
  }
  const report = await migrate(db.kysely, migrations);
  return { db, version: report.current, applied: report.applied };
}

/** What to do about the SQLSTATEs a first start on a new database meets most. */
const DATABASE_HINTS: Record<string, string> = {
  '28P01': 'check the user name and password in DATABASE_URL',
  '28000': "the server's pg_hba.conf refuses this user, host or database",
  '3D000': 'create the database (createdb), or fix its name in DATABASE_URL',
  '42501':
    'the role lacks a right the migrations need: have a superuser run CREATE EXTENSION vector once in that database (the migrations then skip it)',
  ECONNREFUSED: 'nothing listens there: is Postgres running at that host and port? (waited DB_CONNECT_TIMEOUT_S)',
  '58P01': 'pgvector is not installed on the Postgres server (see docs/operations.md, "Postgres")',
  '0A000': 'pgvector is not installed on the Postgres server (see docs/operations.md, "Postgres")',
};

/** A start-up failure on Postgres, with the URL (password hidden), the SQLSTATE and what to do. */
function describeDatabaseFailure(error: unknown, databaseUrl: string): string {
  let e = error as { message?: string; code?: string; cause?: unknown };
  const message = e?.message ?? String(error);
  while (e && typeof e.code !== 'string' && e.cause) e = e.cause as typeof e;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const hint = code ? DATABASE_HINTS[code] : undefined;
  return `cannot start on DATABASE_URL ${redactUrl(databaseUrl)}: ${message}${code ? ` (${code})` : ''}${hint ? `: ${hint}` : ''}`;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    u.search = '';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
