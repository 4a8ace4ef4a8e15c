/**
 * Code-graph benchmark (`npm run bench:graphs`): uploads of real and synthetic graphs (time, the
 * service's peak RSS), latency of the DevLens tools at 50k nodes, find_symbols quality on the
 * kysely gold set (MRR@10 per kind), and packet size against the files a packet names.
 * Postgres when DATABASE_URL is set (the figures in the README), else PGlite.
 * Writes bench/results/graphs.{json,md}.
 */
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { INTENTS } from '../src/domain/graphs/resolve-context.js';
import { CODE_NOUNS, CODE_VERBS } from './lib/code-words.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { machine } from './lib/machine.js';
import { scratchPglite, scratchPostgres } from './lib/scratch.js';
import { rounded, summarize, type Summary } from './lib/stats.js';
import { prng } from './lib/seed.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FIXTURES = join(ROOT, '../shared/fixtures/graphs/');
const GOLD = join(ROOT, '../shared/bench/code-search/kysely-gold.json');
const RESULTS_DIR = join(ROOT, 'bench/results/');

const USAGE = `npm run bench:graphs [-- --nodes 50000 --calls 200]

Uploads kysely, theia and a synthetic graph of --nodes nodes to a service on a scratch database
(Postgres when DATABASE_URL is set, else PGlite), then times each DevLens tool --calls times on the
synthetic graph and scores find_symbols on ../shared/bench/code-search/kysely-gold.json.`;

/** Peak resident memory of a process so far (VmHWM), in MiB. */
async function peakRss(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return null;
  }
}

async function upload(
  service: ServiceProcess,
  file: string,
  repo: string,
): Promise<{ seconds: number; nodes: number; edges: number; graphId: string; commitHash: string }> {
  const gz = file.endsWith('.gz');
  const started = performance.now();
  const response = await fetch(`${service.url}/api/v1/graphs?repo=${encodeURIComponent(repo)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(gz ? { 'content-encoding': 'gzip' } : {}) },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const body = (await response.json()) as any;
  if (response.status !== 201) throw new Error(`upload ${repo}: ${response.status} ${JSON.stringify(body)}`);
  return {
    seconds: (performance.now() - started) / 1000,
    nodes: body.nodes,
    edges: body.edges,
    graphId: body.graphId,
    commitHash: body.commitHash,
  };
}

async function tool(
  service: ServiceProcess,
  name: string,
  args: Record<string, unknown>,
): Promise<{ body: any; serverMs: number; clientMs: number }> {
  const started = performance.now();
  const response = await fetch(`${service.url}/api/v1/tools/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const body = (await response.json()) as any;
  const clientMs = performance.now() - started;
  if (response.status !== 200) throw new Error(`${name}: ${response.status} ${JSON.stringify(body)}`);
  const serverMs = Number(/op;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '')?.[1] ?? Number.NaN);
  return { body, serverMs, clientMs };
}

// ------------------------------------------------------------------------------------------------
// Synthetic graph: files of 5–50 symbols with camelCase names, a power-law call graph.

