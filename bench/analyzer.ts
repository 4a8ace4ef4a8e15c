/**
 * Analyzer benchmark (`npm run bench:analyzer`): `analyzeRepository` on this repository, on a
 * generated 2,000-file tree per language (TypeScript, Go, Rust, Java) and on one real checkout per
 * new language passed on the command line (--go, --rust, --java: a folder; nothing of it is
 * written here but its name and commit), each in its own process: files/s, nodes, edges, peak RSS,
 * and for Go, Rust and Java the share of call sites resolved to a node of the repository
 * (lib/call-sites.ts). Then find_symbols quality on natural-language questions about this
 * project's own source: 30 documented functions, each asked for by its doc comment's first
 * sentence without the words of its name, MRR@10 on the analyzer's graph, and on the same graph
 * without doc comments. The graph is uploaded to an in-process server on PGlite, or on Postgres
 * when DATABASE_URL is set. Writes bench/results/analyzer.{json,md}.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join, resolve } from 'node:path';
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
import { callSiteShare, type CallSiteLanguage, type CallSiteReport } from './lib/call-sites.js';
import { generateTree, type GeneratedLanguage } from './lib/generated-trees.js';
import { machine } from './lib/machine.js';
import { scratchPglite, scratchPostgres } from './lib/scratch.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench/results/');
const QUESTIONS = 30;

const USAGE = `npm run bench:analyzer [-- --files 2000] [--go <checkout>] [--rust <checkout>] [--java <checkout>]

Analyzes this repository, a generated tree of --files files per language (TypeScript, Go, Rust,
Java) and the checkouts given (a real Go, Rust and Java repository: give all three for results to
commit), each in a child process, then scores find_symbols on ${QUESTIONS} doc-comment questions
about this project's source.`;

/** The languages whose call sites are counted, and their labels. */
const LANGUAGES: Record<CallSiteLanguage, string> = { go: 'Go', rust: 'Rust', java: 'Java' };
const GENERATED: Record<GeneratedLanguage, string> = { typescript: 'TypeScript', ...LANGUAGES };
const TARGETS = { self_seconds: 60, mrr10: 0.6, generated_files_per_second: 200, peak_rss_mib: 1024 };

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

/** A run of a language the call sites are counted for: its report and the share resolved. */
type CountedRun = RunReport & { calls: CallSiteReport };

/** Analyzes `root` in a child process; for Go, Rust and Java also counts its call sites from the graph it wrote. */
async function run(root: string, out: string, language?: CallSiteLanguage): Promise<CountedRun | RunReport> {
  const report = await runChild(root, out);
  if (!language) return report;
  const commit = JSON.parse(gunzipSync(await readFile(out)).toString('utf8')) as CommitFile;
  return { ...report, calls: await callSiteShare(root, commit, language) };
}

/** A checkout's name and commit (from git, when it is a repository). */
function checkoutOf(dir: string): { name: string; commit: string | null; commit_date: string | null } {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', ['-C', dir, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return null;
    }
  };
  return { name: basename(dir), commit: git('rev-parse', 'HEAD'), commit_date: git('log', '-1', '--format=%cs') };
}

const describeRun = (label: string, a: RunReport & { calls?: CallSiteReport }) =>
  `${label}: ${a.files} files in ${a.seconds} s (${a.files_per_second} files/s), ${a.nodes} nodes, ${a.edges} edges, peak RSS ${a.peak_rss_mib} MiB` +
  (a.calls
    ? `, ${a.calls.resolved} of ${a.calls.sites} call sites resolved (${pct(a.calls.resolved_share)}; ${pct(a.calls.resolved_share_of_naming)} of the ${a.calls.naming_repo_symbol} naming a repository symbol)`
    : '');

