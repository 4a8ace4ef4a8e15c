/**
 * Analyzer benchmark (`npm run bench:analyzer`): `analyzeRepository` on this repository and on a
 * generated 2,000-file TypeScript tree, each in its own process (files/s, nodes, edges, peak RSS),
 * then find_symbols quality on natural-language questions about this project's own source: 30
 * documented functions, each asked for by its doc comment's first sentence without the words of
 * its name, MRR@10 on the analyzer's graph, and on the same graph without doc comments.
 * The graph is uploaded to an in-process server on PGlite, or on Postgres when DATABASE_URL is set.
 * Writes bench/results/analyzer.{json,md}.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import type { CommitFile, GraphNode } from '../src/commit-file.js';
import { commitFileStream } from '../src/analyzer/commit-file-json.js';
import { buildApp } from '../src/app.js';
import { postGraph } from '../src/commands/upload.js';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { identifierWords } from '../src/domain/graphs/search-document.js';
import { testConfig } from '../support/test-config.js';
import { CODE_NOUNS, CODE_VERBS } from './lib/code-words.js';
import { machine } from './lib/machine.js';
import { scratchPglite, scratchPostgres } from './lib/scratch.js';
import { prng } from './lib/seed.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench/results/');
const QUESTIONS = 30;

const USAGE = `npm run bench:analyzer [-- --files 2000]

Analyzes this repository and a generated TypeScript tree of --files files (each in a child
process), then scores find_symbols on ${QUESTIONS} doc-comment questions about this project's source.`;

/** What one analysis run in a child process reports. */
interface RunReport {
  files: number;
  nodes: number;
  edges: number;
  seconds: number;
  files_per_second: number;
  peak_rss_mib: number;
  documented_nodes: number;
}

// ------------------------------------------------------------------------------------------------
// Child mode: `tsx bench/analyzer.ts --child <root> <out.json.gz>` analyzes one folder and prints its report.

async function child(root: string, out: string): Promise<void> {
  const started = performance.now();
  const commit = await analyzeRepository(root);
  const seconds = (performance.now() - started) / 1000;
  const { pipeline } = await import('node:stream/promises');
  const { createGzip } = await import('node:zlib');
  const { createWriteStream } = await import('node:fs');
  await pipeline(commitFileStream(commit), createGzip(), createWriteStream(out));
  const report: RunReport = {
    files: commit.stats.files.total,
    nodes: commit.nodes.length,
    edges: commit.edges.length,
    seconds: Math.round(seconds * 100) / 100,
    files_per_second: Math.round(commit.stats.files.total / seconds),
    // ru_maxrss: the process's peak resident set, in KiB.
    peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
    documented_nodes: commit.stats.documentedNodes,
  };
  process.stdout.write(JSON.stringify(report));
}

function runChild(root: string, out: string): Promise<RunReport> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/analyzer.ts', '--child', root, out], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    proc.stdout.on('data', (c) => (stdout += c));
    proc.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(stdout) as RunReport)
        : reject(new Error(`analysis of ${root} exited with ${code}`)),
    );
  });
}

// ------------------------------------------------------------------------------------------------
// A generated TypeScript tree: folders of files that import earlier files' functions and classes.

async function generateTree(dir: string, files: number, seed = 5): Promise<void> {
  const rand = prng(seed);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const doc = () => `${cap(Array.from({ length: 8 }, () => pick([...CODE_VERBS, ...CODE_NOUNS])).join(' '))}.`;
  const made: Array<{ path: string; fn: string; cls: string }> = [];
  for (let i = 0; i < files; i++) {
    const path = `src/${pick(CODE_NOUNS)}${i % 50}/${pick(CODE_NOUNS)}-${pick(CODE_NOUNS)}-${i}.ts`;
    const fn = `${pick(CODE_VERBS)}${cap(pick(CODE_NOUNS))}${i}`;
    const cls = `${cap(pick(CODE_NOUNS))}${cap(pick(CODE_NOUNS))}Service${i}`;
    const deps = made.length
      ? Array.from({ length: 1 + Math.floor(rand() * 3) }, () => made[Math.floor(rand() * made.length)]!)
      : [];
    const unique = [...new Map(deps.map((d) => [d.path, d])).values()];
    const lines: string[] = [];
    for (const d of unique) {
      let rel = join(dirname(path).replace(/[^/]+/g, '..'), d.path).replace(/\.ts$/, '.js');
      if (!rel.startsWith('.')) rel = `./${rel}`;
      lines.push(`import { ${d.fn}, ${d.cls} } from '${rel}';`);
    }
    const calls = unique.map((d) => `${d.fn}(input)`).join(' + ') || '0';
    lines.push(
      '',
      `/** ${doc()} */`,
      `export interface ${cap(pick(CODE_NOUNS))}Shape${i} {`,
      '  id: string;',
      '  size: number;',
      '}',
      '',
      `/** ${doc()} */`,
      `export function ${fn}(input: number): number {`,
      `  return helper${i}(input) + ${calls};`,
      '}',
      '',
      `const helper${i} = (value: number): number => value * ${i};`,
      '',
      `/** ${doc()} */`,
      `export class ${cls}${unique[0] ? ` extends ${unique[0].cls}` : ''} {`,
      `  /** ${doc()} */`,
      `  ${pick(CODE_VERBS)}(input: number): number {`,
      `    return this.run(input) + ${fn}(input);`,
      '  }',
      '',
      '  run(input: number): number {',
      `    return ${unique.map((d) => `new ${d.cls}().run(input)`).join(' + ') || 'input'};`,
      '  }',
      '}',
      '',
    );
    made.push({ path, fn, cls });
    await mkdir(join(dir, dirname(path)), { recursive: true });
    await writeFile(join(dir, path), lines.join('\n'));
  }
}