export function syntheticGraph(nodes: number, seed = 7): string {
  const rand = prng(seed);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const out: any[] = [];
  const edges: any[] = [];
  const callable: string[] = [];
  const targets: string[] = []; // preferential attachment: a node appears once per call it received, plus once
  let fileNo = 0;
  while (out.length < nodes) {
    const dir = `src/${pick(CODE_NOUNS)}${fileNo % 40}`;
    const path = `${dir}/${pick(CODE_NOUNS)}${cap(pick(CODE_NOUNS))}${fileNo}.ts`;
    fileNo++;
    const symbols = 5 + Math.floor(rand() * 46);
    const fileId = `file::${path}`;
    out.push({
      id: fileId,
      name: path.split('/').pop(),
      type: 'FILE',
      filePath: path,
      startLine: 1,
      endLine: symbols * 12 + 1,
      metadata: {},
    });
    let line = 2;
    let className: string | null = null;
    for (let s = 0; s < symbols && out.length < nodes; s++) {
      const name = `${pick(CODE_VERBS)}${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}${s}`;
      let id: string;
      let type: string;
      if (s % 10 === 0) {
        className = `${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}Service${fileNo}`;
        id = `${path}::${className}`;
        type = 'CLASS';
      } else if (className && s % 10 < 5) {
        id = `${path}::${className}.${name}`;
        type = 'METHOD';
      } else {
        id = `${path}::${name}`;
        type = 'FUNCTION';
      }
      const docWords = Array.from({ length: 8 }, () => pick([...CODE_VERBS, ...CODE_NOUNS])).join(' ');
      const rawCode = `/** ${cap(docWords)}. */\nexport function ${name}(input: ${cap(pick(CODE_NOUNS))}) {\n  const ${pick(CODE_NOUNS)} = ${pick(CODE_VERBS)}${cap(pick(CODE_NOUNS))}(input);\n  return ${pick(CODE_NOUNS)};\n}`;
      out.push({
        id,
        name: id.split('::')[1],
        type,
        filePath: path,
        startLine: line,
        endLine: line + 10,
        rawCode,
        score: rand() * 5,
        metadata: { exported: true },
      });
      line += 12;
      if (type !== 'CLASS') {
        callable.push(id);
        targets.push(id);
      }
    }
  }
  for (const from of callable) {
    const calls = Math.floor(rand() * 4);
    for (let c = 0; c < calls; c++) {
      const to = targets[Math.floor(rand() * targets.length)]!;
      if (to === from) continue;
      edges.push({ from, to, type: 'CALLS', metadata: { calledName: to.split('::')[1] } });
      targets.push(to);
    }
  }
  const files = out.filter((n) => n.type === 'FILE');
  for (const f of files) {
    for (let i = 0; i < 3; i++)
      edges.push({ from: f.id, to: files[Math.floor(rand() * files.length)]!.id, type: 'IMPORTS' });
  }
  return JSON.stringify({
    commitHash: `synthetic${nodes}`,
    analyzedAt: new Date().toISOString(),
    nodes: out,
    edges,
    stats: { synthetic: true },
  });
}

// ------------------------------------------------------------------------------------------------

interface Gold {
  query: string;
  targets: string[];
  kind: 'nl' | 'partial' | 'ident';
}

async function quality(service: ServiceProcess) {
  const gold = JSON.parse(await readFile(GOLD, 'utf8')) as Gold[];
  const byKind: Record<string, { n: number; rr: number; hit1: number }> = {};
  const misses: Array<{ query: string; kind: string; rank: number | null }> = [];
  for (const g of gold) {
    const { body } = await tool(service, 'find_symbols', { query: g.query, limit: 10, repo: 'kysely' });
    const ids = (body.symbols as any[]).map((s) => s.nodeId);
    const rank = ids.findIndex((id) => g.targets.includes(id));
    const k = (byKind[g.kind] ??= { n: 0, rr: 0, hit1: 0 });
    k.n++;
    if (rank >= 0) k.rr += 1 / (rank + 1);
    if (rank === 0) k.hit1++;
    if (rank !== 0) misses.push({ query: g.query, kind: g.kind, rank: rank >= 0 ? rank + 1 : null });
  }
  const mrr = Object.fromEntries(
    Object.entries(byKind).map(([kind, v]) => [
      kind,
      { questions: v.n, mrr10: Math.round((v.rr / v.n) * 1000) / 1000, top1: v.hit1 },
    ]),
  );
  return { mrr, misses: misses.filter((m) => m.kind !== 'nl') };
}

