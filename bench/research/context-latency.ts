/**
 * Where resolve_context's time goes on one repository's graph (issue 21's latency target): uploads the
 * graph of a bench:context checkout to a service on a scratch database, asks each of its questions
 * `--rounds` times through the REST mirror, and prints client-observed and server (Server-Timing)
 * p50 / p95 per tool. With `--keep` the scratch database and the service stay up for a closer look
 * (statement logs, EXPLAIN) until Ctrl-C. A tool to read, not a benchmark.
 *
 *   DATABASE_URL=… npx tsx bench/research/context-latency.ts --checkouts ../checkouts --repo kysely
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { uploadCheckout } from '../lib/checkout-graph.js';
import { startService } from '../lib/child.js';
import { scratchPglite, scratchPostgres } from '../lib/scratch.js';
import { percentile } from '../lib/stats.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      checkouts: { type: 'string', default: join(ROOT, '../checkouts') },
      repo: { type: 'string', default: 'kysely' },
      rounds: { type: 'string', default: '5' },
      keep: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
    },
  });
  const repo = values.repo!;
  const file = JSON.parse(await readFile(join(ROOT, 'bench/context/questions', `${repo}.json`), 'utf8')) as {
    questions: Array<{ question: string; intent: string }>;
  };
  const scratch = process.env.DATABASE_URL ? await scratchPostgres(process.env.DATABASE_URL) : await scratchPglite();
  const service = await startService({
    cwd: ROOT,
    env: { ...scratch.env, LOG_LEVEL: 'warn', AUTH: 'off', GRAPH_UPLOAD_LIMIT: '1GB', EMBEDDING_PROVIDER: 'none' },
    nodeArgs: values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir=/tmp/context-prof'] : [],
  });
  try {
    const commit = await uploadCheckout(service.url, values.checkouts!, repo);
    console.log(`${repo}: ${commit.nodes.length} nodes on ${scratch.label}; service ${service.url}`);
    const times: Record<
      string,
      {
        client: number[];
        server: number[];
        parts: Record<string, number[]>;
        slow?: Array<{ client: number; timing: string; what: string }>;
      }
    > = {};
    const call = async (tool: string, args: Record<string, unknown>) => {
      const started = performance.now();
      const r = await fetch(`${service.url}/api/v1/tools/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo, ...args }),
      });
      await r.text();
      const client = performance.now() - started;
      const timing = r.headers.get('server-timing') ?? '';
      const parts = new Map([...timing.matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1]!, Number(m[2])]));
      const entry = (times[tool] ??= { client: [], server: [], parts: {} });
      entry.client.push(client);
      (entry.slow ??= []).push({ client, timing, what: String(args.task ?? args.query).slice(0, 60) });
      entry.server.push(parts.get('op') ?? NaN);
      for (const [name, ms] of parts) if (name !== 'op') (entry.parts[name] ??= []).push(ms);
    };
    for (const q of file.questions.slice(0, 5)) await call('resolve_context', { task: q.question, intent: q.intent });
    for (const k of Object.keys(times)) delete times[k];
    for (let round = 0; round < Number(values.rounds); round++)
      for (const q of file.questions) {
        await call('resolve_context', { task: q.question, intent: q.intent });
        await call('find_symbols', { query: q.question, limit: 10 });
      }
    for (const [tool, t] of Object.entries(times)) {
      const f = (xs: number[], p: number) =>
        percentile(
          [...xs].sort((a, b) => a - b),
          p,
        ).toFixed(1);
      console.log(
        `${tool.padEnd(16)} client p50 / p95 ${f(t.client, 50)} / ${f(t.client, 95)} ms   server ${f(t.server, 50)} / ${f(t.server, 95)} ms  (n ${t.client.length})`,
      );
      for (const [name, xs] of Object.entries(t.parts))
        console.log(`  ${name.padEnd(14)} p50 / p95 ${f(xs, 50)} / ${f(xs, 95)} ms`);
      for (const slow of [...(t.slow ?? [])].sort((a, b) => b.client - a.client).slice(0, 6))
        console.log(`  slow ${slow.client.toFixed(1)} ms  ${slow.timing}  ${slow.what}`);
    }
    if (values.keep) {
      console.log('kept: Ctrl-C to stop');
      await new Promise((resolve) => process.once('SIGINT', resolve));
    }
  } finally {
    await service.stop();
    await scratch.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
