import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../support/free-port.js';

/** The service running as a child process (its own event loop), at `url`. */
export interface ServiceProcess {
  url: string;
  pid: number;
  /** The last lines the child wrote (stdout and stderr), for error reports. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node --import tsx src/main.ts serve` in `cwd` with `env` on a free loopback port and
 * waits until GET /readyz answers 200.
 */
export async function startService(options: {
  cwd: string;
  env: Record<string, string>;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
  /** Called with each line the child prints (warnings and errors at LOG_LEVEL=warn). */
  onLine?: (line: string) => void;
}): Promise<ServiceProcess> {
  const port = await freePort();
  // Benchmarks send far more than a client may (RATE_LIMIT_MAX 600/min): no limit unless one is asked for.
  const env: NodeJS.ProcessEnv = {
    RATE_LIMIT_MAX: '1000000',
    ...process.env,
    ...options.env,
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', 'tsx', 'src/main.ts', 'serve'],
    {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (child.pid === undefined) throw new Error('could not start the service process');
  const pid = child.pid;

  const tail: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > 50) tail.shift();
      options.onLine?.(line);
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  let exitCode: number | null | undefined;
  let exitSignal: NodeJS.Signals | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      resolve();
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 5_000): Promise<void> =>
    (stopping ??= (async () => {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    })());

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  try {
    for (;;) {
      if (exitCode !== undefined) {
        throw new Error(`the service exited during startup (code ${exitCode}, signal ${exitSignal})`);
      }
      try {
        const response = await fetch(`${url}/readyz`);
        await response.arrayBuffer();
        if (response.ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline)
        throw new Error(`the service was not ready within ${options.readyTimeoutMs ?? 60_000} ms`);
      await sleep(100);
    }
  } catch (error) {
    await stop(1_000);
    throw new Error(`${(error as Error).message}\n--- service output ---\n${tail.join('\n')}`, { cause: error });
  }
  return { url, pid, output: () => tail.join('\n'), stop };
}
