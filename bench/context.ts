/**
 * Code-question benchmark (`npm run bench:context`, issue 21): how well resolve_context and
 * find_symbols answer natural-language questions about real repositories. For each question file
 * (bench/context/questions/<repo>.json, format in docs/benchmarks.md) it analyzes the repository's
 * checkout with our analyzer in-process, uploads the graph to the service (a child process on a
 * scratch database) through POST /api/v1/graphs, and asks every question through the REST mirror:
 * ANSWER@1, gold recall in the packet, find_symbols MRR@10, packet tokens, client latency; plus an
 * identifier set (each question's first gold node asked by its name). One run per (backend,
 * embedder, ranker). Writes bench/results/context.{json,md}.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import { commitFileStream } from '../src/analyzer/commit-file-json.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { readPacket } from './lib/context-packet.js';
import {
  BASELINE,
  markdown,
  score,
  summarizeRun,
  TARGETS,
  type IdentifierRecord,
  type QuestionRecord,
  type Report,
  type RunResult,
} from './lib/context-report.js';
import { machine } from './lib/machine.js';
import { scratchPglite, scratchPostgres, type Scratch } from './lib/scratch.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench/results/');
const GLOVE_MODULE = join(ROOT, 'bench/lib/glove-ollama.ts');
const CATEGORIES = ['how', 'where', 'callers', 'impact', 'concept', 'identifier'];
const INTENTS = ['pinpoint', 'reference-list', 'flow', 'overview', 'concept', 'security-audit', 'exploratory'];
const WARMUP_CALLS = 5;

const USAGE = `npm run bench:context [-- options]

  --checkouts <dir>      folder with one checkout per question file, named as its repo
                         (env BENCH_CONTEXT_CHECKOUTS; default ../checkouts beside the project)
  --repo <name>=<path>   a checkout elsewhere (repeatable)
  --questions <dir>      question files (default bench/context/questions)
  --backend <b>          pglite | postgres | both (default: postgres when DATABASE_URL is set, else pglite)
  --embedder <e>         none | glove | <ollama url> | both (= none, then glove); repeatable (default none)
  --ollama-model <name>  the model for an <ollama url> embedder (default $OLLAMA_EMBEDDING_MODEL or nomic-embed-text)
  --ranker <r>           default | legacy | both; repeatable (legacy: DEVLENS_PACKET_RANKER=legacy)
  --embed-timeout <s>    longest wait for the graph's node embeddings (default 900)
  --out <name>           results file name in bench/results/ (default context)

Exit code 0 when every run finished (the figures are reported, not judged), 1 on an error, 2 on bad arguments.`;

class UsageError extends Error {}

// ------------------------------------------------------------------------------------------------
// Question files

interface Question {
  id: string;
  question: string;
  category: string;
  intent: string;
  gold: string[];
  namesSymbol?: boolean;
  note?: string;
}

interface QuestionFile {
  file: string;
  repo: string;
  language: string;
  source: string;
  commit: string;
  questions: Question[];
}

function fail(file: string, field: string, problem: string): never {
  throw new UsageError(`${file}: ${field} ${problem}`);
}

function checkQuestionFile(file: string, data: unknown): QuestionFile {
  const d = data as Record<string, unknown>;
  if (!d || typeof d !== 'object' || Array.isArray(d)) fail(file, 'the file', 'must hold a JSON object');
  for (const key of ['repo', 'language', 'source', 'commit'] as const) {
    if (typeof d[key] !== 'string' || !(d[key] as string).trim()) fail(file, key, 'must be a non-empty string');
  }
  if (!/^[A-Za-z0-9._-]+$/.test(d.repo as string)) fail(file, 'repo', 'must be a folder name (letters, digits, ._-)');
  if (!Array.isArray(d.questions) || d.questions.length === 0) fail(file, 'questions', 'must be a non-empty array');
  const seen = new Set<string>();
  const questions = (d.questions as unknown[]).map((raw, i) => {
    const q = raw as Record<string, unknown>;
    const at = `questions[${i}]`;
    if (!q || typeof q !== 'object') fail(file, at, 'must be an object');
    for (const key of ['id', 'question', 'category', 'intent'] as const) {
      if (typeof q[key] !== 'string' || !(q[key] as string).trim())
        fail(file, `${at}.${key}`, 'must be a non-empty string');
    }
    if (seen.has(q.id as string)) fail(file, `${at}.id`, `repeats ${JSON.stringify(q.id)}`);
    seen.add(q.id as string);
    if (!CATEGORIES.includes(q.category as string))
      fail(file, `${at}.category`, `must be one of ${CATEGORIES.join(', ')}`);
    if (!INTENTS.includes(q.intent as string)) fail(file, `${at}.intent`, `must be one of ${INTENTS.join(', ')}`);
    if (!Array.isArray(q.gold) || q.gold.length === 0 || !q.gold.every((g) => typeof g === 'string' && g))
      fail(file, `${at}.gold`, 'must be a non-empty array of node ids');
    return q as unknown as Question;
  });
  return {
    file,
    repo: d.repo as string,
    language: d.language as string,
    source: d.source as string,
    commit: d.commit as string,
    questions,
  };
}

async function loadQuestions(dir: string): Promise<QuestionFile[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(
      error.code === 'ENOENT' ? `--questions: no folder ${dir}` : `--questions: ${dir}: ${error.message}`,
    );
  });
  const files: QuestionFile[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const file = join(dir, name);
    let data: unknown;
    try {
      data = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      throw new UsageError(`${file}: not valid JSON (${(error as Error).message})`);
    }
    files.push(checkQuestionFile(file, data));
  }
  if (files.length === 0) throw new UsageError(`--questions: no .json question files in ${dir}`);
  const repos = files.map((f) => f.repo);
  const twice = repos.find((r, i) => repos.indexOf(r) !== i);
  if (twice) throw new UsageError(`--questions: two files are for repo ${twice}`);
  return files;
}

// ------------------------------------------------------------------------------------------------
// Checkouts

/** The checkout of each question file; throws one error naming every missing one and how to get it. */
async function locateCheckouts(
  files: QuestionFile[],
  checkouts: string,
  overrides: Map<string, string>,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const missing: string[] = [];
  for (const f of files) {
    const dir = overrides.get(f.repo) ?? join(checkouts, f.repo);
    const info = await stat(dir).catch(() => null);
    if (info?.isDirectory()) {
      found.set(f.repo, dir);
      continue;
    }
    const parent = overrides.has(f.repo) ? resolve(dir, '..') : checkouts;
    const folder = overrides.has(f.repo) ? dir : f.repo;
    missing.push(
      `- ${f.repo}: no checkout at ${dir}. Get it with:\n` +
        `    cd ${parent} && git clone ${f.source} ${folder} && git -C ${folder} checkout ${f.commit}\n` +
        `  (or pass --checkouts <dir> / --repo ${f.repo}=<path>)`,
    );
  }
  if (missing.length) throw new UsageError(`missing checkout(s):\n${missing.join('\n')}`);
  for (const f of files) {
    const dir = found.get(f.repo)!;
    if (!existsSync(join(dir, '.git'))) continue; // a plain folder (git archive): nothing to compare
    const head = await promisify(execFile)('git', ['-C', dir, 'rev-parse', 'HEAD']).then(
      (r) => r.stdout.trim(),
      () => null,
    );
    if (head && head !== f.commit)
      console.warn(
        `warning: ${f.repo}: the checkout at ${dir} is at ${head}, the questions are for ${f.commit} (git -C ${dir} checkout ${f.commit})`,
      );
  }
  return found;
}

