/**
 * `npm run bench:load -- --replicas N`: the hub as N replicas behind nginx (the three-replica test's
 * harness, test/helpers/replicas.ts: one Postgres, one Redis, nginx routing 2025-era sessions by
 * INSTANCE_NAME), on a throwaway Postgres cluster:
 *
 *   1. for 1 and N replicas, each protocol era: C concurrent MCP clients (the v2 SDK client: pinned
 *      to 2026-07-28, or the 2025 handshake with a session) looping a mix of list and create task
 *      calls for D seconds: throughput, client-observed p50/p95, errors by code;
 *   2. kill: N replicas, 2026-era clients for D seconds, one replica SIGKILLed at D/3: errors by code,
 *      calls that succeeded after the kill, and every acknowledged write checked in the database.
 *
 * This machine has two cores: the figures that matter are correctness and the cost of the stateless
 * era (modern vs legacy p50 on one replica, same run), not scaling. Writes bench/results/load-replicas.{json,md}.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { createCluster } from '../../support/pg-cluster.js';
import { createScratchDatabase } from '../../support/postgres.js';
import { replicasSkipReason, startReplicas, type Replicas } from '../../test/helpers/replicas.js';
import { gitInfo } from '../lib/git.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const ADMIN = 'b'.repeat(40);

export interface ReplicaBenchOptions {
  replicas: number;
  clients: number;
  durationS: number;
  outName: string;
}

interface PhaseFigures {
  phase: string;
  replicas: number;
  era: 'modern' | 'legacy';
  clients: number;
  seconds: number;
  calls: number;
  ok: number;
  callsPerS: number;
  p50Ms: number;
  p95Ms: number;
  errors: Record<string, number>;
  /** Kill phase only. */
  okAfterKill?: number;
  writesAcknowledged?: number;
  writesLost?: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** An MCP client of `era` through nginx, as key `token`. */
