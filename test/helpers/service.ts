import { spawn, type ChildProcess } from 'node:child_process';
import { after } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/free-port.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Environment for a child service: ours minus anything that would point it elsewhere. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of [
    'DATABASE_URL',
    'REDIS_URL',
    'PORT',
    'HOST',
    'DATA_DIR',
    'MCP_STATELESS',
    'ALLOWED_HOSTS',
    'ALLOWED_ORIGINS',
    'AUTH',
    'ADMIN_TOKEN',
    'RATE_LIMIT_MAX',
    'RATE_LIMIT_WINDOW',
    'BODY_LIMIT',
    'MAX_SESSIONS',
    'METRICS_TOKEN',
    'DB_CONNECT_TIMEOUT_S',
    'SHUTDOWN_TIMEOUT_S',
  ])
    delete env[key];
  for (const key of Object.keys(env)) if (key.startsWith('OLLAMA_') || key.startsWith('EMBEDDING_')) delete env[key];
  return { ...env, LOG_LEVEL: 'warn', EMBEDDING_PROVIDER: 'none', ...extra };
}

/**
 * The command as `npm start` and bin/devstream-hub.js run it from a checkout: src/ as plain
 * JavaScript (scripts/start.js), not through tsx, whose loader thread costs each process ~1 s of CPU.
 */
export const CLI = [join(ROOT, 'scripts', 'start.js')];

/** `devstream-hub <args>` to completion, in the repository's root or `options.cwd`. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      cwd: options.cwd ?? ROOT,
      env: childEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServedProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr: its JSON log lines). */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Resolves once GET /readyz answers 200 (throws when the process exits or `timeoutMs` passes). */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Services still running: killed after the file's last test, so a failed test leaves none behind.
 * A child left running holds its pipes open, and with them the test file's process: the whole run
 * then waits for it (a CI run timed out at 90 min on one).
 */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** `devstream-hub serve` as its own process on a free loopback port; waits for /readyz unless told not to. */
export async function serve(
  env: Record<string, string>,
  options: { waitReady?: boolean } = {},
): Promise<ServedProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, CLI, {
    cwd: ROOT,
    env: childEnv({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const ready = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}): ${output}`);
      try {
        if ((await fetch(`${url}/readyz`)).status === 200) return;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`serve did not become ready: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const served: ServedProcess = {
    url,
    child,
    output: () => output,
    exited,
    ready,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  if (options.waitReady !== false) {
    try {
      await ready();
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }
  return served;
}
