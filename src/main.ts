import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ConfigError, isLoopbackHost, loadConfig, type Config } from './config.js';
import { loggerOptions } from './logger.js';
import { unavailableLogEveryMs } from './operations/fault-log.js';
import { VERSION } from './version.js';

// The service (app, database, drivers) is imported by the commands that need it, when they run:
// the client commands (hooks, upload, analyze, help) start without loading it.
const openMigrated = async (...args: Parameters<typeof import('./commands/open-migrated.js').openMigrated>) =>
  (await import('./commands/open-migrated.js')).openMigrated(...args);

const USAGE = `devstream-hub ${VERSION}

Usage: devstream-hub [command]

Commands:
  serve     Apply migrations and serve MCP (/mcp) and REST (/api/v1) (default)
  migrate   Apply pending migrations and exit
  reembed   Embed every memory that has no vector of OLLAMA_EMBEDDING_MODEL now
            (--all: every memory). With embedded PGlite, stop the server first.
  analyze   Build the code graph of a repository (TypeScript, JavaScript, Python, Go, Rust, Java) and write
            and/or upload it: analyze <path> [--out <file>] [--upload <server>] [--repo <name>]
            [--token <key>] [--branch <name>] [--include <glob>]… [--exclude <glob>]… [--quiet]
            [--summarize [--previous <commit file>]] (--repo defaults to the folder's name;
            --summarize: a chat model's summaries per symbol; analyze --help for more)
  keys      Manage API keys in DATABASE_URL: keys create <name> [--scopes read,write,admin]
            [--profile core|all] [--projects a,b] [--repos x,y], keys list [--all],
            keys revoke <name> (with embedded PGlite: use /api/v1/keys)
  upload    Upload a DevLens commit file or graph folder to a server:
            upload <file | folder> --url <server> [--repo <name>] [--commit <hash>] [--branch <name>]
            [--token <key>] (--repo defaults to the repoPath in the graph folder's meta.json, else
            to the name of the folder the commit file is in)
  hooks     Claude Code hooks that bring the hub's context into each session:
            hooks print --url <hub> [--token-env DEVSTREAM_TOKEN] [--project <name>] [--repo <name>]
            (the hooks block for .claude/settings.json, as JSON), hooks install … [--settings <file>]
            (merged into ./.claude/settings.json or <file>); hooks --help for more
  help      Show this text

analyze --upload and upload --url take the server as an http(s) URL (http://127.0.0.1:7000), and
the API key as --token or, kept out of the command line, in the DEVSTREAM_TOKEN environment variable.
The server's configuration comes from environment variables; see docs/configuration.md.`;

function where(config: Config): string {
  return config.databaseUrl ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
}

/** A second signal this soon after the first is the same Ctrl-C again (see serve). */
const SAME_SIGNAL_MS = 1_000;

async function serve(config: Config): Promise<void> {
  const [{ buildApp }, { pino }] = await Promise.all([import('./app.js'), import('pino')]);
  const log = pino(loggerOptions(config.logLevel));
  // Before the database: a port in use is found at once, not after the migrations.
  await checkPortFree(config.host, config.port);
  const { db, version } = await openMigrated(config, { timeoutMs: config.dbConnectTimeoutMs, log });
  const app = await buildApp(config, {
    db,
    schemaVersion: version,
    // A test hook, not a setting (test/faults.test.ts sees each 503's warning of a child service).
    unavailableLogEveryMs: unavailableLogEveryMs(process.env.DEVSTREAM_TEST_UNAVAILABLE_LOG_EVERY_MS),
  });
  let closingAt: number | null = null;
  /**
   * SIGTERM/SIGINT: new requests get 503 (the listener stays open) while the requests in flight
   * finish, for up to SHUTDOWN_TIMEOUT_S; at that deadline an upload still running is rolled back
   * and answered 503, and the connections still open are closed. Then the MCP sessions and their
   * streams close, the background work stops (the worker finishes its batch, a running job goes
   * back to the queue) and the pool closes. Exit 0 when all of that went through. A second signal
   * exits 1 at once — unless it comes within SAME_SIGNAL_MS: `npm start` runs npm → sh → node
   * (`npm run cli -- serve`: npm → sh → tsx → node), and a terminal's Ctrl-C reaches every process
   * of the group, npm (and tsx) passing it on too, so one Ctrl-C arrives two or three times within a
   * few milliseconds.
   */
  const shutdown = async (signal: string) => {
    if (closingAt !== null) {
      if (performance.now() - closingAt < SAME_SIGNAL_MS) {
        app.log.debug({ signal }, 'the same signal again (passed on by npm or tsx): still shutting down');
        return;
      }
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closingAt = performance.now();
    app.log.info(
      { signal, timeout_s: config.shutdownTimeoutMs / 1000, in_flight: app.drain.inFlight() },
      'shutting down: finishing requests in flight, answering new ones 503 (a second signal exits at once)',
    );
    app.drain.start();
    // Closing the sessions, the background work and the pool gets as long again before the process gives up.
    const force = setTimeout(
      () => {
        app.log.error('shutdown did not finish: exiting');
        process.exit(1);
      },
      2 * config.shutdownTimeoutMs + 5_000,
    );
    force.unref();
    let code = 0;
    try {
      const deadline = sleep(config.shutdownTimeoutMs, 'timeout' as const, { ref: false });
      if ((await Promise.race([app.drain.idle(), deadline])) === 'timeout' && app.drain.inFlight() > 0) {
        app.log.warn(
          { in_flight: app.drain.inFlight() },
          'shutdown timeout: stopping uploads (answered 503), closing the connections of requests still in flight',
        );
        await app.drain.cut();
        app.server.closeAllConnections();
      }
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

/** Fails at once, naming the address, when another process listens on it (PORT=0 picks a free one). */
async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (error.code === 'EADDRINUSE')
        reject(
          new Error(
            `${where} is already in use (another devstream-hub?): stop that process, or set PORT to a free port`,
          ),
        );
      else if (error.code === 'EACCES')
        reject(new Error(`may not listen on ${where} (ports below 1024 need privileges): set PORT`));
      else if (error.code === 'EADDRNOTAVAIL')
        reject(new Error(`cannot listen on ${where}: no such local address (HOST)`));
      else reject(error);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
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
      'token-env': { type: 'string' },
      project: { type: 'string' },
      settings: { type: 'string' },
      profile: { type: 'string' },
      projects: { type: 'string' },
      repos: { type: 'string' },
    },
  });
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (positionals[0] === 'hooks') {
    // Writes settings for Claude Code: no configuration, no database, no server.
    const { HOOKS_USAGE, hooksCommand } = await import('./commands/hooks.js');
    if (values.help) {
      console.log(HOOKS_USAGE);
      return 0;
    }
    return hooksCommand({
      positionals: positionals.slice(1),
      url: str(values.url),
      tokenEnv: str(values['token-env']),
      project: str(values.project),
      repo: str(values.repo),
      settings: str(values.settings),
      token: values.token !== undefined,
    });
  }
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
      profile: typeof values.profile === 'string' ? values.profile : undefined,
      projects: str(values.projects),
      repos: str(values.repos),
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
