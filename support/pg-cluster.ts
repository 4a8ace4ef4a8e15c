import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, rmSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A throwaway Postgres cluster that a test or benchmark owns: it can stop it (to simulate an
 * outage), start it again on the same port, and remove it. The cluster runs as the `postgres` OS
 * user (through `runuser` when this process is root, directly otherwise), from the Postgres 15
 * binaries at PG_BIN (default /usr/lib/postgresql/15/bin), with trust auth on 127.0.0.1 only,
 * fsync off and max_connections 200. See .ci/run for the same set-up in shell.
 */

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const RUNUSER_PATHS = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser', '/bin/runuser'];
const EXEC_TIMEOUT_MS = 120_000;

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** pg_ctl stop (default mode 'fast'); resolves when stopped. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start -w on the same port; resolves when it accepts connections. */
  start(): Promise<void>;
  /** stop then start. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stop (immediate) and remove its directory. Idempotent. */
  destroy(): Promise<void>;
}

interface Runner {
  /** The command and arguments that run `bin` with `args` as the cluster's owner. */
  argv(bin: string, args: string[]): [string, string[]];
  uid: number;
  gid: number;
}

let support: { reason: string | null; runner?: Runner } | undefined;

function probe(): { reason: string | null; runner?: Runner } {
  if (process.platform !== 'linux')
    return { reason: `throwaway Postgres clusters need Linux (this is ${process.platform})` };
  for (const bin of ['initdb', 'pg_ctl', 'postgres']) {
    try {
      accessSync(join(PG_BIN, bin), constants.X_OK);
    } catch {
      return {
        reason: `no Postgres binaries: ${join(PG_BIN, bin)} is missing (set PG_BIN to the folder holding initdb, pg_ctl, postgres)`,
      };
    }
  }
  let sharedir: string;
  try {
    sharedir = execFileSync(join(PG_BIN, 'pg_config'), ['--sharedir'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    sharedir = '/usr/share/postgresql/15';
  }
  if (!existsSync(join(sharedir, 'extension', 'vector.control'))) {
    return {
      reason: `pgvector is not installed for the Postgres at ${PG_BIN} (no ${join(sharedir, 'extension', 'vector.control')})`,
    };
  }
  const uid = process.getuid?.() ?? -1;
  if (uid === 0) {
    const runuser = RUNUSER_PATHS.find((p) => existsSync(p));
    if (!runuser) return { reason: 'running as root, and there is no runuser to run Postgres as the postgres user' };
    const entry = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((line) => line.split(':'))
      .find((f) => f[0] === 'postgres');
    if (!entry) return { reason: 'running as root, and there is no `postgres` OS user to run the cluster as' };
    return {
      reason: null,
      runner: {
        argv: (bin, args) => [runuser, ['-u', 'postgres', '--', bin, ...args]],
        uid: Number(entry[2]),
        gid: Number(entry[3]),
      },
    };
  }
  // Not root: initdb and postgres run as this user (they refuse root only).
  return { reason: null, runner: { argv: (bin, args) => [bin, args], uid, gid: process.getgid?.() ?? -1 } };
}

/** null when a throwaway cluster can be made here; otherwise why not (no binaries, not root...). */
export function clusterSupport(): string | null {
  support ??= probe();
  return support.reason;
}

/** Clusters not destroyed yet, stopped and removed (synchronously) when the process exits. */
const live = new Map<string, { dataDir: string; dir: string; runner: Runner }>();
let exitHookInstalled = false;

function killAllSync(): void {
  for (const [key, c] of live) {
    live.delete(key);
    try {
      const [cmd, args] = c.runner.argv(join(PG_BIN, 'pg_ctl'), [
        '-D',
        c.dataDir,
        '-m',
        'immediate',
        '-w',
        '-t',
        '20',
        'stop',
      ]);
      execFileSync(cmd, args, { stdio: 'ignore', cwd: c.dir, timeout: 30_000 });
    } catch {
      /* not running, or cannot stop it: best effort */
    }
    try {
      rmSync(c.dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllSync);
  // A signal ends the process without 'exit': when nobody else handles it, clean up and re-raise it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    if (process.listenerCount(signal) > 0) continue;
    const handler = () => {
      killAllSync();
      process.removeListener(signal, handler);
      process.kill(process.pid, signal);
    };
    process.on(signal, handler);
  }
}

interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(runner: Runner, bin: string, args: string[], cwd: string): Promise<ExecResult> {
  const [cmd, argv] = runner.argv(join(PG_BIN, bin), args);
  return new Promise((resolve) => {
    execFile(
      cmd,
      argv,
      { cwd, timeout: EXEC_TIMEOUT_MS, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as { code?: unknown }).code === 'number'
            ? (error as { code: number }).code
            : -1
          : 0;
        resolve({
          code,
          stdout: String(stdout ?? ''),
          stderr: String(stderr ?? '') || (error && code === -1 ? error.message : ''),
        });
      },
    );
  });
}

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

export async function createCluster(
  options: { port?: number; settings?: Record<string, string> } = {},
): Promise<PgCluster> {
  const reason = clusterSupport();
  if (reason !== null) throw new Error(`cannot create a Postgres cluster here: ${reason}`);
  const runner = support!.runner!;
  installExitHook();

  const dir = await mkdtemp('/tmp/dsh-pg-');
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const key = dir;
  const logTail = async (lines = 30) => {
    try {
      return (await readFile(logFile, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no server log)';
    }
  };

  let destroyed = false;
  try {
    if (runner.uid >= 0) await chown(dir, runner.uid, runner.gid);
    live.set(key, { dataDir, dir, runner });
    const init = await run(
      runner,
      'initdb',
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'],
      dir,
    );
    if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code}): ${init.stderr || init.stdout}`);
  } catch (error) {
    live.delete(key);
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    throw error;
  }

  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    fsync: 'off',
    max_connections: '200',
    ...options.settings,
  };
  // Settings go in postgresql.conf (appended: later lines win), so every start uses them.
  const writeConfig = async (port: number) => {
    const lines = Object.entries({ ...settings, port: String(port) }).map(([k, v]) => `${k} = ${quote(v)}`);
    await appendFile(
      join(dataDir, 'postgresql.conf'),
      `\n# throwaway cluster (support/pg-cluster.ts)\n${lines.join('\n')}\n`,
    );
  };

  const status = async (): Promise<'running' | 'stopped'> => {
    // pg_ctl status: 0 running, 3 not running, 4 no data directory.
    const r = await run(runner, 'pg_ctl', ['-D', dataDir, 'status'], dir);
    return r.code === 0 ? 'running' : 'stopped';
  };

  const accepts = async (url: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('select 1');
        return;
      } catch (error) {
        last = error;
      } finally {
        await client.end().catch(() => {});
      }
      await sleep(50);
    }
    throw new Error(`the cluster does not accept connections: ${(last as Error)?.message}`);
  };

  const startOn = async (port: number) => {
    const r = await run(runner, 'pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'], dir);
    if (r.code !== 0)
      throw new Error(
        `pg_ctl start failed (exit ${r.code}) on port ${port}: ${(r.stderr || r.stdout).trim()}\n--- server log ---\n${await logTail()}`,
      );
    await accepts(`postgres://postgres@127.0.0.1:${port}/postgres`, 30_000);
  };

  // First start; a port picked here may be taken by someone else meanwhile: retry on a new one.
  let port = options.port ?? (await freePort());
  for (let attempt = 1; ; attempt++) {
    try {
      await writeConfig(port);
      await startOn(port);
      break;
    } catch (error) {
      const busy = /could not bind|address already in use/i.test((error as Error).message);
      if (options.port === undefined && busy && attempt < 4) {
        port = await freePort();
        continue;
      }
      live.delete(key);
      await run(runner, 'pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop'], dir).catch(() => {});
      await rm(dir, { recursive: true, force: true }).catch(() => {});
      throw error;
    }
  }

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // One pg_ctl at a time: stop/start/destroy calls are queued.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => {});
    return next;
  };
  const alive = () => {
    if (destroyed) throw new Error('the cluster was destroyed');
  };

  const stop = (mode: 'fast' | 'immediate' = 'fast') =>
    serial(async () => {
      alive();
      const r = await run(runner, 'pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop'], dir);
      if (r.code !== 0 && (await status()) === 'running') {
        throw new Error(
          `pg_ctl stop -m ${mode} failed (exit ${r.code}): ${(r.stderr || r.stdout).trim()}\n--- server log ---\n${await logTail()}`,
        );
      }
    });

  const start = () =>
    serial(async () => {
      alive();
      if ((await status()) === 'running') return;
      await startOn(port);
    });

  let destroying: Promise<void> | undefined;
  const destroy = () =>
    (destroying ??= serial(async () => {
      destroyed = true;
      live.delete(key);
      await run(runner, 'pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', '-t', '60', 'stop'], dir).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }));

  return {
    url,
    port,
    stop,
    start,
    async restart(mode = 'fast') {
      await stop(mode);
      await start();
    },
    destroy,
  };
}