// ------------------------------------------------------------------------------------------------
// Search quality.

interface Question {
  target: string;
  name: string;
  query: string;
}

/** The first sentence of a doc comment, as prose (no markdown backticks). */
function firstSentence(doc: string): string {
  const text = doc
    .split(/\n\s*\n/)[0]!
    .replace(/\s+/g, ' ')
    .replace(/`/g, '');
  const end = text.search(/[.!?](\s|$)/);
  return (end >= 0 ? text.slice(0, end) : text).trim();
}

/**
 * 30 documented functions of src/ (a seeded hash of their ids chooses) and their questions: the doc comment's first
 * sentence without any word of the function's name (`listSourceFiles` drops list, source, files),
 * so the name cannot answer it. Sentences left with fewer than 4 words are not used.
 */
function questions(commit: CommitFile, count = QUESTIONS, seed = 'analyzer-bench'): Question[] {
  const candidates: Question[] = [];
  for (const node of commit.nodes) {
    if (node.type !== 'FUNCTION' || !node.filePath.startsWith('src/') || !node.technicalSummary) continue;
    const nameWords = new Set(identifierWords(node.name).split(' '));
    const words = firstSentence(node.technicalSummary)
      .split(' ')
      .filter((w) => {
        const parts = identifierWords(w).split(' ').filter(Boolean);
        return parts.length > 0 && !parts.every((p) => nameWords.has(p));
      });
    if (words.length >= 4) candidates.push({ target: node.id, name: node.name, query: words.join(' ') });
  }
  // Chosen by a hash of the id: new code displaces a few questions instead of reshuffling them all.
  const draw = (q: Question) => createHash('sha256').update(`${seed}:${q.target}`).digest('hex');
  return candidates.sort((a, b) => draw(a).localeCompare(draw(b))).slice(0, count);
}

async function mrr(
  url: string,
  repo: string,
  asked: Question[],
): Promise<{ mrr10: number; top1: number; ranks: Array<number | null> }> {
  let rr = 0;
  let top1 = 0;
  const ranks: Array<number | null> = [];
  for (const q of asked) {
    const response = await fetch(new URL('/api/v1/tools/find_symbols', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: q.query, limit: 10, repo }),
    });
    const body = (await response.json()) as { symbols: Array<{ nodeId: string }> };
    if (!response.ok) throw new Error(`find_symbols: ${response.status} ${JSON.stringify(body)}`);
    const rank = body.symbols.findIndex((s) => s.nodeId === q.target);
    ranks.push(rank >= 0 ? rank + 1 : null);
    if (rank >= 0) rr += 1 / (rank + 1);
    if (rank === 0) top1++;
  }
  return { mrr10: Math.round((rr / asked.length) * 1000) / 1000, top1, ranks };
}

async function quality(selfFile: string) {
  const commit = JSON.parse(gunzipSync(await readFile(selfFile)).toString('utf8')) as CommitFile;
  const asked = questions(commit);
  const databaseUrl = process.env.DATABASE_URL;
  const scratch = databaseUrl ? await scratchPostgres(databaseUrl) : await scratchPglite();
  const db = await openDb(scratch.dbOptions);
  try {
    const { current } = await migrate(db.kysely);
    const app = await buildApp(testConfig(), { db, schemaVersion: current });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${address.port}`;
    try {
      const upload = async (repo: string, body: Readable, gzipped: boolean) => {
        const r = await postGraph({ url, repo, body, gzipped });
        if (!r.ok) throw new Error(`upload ${repo}: ${r.status} ${r.message}`);
      };
      await upload('self', createReadStream(selfFile), true);
      // The same graph as a structure-only analyzer would give it: no doc text anywhere.
      const bare = (n: GraphNode): GraphNode => {
        const { technicalSummary: _, ...rest } = n;
        return rest;
      };
      const nodes = commit.nodes.map(bare);
      await upload('self-without-docs', commitFileStream({ ...commit, nodes, allNodes: nodes }), false);
      const withDocs = await mrr(url, 'self', asked);
      const withoutDocs = await mrr(url, 'self-without-docs', asked);
      return {
        engine: scratch.kind,
        questions: asked.map((q, i) => ({ ...q, rank: withDocs.ranks[i] })),
        withDocs,
        withoutDocs,
      };
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    await scratch.drop();
  }
}

// ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      files: { type: 'string', default: '2000' },
      child: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.child) {
    await child(positionals[0]!, positionals[1]!);
    return 0;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const files = Number(values.files);
  const tmp = await mkdtemp(join(os.tmpdir(), 'dsh-bench-analyzer-'));
  try {
    const selfFile = join(tmp, 'self.json.gz');
    const self = await runChild(ROOT, selfFile);
    console.log(
      `this repository: ${self.files} files in ${self.seconds} s (${self.files_per_second} files/s), ${self.nodes} nodes, ${self.edges} edges, peak RSS ${self.peak_rss_mib} MiB`,
    );
    const tree = join(tmp, 'tree');
    await generateTree(tree, files);
    const generated = await runChild(tree, join(tmp, 'tree.json.gz'));
    console.log(
      `generated tree: ${generated.files} files in ${generated.seconds} s (${generated.files_per_second} files/s), ${generated.nodes} nodes, ${generated.edges} edges, peak RSS ${generated.peak_rss_mib} MiB`,
    );

    const q = await quality(selfFile);
    console.log(
      `find_symbols MRR@10 on ${q.questions.length} doc-comment questions (${q.engine}): ${q.withDocs.mrr10} (top 1: ${q.withDocs.top1}); without doc comments ${q.withoutDocs.mrr10}`,
    );

    const results = {
      date: new Date().toISOString(),
      machine: machine(),
      analyses: { self, generated: { ...generated, requested_files: files } },
      search: {
        engine: q.engine,
        questions: q.questions.length,
        mrr10_with_doc_comments: q.withDocs.mrr10,
        top1_with_doc_comments: q.withDocs.top1,
        mrr10_without_doc_comments: q.withoutDocs.mrr10,
        top1_without_doc_comments: q.withoutDocs.top1,
        asked: q.questions,
      },
      targets: { self_seconds: 60, mrr10: 0.6 },
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    const name = files === 2000 ? 'analyzer' : `analyzer-${files}`;
    await writeFile(join(RESULTS_DIR, `${name}.json`), JSON.stringify(results, null, 2) + '\n');
    await writeFile(join(RESULTS_DIR, `${name}.md`), markdown(results));
    console.log(`\n${markdown(results)}`);
    return 0;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function markdown(r: any): string {
  const ok = (pass: boolean) => (pass ? '✅' : '❌');
  const row = (label: string, a: RunReport) =>
    `| ${label} | ${a.files} | ${a.seconds} | ${a.files_per_second} | ${a.nodes} | ${a.edges} | ${a.peak_rss_mib} |`;
  const s = r.search;
  return [
    `# Analyzer benchmark (${r.date.slice(0, 10)}, ${r.machine.cpus} CPUs, Node ${r.machine.node})`,
    '',
    '| analysis | files | seconds | files/s | nodes | edges | peak RSS MiB |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    row('this repository', r.analyses.self),
    row(`generated TypeScript tree`, r.analyses.generated),
    '',
    `This repository in ${r.analyses.self.seconds} s: target < ${r.targets.self_seconds} s ${ok(r.analyses.self.seconds < r.targets.self_seconds)}.`,
    '',
    `| find_symbols on ${s.questions} doc-comment questions (${s.engine}) | MRR@10 | top 1 |`,
    '| --- | --- | --- |',
    `| analyzer graph (doc comments as technicalSummary) | ${s.mrr10_with_doc_comments.toFixed(3)} ${ok(s.mrr10_with_doc_comments >= r.targets.mrr10)} (target ≥ ${r.targets.mrr10}) | ${s.top1_with_doc_comments} |`,
    `| the same graph without doc comments | ${s.mrr10_without_doc_comments.toFixed(3)} | ${s.top1_without_doc_comments} |`,
    '',
    "Each question is the first sentence of a documented function's doc comment without the words of its name; the questions and ranks are in analyzer.json.",
    '',
  ].join('\n');
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