const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      files: { type: 'string', default: '2000' },
      go: { type: 'string' },
      rust: { type: 'string' },
      java: { type: 'string' },
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
  const checkouts: Partial<Record<CallSiteLanguage, string>> = {};
  for (const language of Object.keys(LANGUAGES) as CallSiteLanguage[]) {
    const dir = values[language];
    if (dir === undefined) continue;
    if (!(await stat(dir).catch(() => null))?.isDirectory()) {
      console.error(`--${language} ${dir}: not a folder\n\n${USAGE}`);
      return 2;
    }
    checkouts[language] = resolve(dir);
  }
  // Other work on the machine slows every figure: recorded beside them.
  const loadAtStart = os.loadavg()[0]!;
  const tmp = await mkdtemp(join(os.tmpdir(), 'dsh-bench-analyzer-'));
  try {
    const selfFile = join(tmp, 'self.json.gz');
    const self = await runChild(ROOT, selfFile);
    console.log(describeRun('this repository', self));
    const generated: Partial<Record<GeneratedLanguage, RunReport | CountedRun>> = {};
    for (const language of Object.keys(GENERATED) as GeneratedLanguage[]) {
      const tree = join(tmp, `tree-${language}`);
      await generateTree(language, tree, files);
      const counted = language === 'typescript' ? undefined : language;
      generated[language] = await run(tree, join(tmp, `tree-${language}.json.gz`), counted);
      console.log(describeRun(`generated ${GENERATED[language]} tree`, generated[language]));
      await rm(tree, { recursive: true, force: true });
    }
    const real: Partial<Record<CallSiteLanguage, CountedRun & ReturnType<typeof checkoutOf>>> = {};
    for (const [language, dir] of Object.entries(checkouts) as Array<[CallSiteLanguage, string]>) {
      const report = (await run(dir, join(tmp, `${language}.json.gz`), language)) as CountedRun;
      real[language] = { ...checkoutOf(dir), ...report };
      console.log(describeRun(`${LANGUAGES[language]} checkout ${real[language].name}`, report));
    }
    const missing = (Object.keys(LANGUAGES) as CallSiteLanguage[]).filter((l) => !checkouts[l]);
    if (missing.length)
      console.warn(
        `No real ${missing.map((l) => LANGUAGES[l]).join(', ')} repository: pass ${missing.map((l) => `--${l} <checkout>`).join(' ')}.`,
      );

    const q = await quality(selfFile);
    console.log(
      `find_symbols MRR@10 on ${q.questions.length} doc-comment questions (${q.engine}): ${q.withDocs.mrr10} (top 1: ${q.withDocs.top1}); without doc comments ${q.withoutDocs.mrr10}`,
    );

    const results = {
      date: new Date().toISOString(),
      machine: machine(),
      load_average_1m: { start: Math.round(loadAtStart * 100) / 100, end: Math.round(os.loadavg()[0]! * 100) / 100 },
      requested_files: files,
      analyses: { self, generated, real },
      search: {
        engine: q.engine,
        questions: q.questions.length,
        mrr10_with_doc_comments: q.withDocs.mrr10,
        top1_with_doc_comments: q.withDocs.top1,
        mrr10_without_doc_comments: q.withoutDocs.mrr10,
        top1_without_doc_comments: q.withoutDocs.top1,
        asked: q.questions,
      },
      targets: TARGETS,
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    // Results to commit: the default tree size, and a real repository for each language.
    const name =
      files === 2000 && missing.length === 0 ? 'analyzer' : `analyzer-${files}${missing.length ? '-partial' : ''}`;
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
  const t = r.targets;
  const runs: Array<[string, RunReport & { calls?: CallSiteReport }]> = [
    ['this repository', r.analyses.self],
    ...Object.entries(r.analyses.generated).map(
      ([language, a]) => [`generated ${GENERATED[language as GeneratedLanguage]} tree`, a] as [string, RunReport],
    ),
    ...Object.entries(r.analyses.real).map(
      ([language, a]: [string, any]) =>
        [
          `${LANGUAGES[language as CallSiteLanguage]}: ${a.name} @ ${a.commit?.slice(0, 10) ?? '?'} (${a.commit_date ?? '?'})`,
          a,
        ] as [string, RunReport],
    ),
  ];
  const calls = (c?: CallSiteReport) =>
    c
      ? `${c.sites} | ${c.resolved} (${pct(c.resolved_share)}) | ${c.naming_repo_symbol} | ${pct(c.resolved_share_of_naming)}`
      : '– | – | – | –';
  const row = (label: string, a: RunReport & { calls?: CallSiteReport }) =>
    `| ${label} | ${a.files} | ${a.seconds} | ${a.files_per_second} | ${a.nodes} | ${a.edges} | ${a.peak_rss_mib} | ${calls(a.calls)} |`;
  const trees = Object.entries(r.analyses.generated) as Array<[GeneratedLanguage, RunReport]>;
  const slowest = Math.min(...trees.map(([, a]) => a.files_per_second));
  const peak = Math.max(...runs.map(([, a]) => a.peak_rss_mib));
  const s = r.search;
  return [
    `# Analyzer benchmark (${r.date.slice(0, 10)}, ${r.machine.cpus} CPUs, Node ${r.machine.node})`,
    '',
    `Load average (1 min) ${r.load_average_1m.start} at the start, ${r.load_average_1m.end} at the end: other work on the machine slows the figures.`,
    '',
    '| analysis | files | seconds | files/s | nodes | edges | peak RSS MiB | call sites | resolved | naming a repo symbol | resolved of those |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...runs.map(([label, a]) => row(label, a)),
    '',
    `This repository in ${r.analyses.self.seconds} s: target < ${t.self_seconds} s ${ok(r.analyses.self.seconds < t.self_seconds)}. ` +
      `Generated trees (${r.requested_files} files each): slowest ${slowest} files/s, target ≥ ${t.generated_files_per_second} per language ${ok(slowest >= t.generated_files_per_second)}. ` +
      `Peak RSS of any run ${peak} MiB: target < ${t.peak_rss_mib} MiB ${ok(peak < t.peak_rss_mib)}.`,
    '',
    "Call sites (Go, Rust, Java) are counted apart from the analyzer, with its tree-sitter grammars: Go and Rust `call_expression` (not Rust's macros), Java `method_invocation` and `new`. A site is resolved when the node it is in (the innermost whose lines hold it) has a CALLS edge to a node of the repository with the name it calls. Sites calling the standard library or dependencies cannot resolve; 'naming a repo symbol' counts the sites whose called name is the name of one of the repository's symbols.",
    '',
    `| find_symbols on ${s.questions} doc-comment questions (${s.engine}) | MRR@10 | top 1 |`,
    '| --- | --- | --- |',
    `| analyzer graph (doc comments as technicalSummary) | ${s.mrr10_with_doc_comments.toFixed(3)} ${ok(s.mrr10_with_doc_comments >= t.mrr10)} (target ≥ ${t.mrr10}) | ${s.top1_with_doc_comments} |`,
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
