import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { ConfigError, isLoopbackHost, loadConfig, type Config } from './config.js';
import { pino } from 'pino';
import { openDb, waitForDatabase, type Db } from './db/client.js';
import type { Logger } from './domain/context.js';
import { loggerOptions } from './logger.js';
import { loadMigrations, migrate } from './db/migrate.js';
import { VERSION } from './version.js';

const USAGE = `devstream-hub ${VERSION}

Usage: devstream-hub [command]

Commands:
  serve     Apply migrations and serve MCP (/mcp) and REST (/api/v1) (default)
  migrate   Apply pending migrations and exit
  reembed   Embed every memory that has no vector of OLLAMA_EMBEDDING_MODEL now
            (--all: every memory). With embedded PGlite, stop the server first.
  analyze   Build the code graph of a repository (TypeScript, JavaScript, Python) and write
            and/or upload it: analyze <path> [--out <file>] [--upload <server>] [--repo <name>]
            [--token <key>] [--branch <name>] [--include <glob>]… [--exclude <glob>]… [--quiet]
  keys      Manage API keys in DATABASE_URL: keys create <name> [--scopes read,write,admin],
            keys list [--all], keys revoke <name> (with embedded PGlite: use /api/v1/keys)
  upload    Upload a DevLens commit file or graph folder to a server:
            upload <file | folder> --url <server> [--repo <name>] [--commit <hash>] [--branch <name>]
  help      Show this text

Configuration comes from environment variables; see README.md.`;

async function openMigrated(
  config: Config,
  wait?: { timeoutMs: number; log: Pick<Logger, 'warn'> },
): Promise<{ db: Db; version: number; applied: string[] }> {
  const migrations = await loadMigrations();
  // serve (the caller that waits): a fresh PGlite folder starts migrated (src/db/pglite-template.ts);
  // `migrate` runs them, to report what it applied.
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(wait ? { premigrated: migrations } : {}) });
  try {
    if (wait && db.kind === 'postgres') {
      await waitForDatabase(db, wait.timeoutMs, (error, waitMs) =>
        wait.log.warn({ err: { message: (error as Error).message, code: (error as { code?: string }).code }, retry_in_ms: waitMs }, 'waiting for the database (DB_CONNECT_TIMEOUT_S)'),
      );
    }
    const report = await migrate(db.kysely, migrations);
    return { db, version: report.current, applied: report.applied };
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
}

function where(config: Config): string {
  return config.databaseUrl ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
}

async function serve(config: Config): Promise<void> {
  const log = pino(loggerOptions(config.logLevel));
  const { db, version } = await openMigrated(config, { timeoutMs: config.dbConnectTimeoutMs, log });
  const app = await buildApp(config, { db, schemaVersion: version });
  let closing = false;
  /**
   * SIGTERM/SIGINT: stop accepting; let requests in flight finish for up to SHUTDOWN_TIMEOUT_S, then
   * cut the connections still open; close MCP sessions and their streams; stop the background
   * work (the worker finishes its batch, a running job goes back to the queue); close the pool.
   * Exit 0 when all of that went through; a second signal, or a hang past the bound, exits 1.
   */
  const shutdown = async (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal, timeout_s: config.shutdownTimeoutMs / 1000 }, 'shutting down: finishing requests in flight');
    const cut = setTimeout(() => {
      app.log.warn('shutdown timeout: closing the connections of requests still in flight');
      app.server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    cut.unref();
    // Closing the pool and the background work gets as long again before the process gives up.
    const force = setTimeout(() => {
      app.log.error('shutdown did not finish: exiting');
      process.exit(1);
    }, 2 * config.shutdownTimeoutMs + 5_000);
    force.unref();
    let code = 0;
    try {
      await app.close();
      await db.close();
      app.log.info('shut down');
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      code = 1;
    }
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  if (!isLoopbackHost(config.host) && config.allowedHosts === undefined) {
    app.log.warn({ host: config.host }, 'listening beyond loopback: set ALLOWED_HOSTS to the names clients use');
  }
  app.log.info(
    { database: where(config), stateless: config.mcpStateless, auth: config.auth.mode },
    `devstream-hub ${VERSION} listening on ${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port} (MCP at /mcp, REST at /api/v1)`,
  );
}

async function runMigrate(config: Config): Promise<void> {
  const { db, version, applied } = await openMigrated(config);
  await db.close();
  console.log(
    applied.length
      ? `Applied ${applied.length} migration(s) to ${where(config)}: ${applied.join(', ')}; schema at ${version}`
      : `Nothing to apply: ${where(config)} is at schema version ${version}`,
  );
}

export async function main(argv: string[]): Promise<number> {
  // A client of the file system and of a running server: its own options, no configuration.
  // Commands are imported when run: the analyzer loads the TypeScript compiler (~2 s, ~100 MB),
  // which `serve` never needs.
  if (argv[0] === 'analyze') return (await import('./commands/analyze.js')).analyzeCommand(argv.slice(1));
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      all: { type: 'boolean' },
      url: { type: 'string' },
      repo: { type: 'string' },
      commit: { type: 'string' },
      branch: { type: 'string' },
      token: { type: 'string' },
      scopes: { type: 'string' },
    },
  });
  const command = values.help ? 'help' : values.version ? 'version' : (positionals[0] ?? 'serve');
  if (command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command === 'version') {
    console.log(VERSION);
    return 0;
  }
  if (command === 'upload') {
    // A client of a running server: no configuration, no database.
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const { upload } = await import('./commands/upload.js');
    return upload({
      target: positionals[1],
      url: str(values.url),
      repo: str(values.repo),
      commit: str(values.commit),
      branch: str(values.branch),
      token: str(values.token),
    });
  }
  if (command !== 'serve' && command !== 'migrate' && command !== 'reembed' && command !== 'keys') {
    console.error(`Unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  if (command === 'keys') {
    const { keysCommand } = await import('./commands/keys.js');
    return keysCommand(config, async () => (await openMigrated(config)).db, {
      positionals: positionals.slice(1),
      scopes: typeof values.scopes === 'string' ? values.scopes : undefined,
      all: values.all === true,
    });
  }
  if (command === 'migrate') await runMigrate(config);
  else if (command === 'reembed') {
    const { db } = await openMigrated(config);
    try {
      const { reembed } = await import('./commands/reembed.js');
      return await reembed(config, db, { all: values.all === true });
    } finally {
      await db.close();
    }
  } else await serve(config);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(`devstream-hub: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