// ------------------------------------------------------------------------------------------------
// Graphs

interface AnalyzedRepo {
  file: QuestionFile;
  checkout: string;
  /** The commit file as gzipped JSON, uploaded as it is to each service. */
  body: Buffer;
  nodes: number;
  /** Node id → name (the analyzer's; the uploaded graph holds the same). */
  names: Map<string, string>;
}

async function analyze(file: QuestionFile, checkout: string): Promise<AnalyzedRepo> {
  const started = performance.now();
  const commit = await analyzeRepository(checkout);
  const body = gzipSync(await buffer(commitFileStream(commit)));
  const names = new Map(commit.nodes.map((n) => [n.id, n.name]));
  console.log(
    `analyzed ${file.repo} (${checkout}): ${commit.nodes.length} nodes, ${commit.edges.length} edges in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { file, checkout, body, nodes: commit.nodes.length, names };
}

async function request(
  service: ServiceProcess,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; ms: number; text: string }> {
  const started = performance.now();
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* /metrics is text */
  }
  return { status: response.status, body: parsed, ms, text };
}

async function tool(service: ServiceProcess, name: string, args: Record<string, unknown>) {
  const r = await request(service, 'POST', `/api/v1/tools/${name}`, args);
  if (r.status !== 200) throw new Error(`${name} ${JSON.stringify(args)}: ${r.status} ${r.text.slice(0, 500)}`);
  return r;
}

async function upload(service: ServiceProcess, repo: AnalyzedRepo): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${service.url}/api/v1/graphs?repo=${encodeURIComponent(repo.file.repo)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: repo.body,
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`upload ${repo.file.repo}: ${response.status} ${text.slice(0, 500)}`);
  const b = JSON.parse(text) as { nodes: number; edges: number };
  console.log(
    `  uploaded ${repo.file.repo}: ${b.nodes} nodes, ${b.edges} edges in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** Gold ids of each question that the uploaded graph does not hold (GET /api/v1/nodes/{id} by id). */
async function missingGold(service: ServiceProcess, repo: AnalyzedRepo): Promise<Map<string, string[]>> {
  const known = new Map<string, boolean>();
  const out = new Map<string, string[]>();
  for (const q of repo.file.questions) {
    const missing: string[] = [];
    for (const id of q.gold) {
      if (!known.has(id)) {
        const r = await request(
          service,
          'GET',
          `/api/v1/nodes/${encodeURIComponent(id)}?repo=${encodeURIComponent(repo.file.repo)}`,
        );
        known.set(id, r.status === 200 && r.body?.located === 'id' && r.body?.node?.nodeId === id);
      }
      if (!known.get(id)) missing.push(id);
    }
    if (missing.length) out.set(q.id, missing);
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Embedders

interface Embedder {
  label: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

interface GloveServer {
  url: string;
  model: string;
  dimensions: number;
  close(): Promise<void>;
}

async function startEmbedder(spec: string, ollamaModel: string): Promise<Embedder> {
  if (spec === 'none') return { label: 'none', env: { EMBEDDING_PROVIDER: 'none' }, close: async () => {} };
  if (spec === 'glove') {
    if (!existsSync(GLOVE_MODULE))
      throw new UsageError(
        `--embedder glove needs ${relative(ROOT, GLOVE_MODULE)} (the GloVe loopback Ollama, issue 21), which this checkout lacks`,
      );
    // A specifier in a variable: this file type-checks and runs without that module.
    const specifier = './lib/glove-ollama.js';
    const mod = (await import(specifier)) as {
      startGloveOllama(options?: { cacheDir?: string }): Promise<GloveServer>;
    };
    const glove = await mod.startGloveOllama();
    console.log(`GloVe embedder at ${glove.url}: model ${glove.model}, ${glove.dimensions} dimensions`);
    // The service has no dimension setting: it takes the dimension from the vectors the model returns.
    return {
      label: `glove (${glove.dimensions}-D)`,
      env: { EMBEDDING_PROVIDER: 'ollama', OLLAMA_HOST: glove.url, OLLAMA_EMBEDDING_MODEL: glove.model },
      close: () => glove.close(),
    };
  }
  return {
    label: `ollama ${ollamaModel}`,
    env: { EMBEDDING_PROVIDER: 'ollama', OLLAMA_HOST: spec, OLLAMA_EMBEDDING_MODEL: ollamaModel },
    close: async () => {},
  };
}

const PENDING = 'devstream_graph_node_embeddings_pending';

/** Sum of the gauge's samples in a /metrics text, or null when the service does not export it. */
export function pendingEmbeddings(metrics: string): number | null {
  let total: number | null = null;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(PENDING)) continue;
    const m = /^devstream_graph_node_embeddings_pending(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m) total = (total ?? 0) + Number(m[1]);
  }
  return total;
}

async function waitForNodeEmbeddings(service: ServiceProcess, timeoutMs: number): Promise<RunResult['nodeEmbeddings']> {
  const started = performance.now();
  let last = -1;
  for (;;) {
    const r = await request(service, 'GET', '/metrics');
    if (r.status !== 200) throw new Error(`GET /metrics: ${r.status} ${r.text.slice(0, 300)}`);
    const pending = pendingEmbeddings(r.text);
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (pending === null) {
      console.log(`  the service has no node embeddings (no ${PENDING} in /metrics): asking without them`);
      return { state: 'absent' };
    }
    if (pending === 0) {
      console.log(`  node embeddings done after ${seconds} s`);
      return { state: 'done', seconds };
    }
    if (performance.now() - started > timeoutMs) {
      console.warn(`  warning: ${pending} node embeddings still pending after ${seconds} s: asking anyway`);
      return { state: 'timeout', seconds, pending };
    }
    if (pending !== last) console.log(`  ${pending} node embeddings pending…`);
    last = pending;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// ------------------------------------------------------------------------------------------------
// Asking

async function ask(
  service: ServiceProcess,
  repo: AnalyzedRepo,
  missing: Map<string, string[]>,
): Promise<{ questions: QuestionRecord[]; identifiers: IdentifierRecord[] }> {
  const name = repo.file.repo;
  for (const q of repo.file.questions.slice(0, WARMUP_CALLS)) {
    await tool(service, 'resolve_context', { task: q.question, intent: q.intent, repo: name });
    await tool(service, 'find_symbols', { query: q.question, limit: 10, repo: name });
  }
  const questions: QuestionRecord[] = [];
  for (const q of repo.file.questions) {
    const rc = await tool(service, 'resolve_context', { task: q.question, intent: q.intent, repo: name });
    const fs = await tool(service, 'find_symbols', { query: q.question, limit: 10, repo: name });
    const packet = readPacket(rc.body.packet as string);
    const symbols = (fs.body.symbols as Array<{ nodeId: string }>).map((s) => s.nodeId);
    const gone = missing.get(q.id) ?? [];
    questions.push({
      repo: name,
      id: q.id,
      category: q.category,
      intent: q.intent,
      question: q.question,
      gold: q.gold,
      missingGold: gone,
      answer: packet.answer,
      answerName: packet.answer ? (repo.names.get(packet.answer) ?? null) : null,
      ...score(q.gold, gone, packet.answer, packet.ids, symbols),
      packetNodes: packet.ids.length,
      approxTokens: rc.body.approxTokens as number,
      resolveMs: rc.ms,
      findMs: fs.ms,
    });
  }
  // The identifier set: each question's first gold node (once), asked by its name.
  const identifiers: IdentifierRecord[] = [];
  const asked = new Set<string>();
  for (const q of repo.file.questions) {
    const node = q.gold[0]!;
    const query = repo.names.get(node);
    if (asked.has(node) || query === undefined || missing.get(q.id)?.includes(node)) continue;
    asked.add(node);
    const rc = await tool(service, 'resolve_context', { task: query, intent: 'pinpoint', repo: name });
    const { answer } = readPacket(rc.body.packet as string);
    const answerName = answer ? (repo.names.get(answer) ?? null) : null;
    identifiers.push({
      repo: name,
      fromQuestion: q.id,
      node,
      query,
      answer,
      answerName,
      answerAt1: answer !== null && (answer === node || answerName === query) ? 1 : 0,
      resolveMs: rc.ms,
    });
  }
  return { questions, identifiers };
}

// ------------------------------------------------------------------------------------------------

interface Options {
  checkouts: string;
  overrides: Map<string, string>;
  questionsDir: string;
  backends: Array<'pglite' | 'postgres'>;
  embedders: string[];
  rankers: Array<'default' | 'legacy'>;
  ollamaModel: string;
  embedTimeoutMs: number;
  out: string;
}

function options(argv: string[], databaseUrl: string | undefined): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      checkouts: { type: 'string' },
      repo: { type: 'string', multiple: true },
      questions: { type: 'string' },
      backend: { type: 'string' },
      embedder: { type: 'string', multiple: true },
      ranker: { type: 'string', multiple: true },
      'ollama-model': { type: 'string' },
      'embed-timeout': { type: 'string', default: '900' },
      out: { type: 'string', default: 'context' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  const fromRoot = (p: string) => (isAbsolute(p) ? p : resolve(process.cwd(), p));
  const overrides = new Map<string, string>();
  for (const pair of values.repo ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1) throw new UsageError(`--repo wants name=path, got ${JSON.stringify(pair)}`);
    overrides.set(pair.slice(0, at), fromRoot(pair.slice(at + 1)));
  }
  const backend = values.backend ?? (databaseUrl ? 'postgres' : 'pglite');
  const backends: Options['backends'] =
    backend === 'both'
      ? ['pglite', 'postgres']
      : backend === 'pglite' || backend === 'postgres'
        ? [backend]
        : (() => {
            throw new UsageError(`--backend must be pglite, postgres or both, got ${JSON.stringify(backend)}`);
          })();
  if (backends.includes('postgres') && !databaseUrl)
    throw new UsageError('--backend postgres needs DATABASE_URL (a Postgres server with pgvector)');
  const embedders = (values.embedder ?? ['none']).flatMap((e) => (e === 'both' ? ['none', 'glove'] : [e]));
  for (const e of embedders) {
    if (e === 'none' || e === 'glove') continue;
    let url: URL | null = null;
    try {
      url = new URL(e);
    } catch {
      /* below */
    }
    if (!url || !/^https?:$/.test(url.protocol))
      throw new UsageError(`--embedder must be none, glove, both or an http(s) Ollama URL, got ${JSON.stringify(e)}`);
  }
  if (embedders.includes('glove') && !existsSync(GLOVE_MODULE))
    throw new UsageError(
      `--embedder glove needs ${relative(ROOT, GLOVE_MODULE)} (the GloVe loopback Ollama, issue 21), which this checkout lacks`,
    );
  const rankers = (values.ranker ?? ['default']).flatMap((r) => (r === 'both' ? ['default', 'legacy'] : [r]));
  for (const r of rankers)
    if (r !== 'default' && r !== 'legacy')
      throw new UsageError(`--ranker must be default, legacy or both, got ${JSON.stringify(r)}`);
  const timeout = Number(values['embed-timeout']);
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new UsageError(`--embed-timeout must be a number of seconds, got ${values['embed-timeout']}`);
  if (!/^[A-Za-z0-9._-]+$/.test(values.out!)) throw new UsageError('--out must be a file name without a folder');
  return {
    checkouts: fromRoot(values.checkouts ?? process.env.BENCH_CONTEXT_CHECKOUTS ?? join(ROOT, '../checkouts')),
    overrides,
    questionsDir: fromRoot(values.questions ?? join(ROOT, 'bench/context/questions')),
    backends,
    embedders: [...new Set(embedders)],
    rankers: [...new Set(rankers)] as Options['rankers'],
    ollamaModel: values['ollama-model'] ?? process.env.OLLAMA_EMBEDDING_MODEL ?? 'nomic-embed-text',
    embedTimeoutMs: timeout * 1000,
    out: values.out!,
  };
}

async function main(): Promise<number> {
  const databaseUrl = process.env.DATABASE_URL;
  // The service inherits this process's environment: each run sets exactly what it measures.
  delete process.env.DATABASE_URL;
  delete process.env.DEVLENS_PACKET_RANKER;
  let opts: Options | null;
  try {
    opts = options(process.argv.slice(2), databaseUrl);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!opts) {
    console.log(USAGE);
    return 0;
  }
  const files = await loadQuestions(opts.questionsDir);
  const checkouts = await locateCheckouts(files, opts.checkouts, opts.overrides);
  console.log(`questions: ${files.map((f) => `${f.repo} ${f.questions.length}`).join(', ')} from ${opts.questionsDir}`);
  const repos: AnalyzedRepo[] = [];
  for (const f of files) repos.push(await analyze(f, checkouts.get(f.repo)!));

  const runs: RunResult[] = [];
  const missingGoldReport = new Map<string, { repo: string; question: string; ids: string[] }>();
  for (const spec of opts.embedders) {
    const embedder = await startEmbedder(spec, opts.ollamaModel);
    try {
      for (const backend of opts.backends) {
        const scratch: Scratch = backend === 'postgres' ? await scratchPostgres(databaseUrl!) : await scratchPglite();
        try {
          // One database per (backend, embedder): the graphs are uploaded (and embedded) once, and
          // each ranker is a service restarted on it.
          for (const [i, ranker] of opts.rankers.entries()) {
            const label = `${backend} · embedder ${embedder.label} · ranker ${ranker}`;
            console.log(`\n== ${label} (${scratch.label})`);
            const service = await startService({
              cwd: ROOT,
              env: {
                ...scratch.env,
                ...embedder.env,
                LOG_LEVEL: 'warn',
                AUTH: 'off',
                GRAPH_UPLOAD_LIMIT: '1GB',
                ...(ranker === 'legacy' ? { DEVLENS_PACKET_RANKER: 'legacy' } : {}),
              },
              onLine: (line) => console.log(`  [service] ${line.slice(0, 300)}`),
            });
            try {
              const missing = new Map<string, Map<string, string[]>>();
              for (const repo of repos) {
                if (i === 0) await upload(service, repo);
                const gone = await missingGold(service, repo);
                missing.set(repo.file.repo, gone);
                for (const [question, ids] of gone) {
                  missingGoldReport.set(`${repo.file.repo}/${question}`, { repo: repo.file.repo, question, ids });
                  console.warn(`  warning: ${question}: gold not in the graph: ${ids.join(', ')} (counted as a miss)`);
                }
              }
              const nodeEmbeddings =
                spec === 'none'
                  ? { state: 'none' as const }
                  : await waitForNodeEmbeddings(service, opts.embedTimeoutMs);
              const questions: QuestionRecord[] = [];
              const identifiers: IdentifierRecord[] = [];
              for (const repo of repos) {
                const r = await ask(service, repo, missing.get(repo.file.repo)!);
                questions.push(...r.questions);
                identifiers.push(...r.identifiers);
              }
              const run = summarizeRun(
                { label, backend, embedder: spec, ranker, nodeEmbeddings },
                questions,
                identifiers,
              );
              const o = run.overall;
              console.log(
                `  natural language: n ${o.n}, ANSWER@1 ${o.answer_at_1}, recall ${o.gold_recall}, MRR@10 ${o.find_symbols_mrr10}, ` +
                  `tokens median ${o.packet_tokens.median}, resolve_context p50/p95 ${o.resolve_context_ms.p50}/${o.resolve_context_ms.p95} ms; ` +
                  `identifier set ${run.identifier.answer_at_1} (${run.identifier.n})`,
              );
              runs.push(run);
            } finally {
              await service.stop();
            }
          }
        } finally {
          await scratch.drop();
        }
      }
    } finally {
      await embedder.close();
    }
  }

  const report: Report = {
    date: new Date().toISOString(),
    machine: machine(),
    questions_dir: opts.questionsDir.startsWith(ROOT) ? relative(ROOT, opts.questionsDir) : opts.questionsDir,
    repos: repos.map((r) => ({
      repo: r.file.repo,
      language: r.file.language,
      commit: r.file.commit,
      checkout: r.checkout,
      nodes: r.nodes,
      questions: r.file.questions.length,
    })),
    missing_gold: [...missingGoldReport.values()],
    baseline: BASELINE,
    targets: TARGETS,
    runs,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  const md = markdown(report);
  await writeFile(join(RESULTS_DIR, `${opts.out}.json`), JSON.stringify(report, null, 2) + '\n');
  await writeFile(join(RESULTS_DIR, `${opts.out}.md`), md);
  console.log(`\n${md}`);
  console.log(`wrote bench/results/${opts.out}.json and .md`);
  return 0;
}

if (process.argv[1]?.endsWith('context.ts'))
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(error.message);
        process.exit(2);
      }
      console.error(error);
      process.exit(1);
    },
  );