/** Packet tokens against the tokens of the code of the files the packet names (their symbols' code). */
async function packetSizes(service: ServiceProcess, db: { fileTokens: Map<string, number> }) {
  const gold = JSON.parse(await readFile(GOLD, 'utf8')) as Gold[];
  const ratios: number[] = [];
  const packets: number[] = [];
  for (const g of gold.filter((x) => x.kind === 'nl').slice(0, 20)) {
    const { body } = await tool(service, 'resolve_context', { task: g.query, repo: 'kysely' });
    const files = new Set<string>();
    for (const line of (body.packet as string).split('\n')) {
      const m = /^(\S+\.[a-z]+) {2}N\d/.exec(line);
      if (m) files.add(m[1]!);
    }
    const fileTokens = [...files].reduce((sum, f) => sum + (db.fileTokens.get(f) ?? 0), 0);
    packets.push(body.approxTokens);
    if (fileTokens > 0) ratios.push(body.approxTokens / fileTokens);
  }
  ratios.sort((a, b) => a - b);
  return {
    tasks: packets.length,
    packet_tokens: rounded(summarize(packets)),
    ratio_to_files_median: Math.round(ratios[Math.floor(ratios.length / 2)]! * 1000) / 1000,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '50000' },
      calls: { type: 'string', default: '200' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const nodes = Number(values.nodes);
  const calls = Number(values.calls);
  const databaseUrl = process.env.DATABASE_URL;
  const scratch = databaseUrl ? await scratchPostgres(databaseUrl) : await scratchPglite();
  const tmp = await mkdtemp(join(os.tmpdir(), 'dsh-bench-graphs-'));
  let service: ServiceProcess | undefined;
  try {
    console.log(`Database: ${scratch.label}`);
    service = await startService({
      cwd: ROOT,
      env: { ...scratch.env, LOG_LEVEL: 'warn', EMBEDDING_PROVIDER: 'none', GRAPH_UPLOAD_LIMIT: '1GB' },
    });
    const rssAtStart = await peakRss(service.pid);

    // Uploads.
    const synthetic = join(tmp, `synthetic-${nodes}.json.gz`);
    const text = syntheticGraph(nodes);
    await writeFile(synthetic, gzipSync(text));
    const files: Array<[string, string, string]> = [
      ['kysely', `${FIXTURES}kysely/478ec67b2de2568f5590a015d3e120644e81bd87.json.gz`, 'kysely (2,571 nodes, gzip)'],
      ['theia', await theiaFile(), 'theia (25,279 nodes, 131 MB unpacked, gzip)'],
      [
        'synthetic',
        synthetic,
        `synthetic (${nodes.toLocaleString('en')} nodes, ${(text.length / 2 ** 20).toFixed(0)} MB unpacked, gzip)`,
      ],
    ];
    const uploads: Record<string, unknown> = {};
    for (const [repo, file, label] of files) {
      const r = await upload(service, file, repo);
      const rss = await peakRss(service.pid);
      uploads[repo] = {
        label,
        seconds: Math.round(r.seconds * 10) / 10,
        nodes: r.nodes,
        edges: r.edges,
        service_peak_rss_mib: rss && Math.round(rss),
      };
      console.log(
        `upload ${label}: ${r.seconds.toFixed(1)} s, ${r.nodes} nodes, ${r.edges} edges; service peak RSS ${rss?.toFixed(0)} MiB`,
      );
    }

    // Latency on the synthetic graph.
    const synth = JSON.parse(text) as { nodes: Array<{ id: string; name: string; type: string }> };
    const rand = prng(11);
    const named = synth.nodes.filter((n) => n.type !== 'FILE');
    const pickNode = () => named[Math.floor(rand() * named.length)]!;
    const words = () =>
      `${CODE_VERBS[Math.floor(rand() * CODE_VERBS.length)]} ${CODE_NOUNS[Math.floor(rand() * CODE_NOUNS.length)]} ${CODE_NOUNS[Math.floor(rand() * CODE_NOUNS.length)]}`;
    const cases: Array<[string, string, () => Record<string, unknown>]> = [
      [
        'find_symbols (exact name)',
        'find_symbols',
        () => ({ query: pickNode().name.split('.').pop(), repo: 'synthetic' }),
      ],
      ['find_symbols (words)', 'find_symbols', () => ({ query: words(), repo: 'synthetic' })],
      ...INTENTS.map((intent): [string, string, () => Record<string, unknown>] => [
        `resolve_context ${intent}`,
        'resolve_context',
        () => ({ task: words(), intent, repo: 'synthetic' }),
      ]),
      ['get_node', 'get_node', () => ({ node: pickNode().id, repo: 'synthetic' })],
      ['impact (upstream, radius 2)', 'impact', () => ({ target: pickNode().id, repo: 'synthetic' })],
    ];
    const latency: Record<string, { client: Summary; server: Summary }> = {};
    for (const [label, name, args] of cases) {
      const client: number[] = [];
      const server: number[] = [];
      for (let i = 0; i < calls + 20; i++) {
        const r = await tool(service, name, args());
        if (i < 20) continue;
        client.push(r.clientMs);
        server.push(r.serverMs);
      }
      latency[label] = { client: rounded(summarize(client)), server: rounded(summarize(server)) };
      console.log(
        `${label.padEnd(34)} server p50 ${latency[label]!.server.p50.toFixed(1)} p95 ${latency[label]!.server.p95.toFixed(1)} ms · client p95 ${latency[label]!.client.p95.toFixed(1)}`,
      );
    }

    // Quality on kysely, and packet size against the files it names.
    const q = await quality(service);
    console.log(`find_symbols MRR@10 on kysely-gold: ${JSON.stringify(q.mrr)}`);
    const kysely = JSON.parse(gunzipSync(await readFile(files[0]![1])).toString('utf8')) as {
      nodes: Array<{ type: string; filePath: string; rawCode?: string }>;
    };
    const fileTokens = new Map<string, number>();
    for (const n of kysely.nodes) {
      // A file's code ≈ its top-level symbols' code (methods are inside their classes).
      if (n.type === 'FILE' || n.type === 'METHOD' || !n.rawCode) continue;
      fileTokens.set(n.filePath, (fileTokens.get(n.filePath) ?? 0) + Math.ceil(n.rawCode.length / 4));
    }
    const sizes = await packetSizes(service, { fileTokens });
    console.log(`packets: ${JSON.stringify(sizes)}`);
    const rssAtEnd = await peakRss(service.pid);

    const results = {
      date: new Date().toISOString(),
      machine: machine(),
      engine: scratch.kind,
      uploads,
      service_peak_rss_mib: { start: rssAtStart && Math.round(rssAtStart), end: rssAtEnd && Math.round(rssAtEnd) },
      latency_nodes: nodes,
      latency,
      quality: q,
      packets: sizes,
      targets: {
        upload_seconds_50k: 30,
        upload_peak_rss_mib: 1024,
        find_symbols_p95_ms: 15,
        resolve_context_p95_ms: 60,
        ident_mrr: 1.0,
        partial_mrr: 0.93,
      },
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    const name = nodes === 50_000 && scratch.kind === 'postgres' ? 'graphs' : `graphs-${scratch.kind}-${nodes}`;
    await writeFile(join(RESULTS_DIR, `${name}.json`), JSON.stringify(results, null, 2) + '\n');
    await writeFile(join(RESULTS_DIR, `${name}.md`), markdown(results));
    console.log(`\n${markdown(results)}`);
    return 0;
  } finally {
    await service?.stop();
    await scratch.drop();
    await rm(tmp, { recursive: true, force: true });
  }
}

async function theiaFile(): Promise<string> {
  const dir = `${FIXTURES}theia/`;
  const { readdir } = await import('node:fs/promises');
  const file = (await readdir(dir)).find((f) => f.endsWith('.json.gz'));
  if (!file) throw new Error(`no theia commit file in ${dir}`);
  return dir + file;
}

function markdown(r: any): string {
  const ok = (value: number, limit: number, higher = false) =>
    (higher ? value >= limit : value < limit) ? '✅' : '❌';
  const lines = [
    `# Code-graph benchmark (${r.date.slice(0, 10)}, ${r.engine})`,
    '',
    '| upload | seconds | nodes | edges | service peak RSS MiB |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const u of Object.values(r.uploads) as any[])
    lines.push(`| ${u.label} | ${u.seconds} | ${u.nodes} | ${u.edges} | ${u.service_peak_rss_mib} |`);
  lines.push(
    '',
    `| tool at ${r.latency_nodes.toLocaleString('en')} nodes | server p50 / p95 ms | client p50 / p95 ms | target p95 |`,
    '| --- | --- | --- | --- |',
  );
  for (const [label, s] of Object.entries(r.latency) as Array<[string, any]>) {
    const target = label.startsWith('find_symbols') ? 15 : label.startsWith('resolve_context') ? 60 : null;
    lines.push(
      `| ${label} | ${s.server.p50.toFixed(1)} / ${s.server.p95.toFixed(1)} | ${s.client.p50.toFixed(1)} / ${s.client.p95.toFixed(1)} | ${target ? `< ${target} ${ok(s.server.p95, target)}` : '—'} |`,
    );
  }
  lines.push('', '| find_symbols on kysely-gold | questions | MRR@10 | top 1 |', '| --- | --- | --- | --- |');
  for (const [kind, v] of Object.entries(r.quality.mrr) as Array<[string, any]>)
    lines.push(`| ${kind} | ${v.questions} | ${v.mrr10.toFixed(3)} | ${v.top1} |`);
  lines.push(
    '',
    `Packets (resolve_context on ${r.packets.tasks} kysely questions): ${r.packets.packet_tokens.p50} tokens median; median ratio to the named files' code ${r.packets.ratio_to_files_median}.`,
  );
  return lines.join('\n') + '\n';
}

if (process.argv[1]?.endsWith('graphs.ts'))
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
