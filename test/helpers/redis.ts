import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../support/free-port.js';

/** Where `redis-server` is, or undefined when it is not installed (tests then skip, saying why). */
export const REDIS_SERVER: string | undefined = (() => {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() || undefined : undefined;
})();

export const NO_REDIS_REASON = 'redis-server is not installed (Debian: apt-get install redis-server; .ci/run does)';

export interface TestRedis {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Stops the server (SIGKILL if it does not go on SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Servers still running: killed when the test process exits, so a failed test leaves none behind. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A throwaway redis-server on a free loopback port: no persistence (`--save ''`, no AOF), nothing
 * written outside a temp folder. Resolves once it accepts connections; `port` reuses a port (a
 * restart after stop()).
 */
export async function startRedis(port?: number): Promise<TestRedis> {
  if (!REDIS_SERVER) throw new Error(NO_REDIS_REASON);
  const chosen = port ?? (await freePort());
  const child = spawn(
    REDIS_SERVER,
    [
      '--port',
      String(chosen),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      '/tmp',
      '--protected-mode',
      'yes',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.on('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}): ${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${chosen}`,
    port: chosen,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