async function connect(url: string, token: string, era: 'modern' | 'legacy'): Promise<Client> {
  const client = new Client(
    { name: `bench-${era}`, version: '1' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** What a failed call counts as: the catalogue code of a tool error, else the thrown error's status or name. */
function failureCode(error: unknown): string {
  const e = error as { status?: unknown; code?: unknown; name?: string };
  if (typeof e.status === 'number') return `HTTP ${e.status}`;
  if (e.code !== undefined) return String(e.code);
  return e.name ?? 'Error';
}

async function runPhase(
  rig: Replicas,
  token: string,
  options: { phase: string; era: 'modern' | 'legacy'; clients: number; seconds: number; kill?: () => void },
): Promise<PhaseFigures & { written: string[] }> {
  const clients = await Promise.all(
    Array.from({ length: options.clients }, () => connect(rig.url, token, options.era)),
  );
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const written: string[] = [];
  let calls = 0;
  let ok = 0;
  let okAfterKill = 0;
  let killed = false;
  const started = performance.now();
  const end = started + options.seconds * 1000;
  const killAt = started + (options.seconds * 1000) / 3;
  const worker = async (client: Client, w: number) => {
    for (let n = 0; performance.now() < end; n++) {
      if (options.kill && !killed && performance.now() >= killAt) {
        killed = true;
        options.kill();
      }
      const write = n % 2 === 1;
      const call = write
        ? {
            name: 'devstream_create_task',
            arguments: {
              title: `bench ${options.phase} ${w}.${n}`,
              description: 'd',
              task_type: 'coding',
              priority: 5,
              project: 'Bench',
              phase_name: 'Load',
            },
          }
        : { name: 'devstream_list_tasks', arguments: { project: 'Bench', limit: 10 } };
      const t0 = performance.now();
      calls++;
      try {
        const result = (await client.callTool(call)) as {
          isError?: boolean;
          content?: Array<{ text?: string }>;
          structuredContent?: { task?: { id?: string } };
        };
        if (result.isError) {
          const code = /: ([A-Z_]+): /.exec(result.content?.[0]?.text ?? '')?.[1] ?? 'TOOL_ERROR';
          errors[code] = (errors[code] ?? 0) + 1;
        } else {
          ok++;
          if (killed) okAfterKill++;
          latencies.push(performance.now() - t0);
          if (write && result.structuredContent?.task?.id) written.push(result.structuredContent.task.id);
        }
      } catch (error) {
        const code = failureCode(error);
        errors[code] = (errors[code] ?? 0) + 1;
        // A 2025 session whose replica died: initialize a new one, as a client does on 404.
        if (options.era === 'legacy') {
          await client.close().catch(() => {});
          client = await connect(rig.url, token, options.era).catch(() => client);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  await Promise.all(clients.map((c, w) => worker(c, w)));
  const seconds = (performance.now() - started) / 1000;
  await Promise.allSettled(clients.map((c) => c.close()));
  latencies.sort((a, b) => a - b);
  return {
    phase: options.phase,
    replicas: rig.instances.length,
    era: options.era,
    clients: options.clients,
    seconds: +seconds.toFixed(1),
    calls,
    ok,
    callsPerS: +(ok / seconds).toFixed(1),
    p50Ms: +quantile(latencies, 0.5).toFixed(1),
    p95Ms: +quantile(latencies, 0.95).toFixed(1),
    errors,
    ...(options.kill ? { okAfterKill } : {}),
    written,
  };
}

export async function runReplicaBench(o: ReplicaBenchOptions): Promise<number> {
  const log = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
  const cluster = await createCluster();
  const figures: PhaseFigures[] = [];
  try {
    const skip = replicasSkipReason(cluster.url);
    if (skip) {
      console.error(`bench:load --replicas: ${skip}`);
      return 2;
    }
    for (const count of [...new Set([1, o.replicas])]) {
      const scratch = await createScratchDatabase(cluster.url, `dsh_replicas_${count}`);
      const rig = await startReplicas({
        count,
        databaseUrl: scratch.url,
        env: { ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '1000000', MAX_SESSIONS: '1000' },
      });
      try {
        const made = await fetch(`${rig.url}/api/v1/keys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'bench', scopes: ['read', 'write'] }),
        });
        const token = ((await made.json()) as { token: string }).token;
        for (const era of ['modern', 'legacy'] as const) {
          log(`${count} replica(s), ${era} era: ${o.clients} clients for ${o.durationS} s`);
          const { written: _written, ...f } = await runPhase(rig, token, {
            phase: `steady-${count}-${era}`,
            era,
            clients: o.clients,
            seconds: o.durationS,
          });
          figures.push(f);
          log(`  ${f.callsPerS} calls/s, p50 ${f.p50Ms} ms, p95 ${f.p95Ms} ms, errors ${JSON.stringify(f.errors)}`);
        }
        if (count > 1) {
          log(`${count} replicas, modern era, one replica SIGKILLed at a third of ${o.durationS} s`);
          const victim = rig.instances[count - 1]!;
          const { written, ...f } = await runPhase(rig, token, {
            phase: `kill-${count}`,
            era: 'modern',
            clients: o.clients,
            seconds: o.durationS,
            kill: () => victim.child.kill('SIGKILL'),
          });
          const db = new pg.Client({ connectionString: scratch.url });
          db.on('error', () => {});
          await db.connect();
          const stored = await db
            .query<{ id: string }>('select id::text as id from micro_tasks where id::text = any($1::text[])', [written])
            .finally(() => db.end());
          const found = new Set(stored.rows.map((r) => r.id));
          f.writesAcknowledged = written.length;
          f.writesLost = written.filter((id) => !found.has(id)).length;
          figures.push(f);
          log(
            `  ${f.callsPerS} calls/s, ${f.okAfterKill} ok after the kill, errors ${JSON.stringify(f.errors)}, ` +
              `${f.writesAcknowledged} writes acknowledged, ${f.writesLost} lost`,
          );
        }
      } finally {
        await rig.stop();
        await scratch.drop();
      }
    }
  } finally {
    await cluster.destroy();
  }

  const git = gitInfo(fileURLToPath(new URL('../..', import.meta.url)), { short: true, paths: ['src'] });
  const meta = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
    git,
    options: o,
  };
  const one = (era: string) => figures.find((f) => f.phase === `steady-1-${era}`);
  const md = [
    `# bench:load --replicas ${o.replicas} (${meta.date.slice(0, 10)})`,
    '',
    `Machine: ${meta.machine}. Commit ${git.commit ?? '?'}. nginx in front (test/helpers/replicas.ts), one Postgres 15,`,
    `one Redis; ${o.clients} MCP clients (the v2 SDK client), each looping list/create task calls for ${o.durationS} s.`,
    'Latencies are client-observed, of successful calls.',
    '',
    '| phase | replicas | era | calls/s | p50 ms | p95 ms | ok calls | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...figures.map(
      (f) =>
        `| ${f.phase} | ${f.replicas} | ${f.era === 'modern' ? '2026-07-28' : '2025-11-25 (sessions)'} | ${f.callsPerS} | ${f.p50Ms} | ${f.p95Ms} | ${f.ok} | ${
          Object.entries(f.errors)
            .map(([k, v]) => `${k} × ${v}`)
            .join(', ') || '—'
        } |`,
    ),
    '',
    ...(one('modern') && one('legacy')
      ? [
          `Stateless era's cost on one replica: p50 ${one('modern')!.p50Ms} ms (2026-07-28) vs ${one('legacy')!.p50Ms} ms (2025, session), ` +
            `${one('modern')!.callsPerS} vs ${one('legacy')!.callsPerS} calls/s.`,
        ]
      : []),
    ...figures
      .filter((f) => f.writesAcknowledged !== undefined)
      .map(
        (f) =>
          `Kill phase: ${f.okAfterKill} calls succeeded after the kill; ${f.writesAcknowledged} writes acknowledged, ${f.writesLost} lost.`,
      ),
    '',
  ].join('\n');
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(`${RESULTS_DIR}${o.outName}.json`, JSON.stringify({ meta, figures }, null, 2) + '\n');
  await writeFile(`${RESULTS_DIR}${o.outName}.md`, md);
  console.log(`\n${md}`);
  log(`written: bench/results/${o.outName}.{json,md}`);
  const lost = figures.some((f) => (f.writesLost ?? 0) > 0);
  return lost ? 1 : 0;
}
