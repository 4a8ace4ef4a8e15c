import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../support/free-port.js';
import { REDIS_SERVER, startRedis, type TestRedis } from './redis.js';
import { serve, type ServedProcess } from './service.js';

/** Where nginx is (PATH or /usr/sbin), or undefined when it is not installed. */
export const NGINX: string | undefined = (() => {
  const found = spawnSync('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim().split('\n')[0] || undefined : undefined;
})();

/** Why a replica test cannot run here, or false when it can. */
export function replicasSkipReason(databaseUrl: string | undefined): string | false {
  if (!databaseUrl) return 'replicas share one Postgres: set DATABASE_URL';
  if (!REDIS_SERVER) return 'redis-server is not installed (Debian: apt-get install redis-server; .ci/run does)';
  if (!NGINX) return 'nginx is not installed (Debian: apt-get install nginx; .ci/run does)';
  return false;
}

export interface Replicas {
  /** nginx in front of the replicas: `http://127.0.0.1:<port>` */
  url: string;
  /** The service processes, in upstream order; nginx's `x-upstream` response header names the one that answered. */
  instances: ServedProcess[];
  redis: TestRedis;
  /** `127.0.0.1:<port>` of instance `i`, as `x-upstream` gives it. */
  address(i: number): string;
  /** nginx's error log so far (for failure messages). */
  nginxLog(): Promise<string>;
  /** Stops nginx, every replica still running, and Redis; removes the temp folder. */
  stop(): Promise<void>;
}

export interface ReplicaOptions {
  /** How many service processes (default 3). */
  count?: number;
  /** The Postgres database they share. */
  databaseUrl: string;
  /** More environment for every replica (ADMIN_TOKEN, RATE_LIMIT_MAX …). */
  env?: Record<string, string>;
}

/** nginx processes still running: killed when the test process exits, so a failed test leaves none behind. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * `count` service processes (`devstream-hub serve`, as README starts it) on one Postgres and one
 * Redis (a throwaway redis-server), behind nginx on a free loopback port: round robin but for 2025-era
 * MCP sessions (routed by the replica name that starts their id, INSTANCE_NAME=r<i>), SSE unbuffered
 * (`proxy_buffering off`), a request that could not reach a replica (refused connection) passed to the
 * next one, the answering replica in an `x-upstream` header. nginx runs in the foreground with its own
 * config, pid file, logs and temp folders in a temp folder.
 */
export async function startReplicas(options: ReplicaOptions): Promise<Replicas> {
  if (!NGINX) throw new Error('nginx is not installed');
  const count = options.count ?? 3;
  const dir = await mkdtemp(join(tmpdir(), 'dsh-replicas-'));
  const redis = await startRedis();
  const instances: ServedProcess[] = [];
  let nginx: ChildProcess | undefined;
  const stop = async () => {
    if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
      const exited = new Promise((resolve) => nginx!.once('exit', resolve));
      nginx.kill('SIGTERM');
      await exited;
    }
    await Promise.all(instances.map((i) => i.stop()));
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const env = {
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: redis.url,
      AUTH: 'required',
      // Requests arrive with nginx's Host (127.0.0.1:<nginx port>); any port of 127.0.0.1 is this machine.
      ALLOWED_HOSTS: '127.0.0.1',
      ...options.env,
    };
    // The first migrates the database; the others then start together (they would wait on its lock anyway).
    // Each is named r<i>: its MCP session ids start with `r<i>.`, which nginx routes on (docs/replicas.md).
    instances.push(await serve({ ...env, INSTANCE_NAME: 'r0' }));
    instances.push(
      ...(await Promise.all(
        Array.from({ length: count - 1 }, (_, i) => serve({ ...env, INSTANCE_NAME: `r${i + 1}` })),
      )),
    );
    const addresses = instances.map((i) => new URL(i.url).host);
    // Per replica: itself, then the others as backups — a dead replica's sessions reach a live one,
    // which answers 404 (session not found), and the client initializes again.
    const perReplica = addresses
      .map(
        (own, i) => `  upstream hub_r${i} {
    server ${own} max_fails=1 fail_timeout=10s;
${addresses
  .filter((a) => a !== own)
  .map((a) => `    server ${a} backup;`)
  .join('\n')}
    keepalive 4;
  }`,
      )
      .join('\n');
    const conf = `
daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream hub {
${addresses.map((a) => `    server ${a} max_fails=1 fail_timeout=10s;`).join('\n')}
    keepalive 16;
  }
${perReplica}
  # A 2025-era MCP session's requests go to the replica whose name starts its id; everything else round robin.
  map $http_mcp_session_id $hub_pool {
${addresses.map((_, i) => `    ~^r${i}\\. hub_r${i};`).join('\n')}
    default hub;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://$hub_pool;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      # Server-sent events (MCP streams) pass as they come.
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
      # A replica that refuses the connection: the next one (a POST not yet sent is safe to pass on).
      proxy_next_upstream error timeout;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`;
    await writeFile(join(dir, 'nginx.conf'), conf);
    const child = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx = child;
    running.add(child);
    let output = '';
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    child.on('exit', () => running.delete(child));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${output}`);
      try {
        if ((await fetch(`${url}/healthz`)).status === 200) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`nginx did not answer: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      url,
      instances,
      redis,
      address: (i) => addresses[i]!,
      nginxLog: () => readFile(join(dir, 'error.log'), 'utf8').catch(() => ''),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
