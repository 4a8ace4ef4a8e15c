/**
 * Memory benchmark: `npm run bench:memory` (not part of `npm test`).
 *
 * Quality — LoCoMo (../shared/bench/locomo): every conversation is loaded as its own project through
 * the real service (REST), every question is searched in its own project (limit 10), and Recall@5,
 * Recall@10 (share of a question's evidence turns found in the top k) and MRR (first evidence turn
 * within the top 10) are reported overall and per category, keyword-only (EMBEDDING_PROVIDER=none)
 * and, with an embedder (`--embedder`: a real Ollama at OLLAMA_HOST when one answers, the default;
 * `glove`: GloVe word vectors served as Ollama on loopback, bench/lib/glove-ollama.ts; `fake`: the
 * fake embedder of the tests), the vector branch alone (SEARCH_KEYWORD_WEIGHT=0) and hybrid.
 *
 * Speed — 100,000 memories with 768-D vectors from the fake embedder (an HTTP server in this
 * process; the service's real `ollama` client calls it), on Postgres: bulk store throughput, then
 * p50/p95 of store and of search (hybrid and keyword-only, with and without filters), measured by
 * the client and by the service itself without the embedder call (its Server-Timing header).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:54329/postgres npm run bench:memory
 *   npm run bench:memory -- --quality            LoCoMo only (PGlite when DATABASE_URL is unset)
 *   npm run bench:memory -- --quality --embedder glove [--questions 300] [--one-project]
 *   npm run bench:memory -- --speed --memories 20000
 */
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { FakeOllama } from '../support/fake-ollama.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { dialect, LOCOMO_DIR, readJsonl, type Question, type Turn } from './lib/locomo.js';
import { machine } from './lib/machine.js';
import {
  loadLocomo,
  LOCOMO_ONE_PROJECT,
  locomoProject,
  pool,
  post,
  spread,
  startEmbedder,
  waitForEmbeddings,
  type EmbedderKind,
} from './lib/memory-service.js';
import { scratchPglite, scratchPostgres, type Scratch } from './lib/scratch.js';
import { rounded, summarize, type Summary } from './lib/stats.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const QUALITY_TARGET = { recall10: 0.65, mrr: 0.5 };
const SPEED_TARGET_MS = { search: 20, store: 10 };
const CONTENT_TYPES = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;

const USAGE = `Usage: npm run bench:memory [-- options]

  --quality           LoCoMo retrieval quality only
  --embedder E        the embedder of the quality run's vector and hybrid runs: ollama (default: a real
                      Ollama at OLLAMA_HOST, skipped when none answers), glove (GloVe 100-D word vectors,
                      installed into node_modules/.cache/devstream-bench/glove on first use, served as
                      Ollama on loopback) or fake (the tests' fake embedder, 768-D bags of hashed words)
  --questions N       score only N of the 1,536 LoCoMo questions (evenly spread; every turn is loaded)
  --one-project       every conversation in one project (5,882 memories, stored one conversation after
                      another), each question searched in it: a larger scope, where a question's words
                      are common (writes memory-quality-one-project.*)
  --speed             speed at scale only (needs DATABASE_URL)
  --memories N        memories for the speed run (default 100000)
  --concurrency N     parallel stores while loading (default 8)
  --searches N        measured searches per case (default 300)
  --stores N          measured single stores at full size (default 300)
  -h, --help          this text

DATABASE_URL: a Postgres server (with pgvector) on which the benchmark may create and drop a scratch
database. OLLAMA_HOST (optional): a real Ollama with OLLAMA_EMBEDDING_MODEL pulled, for the hybrid
quality run.`;

// ------------------------------------------------------------------------------------------------
// Quality

interface QualityScores {
  questions: number;
  recall5: number;
  recall10: number;
  mrr: number;
  by_category: Record<string, { questions: number; recall5: number; recall10: number; mrr: number }>;
}

async function scoreQuestions(
  url: string,
  questions: Question[],
  memoryOf: Map<string, string>,
  projectOf: (conv: string) => string,
): Promise<{ scores: QualityScores; method: string }> {
  const per: Array<{ category: number; r5: number; r10: number; rr: number }> = [];
  const methods = new Set<string>();
  await pool(questions.length, 4, async (i) => {
    const q = questions[i]!;
    const r = await post(url, '/api/v1/memories/search', {
      query: q.question.slice(0, 2000),
      project: projectOf(q.conv),
      limit: 10,
    });
    if (r.status !== 200) throw new Error(`search failed: ${r.status} ${JSON.stringify(r.body)}`);
    methods.add(r.body.method);
    const ranked: string[] = r.body.results.map((h: { memory_id: string }) => h.memory_id);
    const wanted = q.evidence.map((e) => memoryOf.get(e)).filter((m): m is string => m !== undefined);
    const found = (k: number) =>
      wanted.length === 0 ? 0 : wanted.filter((m) => ranked.slice(0, k).includes(m)).length / wanted.length;
    const first = ranked.findIndex((m) => wanted.includes(m));
    per[i] = { category: q.category, r5: found(5), r10: found(10), rr: first >= 0 ? 1 / (first + 1) : 0 };
  });
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const group = (rows: typeof per) => ({
    questions: rows.length,
    recall5: round(mean(rows.map((r) => r.r5))),
    recall10: round(mean(rows.map((r) => r.r10))),
    mrr: round(mean(rows.map((r) => r.rr))),
  });
  const by_category: QualityScores['by_category'] = {};
  for (const c of [1, 2, 3, 4]) by_category[String(c)] = group(per.filter((r) => r.category === c));
  return { scores: { ...group(per), by_category }, method: [...methods].join('+') };
}

async function runQuality(
  scratch: Scratch,
  options: { concurrency: number; embedder: EmbedderKind; questions?: number | undefined; oneProject: boolean },
): Promise<Record<string, unknown>> {
  // One project: its memories in one order of storing, so one conversation after another.
  const concurrency = options.oneProject ? 1 : options.concurrency;
  const projectOf = options.oneProject ? () => LOCOMO_ONE_PROJECT : locomoProject;
  const turns = await readJsonl<Turn>(`${LOCOMO_DIR}corpus.jsonl`);
  const allQuestions = await readJsonl<Question>(`${LOCOMO_DIR}queries.jsonl`);
  const questions = spread(allQuestions, options.questions);
  console.log(
    `LoCoMo: ${turns.length} turns in ${new Set(turns.map((t) => t.conv)).size} conversations, ${questions.length} of ${allQuestions.length} questions`,
  );
  const keywordService = await startService({
    cwd: ROOT,
    env: { ...scratch.env, EMBEDDING_PROVIDER: 'none', LOG_LEVEL: 'warn' },
  });
  const runs: Record<string, unknown> = {};
  let memoryOf: Map<string, string>;
  try {
    const t0 = performance.now();
    memoryOf = await loadLocomo(keywordService.url, turns, concurrency, {}, projectOf);
    console.log(`loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const keyword = await scoreQuestions(keywordService.url, questions, memoryOf, projectOf);
    runs.keyword = { method: keyword.method, ...keyword.scores };
    printQuality('keyword-only (EMBEDDING_PROVIDER=none)', keyword.scores);
  } finally {
    await keywordService.stop();
  }
  // The same without session context, to show what BM25+ alone gives.
  const plainService = await startService({
    cwd: ROOT,
    env: { ...scratch.env, EMBEDDING_PROVIDER: 'none', SEARCH_NEIGHBOR_WEIGHT: '0', LOG_LEVEL: 'warn' },
  });
  try {
    const plain = await scoreQuestions(plainService.url, questions, memoryOf, projectOf);
    runs.keyword_without_session_context = { method: plain.method, ...plain.scores };
    printQuality('keyword-only, SEARCH_NEIGHBOR_WEIGHT=0', plain.scores);
  } finally {
    await plainService.stop();
  }
  const embedder = await startEmbedder(options.embedder);
  if (embedder) {
    try {
      const embedEnv = { ...scratch.env, ...embedder.env, EMBEDDING_PROVIDER: 'ollama', LOG_LEVEL: 'warn' };
      // The first start embeds every memory (the worker, in the background); the vector-only run
      // reuses the vectors. Vector-only is the service with the keyword branch's weight at 0.
      const hybridService = await startService({ cwd: ROOT, env: embedEnv });
      try {
        const t0 = performance.now();
        await waitForEmbeddings(hybridService.url, 60 * 60_000);
        console.log(`\nembedded by ${embedder.label} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        const hybrid = await scoreQuestions(hybridService.url, questions, memoryOf, projectOf);
        runs.hybrid = { method: hybrid.method, model: embedder.model, ...hybrid.scores };
        printQuality(`hybrid (${embedder.label})`, hybrid.scores);
      } finally {
        await hybridService.stop();
      }
      const vectorService = await startService({ cwd: ROOT, env: { ...embedEnv, SEARCH_KEYWORD_WEIGHT: '0' } });
      try {
        const vector = await scoreQuestions(vectorService.url, questions, memoryOf, projectOf);
        runs.vector = { method: `${vector.method}, SEARCH_KEYWORD_WEIGHT=0`, model: embedder.model, ...vector.scores };
        printQuality(`vector branch alone (${embedder.label}, SEARCH_KEYWORD_WEIGHT=0)`, vector.scores);
      } finally {
        await vectorService.stop();
      }
    } finally {
      await embedder.close();
    }
  } else {
    console.log('vector and hybrid: skipped (no Ollama answers at OLLAMA_HOST; try --embedder glove)');
    runs.hybrid = null;
  }
  const keyword = runs.keyword as QualityScores;
  const hybrid = runs.hybrid as QualityScores | null;
  const vector = runs.vector as QualityScores | undefined;
  return {
    dataset: `LoCoMo (../shared/bench/locomo): 5,882 turns, 10 conversations, ${questions.length === allQuestions.length ? '1,536 questions' : `${questions.length} of the 1,536 questions (evenly spread)`}`,
    layout: options.oneProject
      ? 'every conversation in one project, stored one after another; each question searched in it'
      : 'each conversation its own project; each question searched in its own',
    embedder: embedder ? { kind: options.embedder, label: embedder.label, model: embedder.model } : null,
    metric:
      "Recall@k = share of a question's evidence turns in the top k, averaged; MRR = 1/rank of the first evidence turn in the top 10 (0 if none)",
    engine: scratch.kind,
    references: {
      'DevStream FTS5': { recall10: 0.53, mrr: 0.382 },
      'Postgres OR-lexemes + ts_rank': { recall10: 0.596, mrr: 0.465 },
      'MiniSearch BM25+ (Porter, stopwords)': { recall10: 0.63, mrr: 0.492 },
    },
    target: QUALITY_TARGET,
    pass: keyword.recall10 >= QUALITY_TARGET.recall10 && keyword.mrr >= QUALITY_TARGET.mrr,
    // Fusion should never be worse than the better branch alone (issue 21).
    hybrid_vs_branches:
      hybrid && vector
        ? {
            recall10: { keyword: keyword.recall10, vector: vector.recall10, hybrid: hybrid.recall10 },
            mrr: { keyword: keyword.mrr, vector: vector.mrr, hybrid: hybrid.mrr },
            not_worse:
              hybrid.recall10 >= Math.max(keyword.recall10, vector.recall10) &&
              hybrid.mrr >= Math.max(keyword.mrr, vector.mrr),
          }
        : null,
    runs,
  };
}

function printQuality(label: string, s: QualityScores): void {
  console.log(
    `\n${label}: R@5 ${s.recall5.toFixed(3)}  R@10 ${s.recall10.toFixed(3)}  MRR ${s.mrr.toFixed(3)}  (${s.questions} questions)`,
  );
  for (const [c, g] of Object.entries(s.by_category)) {
    console.log(
      `  category ${c}: R@5 ${g.recall5.toFixed(3)}  R@10 ${g.recall10.toFixed(3)}  MRR ${g.mrr.toFixed(3)}  (${g.questions})`,
    );
  }
}

// ------------------------------------------------------------------------------------------------
// Speed

interface Timed {
  client: Summary;
  server: Summary;
}

function timedSummary(client: number[], server: number[]): Timed {
  return { client: rounded(summarize(client)), server: rounded(summarize(server)) };
}

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function runSpeed(
  scratch: Scratch,
  options: { memories: number; concurrency: number; searches: number; stores: number },
) {
  const turns = await readJsonl<Turn>(`${LOCOMO_DIR}corpus.jsonl`);
  const questions = await readJsonl<Question>(`${LOCOMO_DIR}queries.jsonl`);
  const copies = Math.ceil(options.memories / turns.length);
  const rand = random(42);
  const fake = await new FakeOllama().start();
  fake.dense = true;
  const env = {
    ...scratch.env,
    LOG_LEVEL: 'warn',
    EMBEDDING_PROVIDER: 'ollama',
    OLLAMA_HOST: fake.url,
    OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text',
  };
  const hybridService = await startService({ cwd: ROOT, env });
  const keywordService = await startService({ cwd: ROOT, env: { ...env, EMBEDDING_PROVIDER: 'none' } });
  const rssOf = async (service: ServiceProcess) => {
    try {
      const status = await readFile(`/proc/${service.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch {
      return null;
    }
  };
  try {
    // Bulk load: `copies` projects, each holding every LoCoMo turn once, in a vocabulary of its own
    // (every word gets the project's suffix): teams' projects talk about different things, and
    // 17 verbatim copies would make every word 17 times as common and every vector 17-fold.
    // Mixed content types, a few keywords on some. Questions are put in their project's vocabulary.
    const docs = Array.from({ length: options.memories }, (_, i) => {
      const turn = turns[i % turns.length]!;
      const copy = Math.floor(i / turns.length);
      const content = dialect(turn.content, copy);
      const words = content.toLowerCase().match(/[a-z]{5,}/g) ?? [];
      const keywords = rand() < 0.3 ? words.slice(0, 1 + Math.floor(rand() * 3)) : [];
      return {
        content,
        content_type: CONTENT_TYPES[Math.floor(rand() * CONTENT_TYPES.length)]!,
        keywords,
        project: `bench ${copy}`,
      };
    });
    console.log(
      `Loading ${options.memories} memories into ${copies} projects (${options.concurrency} parallel stores, 768-D fake embeddings)…`,
    );
    const loadClient: number[] = [];
    const loadServer: number[] = [];
    const started = performance.now();
    let lastReport = started;
    await pool(docs.length, options.concurrency, async (i) => {
      const t = performance.now();
      const r = await post(hybridService.url, '/api/v1/memories', docs[i]);
      loadClient.push(performance.now() - t);
      if (r.status !== 201 || !r.body.embedding_generated)
        throw new Error(`store ${i} failed: ${r.status} ${JSON.stringify(r.body)}`);
      if (r.serverMs !== null) loadServer.push(r.serverMs - r.embedMs);
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        console.log(
          `  ${loadClient.length} stored, ${(loadClient.length / ((lastReport - started) / 1000)).toFixed(0)}/s`,
        );
      }
    });
    const loadSeconds = (performance.now() - started) / 1000;
    const throughput = options.memories / loadSeconds;
    console.log(`loaded ${options.memories} in ${loadSeconds.toFixed(1)} s: ${throughput.toFixed(0)} stores/s`);
    // Stores leave their HNSW insert to the worker (staged vectors): measure once it has caught up.
    const drainStarted = performance.now();
    await waitForEmbeddings(hybridService.url, 30 * 60_000);
    const indexSeconds = (performance.now() - drainStarted) / 1000;
    console.log(`staged vectors indexed ${indexSeconds.toFixed(1)} s after the last store`);

    // Let autovacuum/analyze see the new table before measuring (as it would in steady state).
    const client = new pg.Client({ connectionString: scratch.dbOptions.databaseUrl });
    if (scratch.kind === 'postgres') {
      await client.connect();
      await client.query('vacuum analyze semantic_memory, memory_lexeme_df, memory_lexeme_delta, embedding_jobs');
      // And write the load's dirty pages out now: otherwise the checkpoint the load triggered spreads
      // over the first minutes of measurements (the first case's p95 tripled in one run).
      await client
        .query('checkpoint')
        .catch((error: Error) => console.log(`(no checkpoint before measuring: ${error.message})`));
    }

    const cases: Array<{
      key: string;
      label: string;
      service: ServiceProcess;
      body: (i: number) => Record<string, unknown>;
    }> = [];
    const projectOf = (i: number) => `bench ${i % copies}`;
    const question = (i: number) => {
      const q = questions[(i * 7919) % questions.length]!;
      return { ...q, question: dialect(q.question, i % copies) };
    };
    for (const [service, mode] of [
      [hybridService, 'hybrid'],
      [keywordService, 'keyword'],
    ] as const) {
      cases.push(
        {
          key: `search_${mode}_project`,
          label: `search ${mode}, one project`,
          service,
          body: (i) => ({ query: question(i).question, project: projectOf(i) }),
        },
        {
          key: `search_${mode}_filtered`,
          label: `search ${mode}, project + content_type`,
          service,
          body: (i) => ({
            query: question(i).question,
            project: projectOf(i),
            content_type: CONTENT_TYPES[i % CONTENT_TYPES.length],
          }),
        },
        {
          key: `search_${mode}_all`,
          label: `search ${mode}, all projects`,
          service,
          body: (i) => ({ query: question(i).question }),
        },
        {
          key: `search_${mode}_all_filtered`,
          label: `search ${mode}, all projects + content_type + since`,
          service,
          body: (i) => ({
            query: question(i).question,
            content_type: CONTENT_TYPES[i % CONTENT_TYPES.length],
            created_after: new Date(Date.now() - 86_400_000).toISOString(),
          }),
        },
      );
    }
    const results: Record<string, Timed & { label: string; method: string }> = {};
    for (const c of cases) {
      const clientMs: number[] = [];
      const serverMs: number[] = [];
      let method = '';
      for (let i = 0; i < options.searches + 30; i++) {
        const t = performance.now();
        const r = await post(c.service.url, '/api/v1/memories/search', c.body(i));
        const elapsed = performance.now() - t;
        if (r.status !== 200) throw new Error(`${c.key}: ${r.status} ${JSON.stringify(r.body)}`);
        method = r.body.method;
        if (i < 30) continue; // warm-up
        clientMs.push(elapsed);
        if (r.serverMs !== null) serverMs.push(r.serverMs - r.embedMs);
      }
      results[c.key] = { label: c.label, method, ...timedSummary(clientMs, serverMs) };
      const s = results[c.key]!;
      console.log(
        `${c.label.padEnd(52)} client p50 ${s.client.p50.toFixed(1)} p95 ${s.client.p95.toFixed(1)} · server (no embed) p50 ${s.server.p50.toFixed(1)} p95 ${s.server.p95.toFixed(1)} ms [${method}]`,
      );
    }

    // Single stores at full size, one at a time.
    const storeClient: number[] = [];
    const storeServer: number[] = [];
    for (let i = 0; i < options.stores + 20; i++) {
      const turn = turns[(i * 31) % turns.length]!;
      const t = performance.now();
      const r = await post(hybridService.url, '/api/v1/memories', {
        content: dialect(`${turn.content} (new note ${i})`, i % copies),
        content_type: CONTENT_TYPES[i % CONTENT_TYPES.length],
        keywords: ['bench', `n${i % 10}`],
        project: projectOf(i),
      });
      const elapsed = performance.now() - t;
      if (r.status !== 201) throw new Error(`store: ${r.status} ${JSON.stringify(r.body)}`);
      if (i < 20) continue;
      storeClient.push(elapsed);
      if (r.serverMs !== null) storeServer.push(r.serverMs - r.embedMs);
    }
    results.store = {
      label: 'store (one at a time, at full size)',
      method: 'hybrid',
      ...timedSummary(storeClient, storeServer),
    };
    const st = results.store;
    console.log(
      `${st.label.padEnd(52)} client p50 ${st.client.p50.toFixed(1)} p95 ${st.client.p95.toFixed(1)} · server (no embed) p50 ${st.server.p50.toFixed(1)} p95 ${st.server.p95.toFixed(1)} ms`,
    );

    let tableSize: string | null = null;
    let postgres: Record<string, string> | null = null;
    if (scratch.kind === 'postgres') {
      const size = await client.query(
        `select pg_size_pretty(pg_total_relation_size('semantic_memory') + pg_total_relation_size('memory_vectors')) as s`,
      );
      tableSize = size.rows[0].s;
      // What the figures depend on: whether the rows and the vector index fit in shared_buffers.
      const settings = await client.query(
        `select current_setting('server_version') as server_version,
                (select extversion from pg_extension where extname = 'vector') as pgvector,
                current_setting('shared_buffers') as shared_buffers,
                current_setting('huge_pages') as huge_pages,
                current_setting('effective_cache_size') as effective_cache_size,
                pg_size_pretty(pg_relation_size('semantic_memory')) as table_rows,
                pg_size_pretty(pg_relation_size('memory_vectors')) as vector_rows,
                pg_size_pretty(pg_relation_size('idx_memory_vectors_embedding_768')) as vector_index`,
      );
      postgres = settings.rows[0];
      await client.end();
    }
    const searchKeys = Object.keys(results).filter((k) => k.startsWith('search_'));
    const targets = [
      ...searchKeys.map((k) => ({
        case: k,
        metric: 'server p95 (no embed)',
        actual_ms: results[k]!.server.p95,
        threshold_ms: SPEED_TARGET_MS.search,
      })),
      {
        case: 'store',
        metric: 'server p95 (no embed)',
        actual_ms: results.store.server.p95,
        threshold_ms: SPEED_TARGET_MS.store,
      },
    ].map((t) => ({ ...t, pass: t.actual_ms < t.threshold_ms }));
    return {
      engine: scratch.kind,
      memories: options.memories,
      projects: copies,
      vector_dims: 768,
      table_size: tableSize,
      postgres,
      load: {
        concurrency: options.concurrency,
        seconds: Math.round(loadSeconds * 10) / 10,
        stores_per_second: Math.round(throughput),
        staged_indexed_after_s: Math.round(indexSeconds * 10) / 10,
        ...timedSummary(loadClient, loadServer),
      },
      service_rss_mib: { hybrid: await rssOf(hybridService), keyword: await rssOf(keywordService) },
      cases: results,
      targets,
      pass: targets.every((t) => t.pass),
    };
  } finally {
    await hybridService.stop();
    await keywordService.stop();
    await fake.stop();
  }
}

// ------------------------------------------------------------------------------------------------

function markdown(quality: any, speed: any): string {
  const lines: string[] = [`# Memory benchmark (${new Date().toISOString().slice(0, 10)})`, ''];
  if (quality) {
    lines.push(
      `## Retrieval quality — LoCoMo, ${quality.engine}`,
      '',
      `Layout: ${quality.layout}.`,
      '',
      '| run | R@5 | R@10 | MRR | cat 1 R@10/MRR | cat 2 | cat 3 | cat 4 |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const [name, run] of Object.entries(quality.runs as Record<string, any>)) {
      if (!run) continue;
      const cat = (c: string) => `${run.by_category[c].recall10.toFixed(3)} / ${run.by_category[c].mrr.toFixed(3)}`;
      lines.push(
        `| ${name} | ${run.recall5.toFixed(3)} | ${run.recall10.toFixed(3)} | ${run.mrr.toFixed(3)} | ${cat('1')} | ${cat('2')} | ${cat('3')} | ${cat('4')} |`,
      );
    }
    for (const [name, ref] of Object.entries(quality.references as Record<string, any>))
      lines.push(`| ${name} (reference) | | ${ref.recall10.toFixed(3)} | ${ref.mrr.toFixed(3)} | | | | |`);
    lines.push(
      '',
      `Target (keyword branch): R@10 ≥ ${QUALITY_TARGET.recall10}, MRR ≥ ${QUALITY_TARGET.mrr} — ${quality.pass ? 'met' : 'not met'}.`,
      '',
    );
    const side = quality.hybrid_vs_branches;
    if (side) {
      lines.push(
        `Embedder: ${quality.embedder.label}. R@10 keyword / vector / hybrid: ${side.recall10.keyword.toFixed(3)} / ${side.recall10.vector.toFixed(3)} / ${side.recall10.hybrid.toFixed(3)}; MRR ${side.mrr.keyword.toFixed(3)} / ${side.mrr.vector.toFixed(3)} / ${side.mrr.hybrid.toFixed(3)} — hybrid ${side.not_worse ? 'is not worse than' : 'is WORSE than'} the better branch.`,
        '',
      );
    }
  }
  if (speed) {
    lines.push(
      `## Speed — ${speed.memories.toLocaleString('en')} memories (${speed.vector_dims}-D), ${speed.engine}`,
      '',
      `Bulk store: ${speed.load.stores_per_second} stores/s with ${speed.load.concurrency} in parallel (client p95 ${speed.load.client.p95.toFixed(1)} ms); the worker had indexed every staged vector ${speed.load.staged_indexed_after_s ?? 'n/a'} s after the last store. Table: ${speed.table_size ?? 'n/a'}.`,
      ...(speed.postgres
        ? [
            '',
            `Postgres ${speed.postgres.server_version}, pgvector ${speed.postgres.pgvector}, shared_buffers ${speed.postgres.shared_buffers} (huge_pages ${speed.postgres.huge_pages}), effective_cache_size ${speed.postgres.effective_cache_size}; rows ${speed.postgres.table_rows}, vector index ${speed.postgres.vector_index}.`,
          ]
        : []),
      '',
      '| case | client p50 / p95 ms | server (no embedder) p50 / p95 ms | target |',
      '| --- | --- | --- | --- |',
    );
    for (const [key, c] of Object.entries(speed.cases as Record<string, any>)) {
      const target = speed.targets.find((t: any) => t.case === key);
      lines.push(
        `| ${c.label} | ${c.client.p50.toFixed(1)} / ${c.client.p95.toFixed(1)} | ${c.server.p50.toFixed(1)} / ${c.server.p95.toFixed(1)} | ${target ? `< ${target.threshold_ms} ${target.pass ? '✅' : '❌'}` : ''} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quality: { type: 'boolean' },
      speed: { type: 'boolean' },
      embedder: { type: 'string', default: 'ollama' },
      questions: { type: 'string' },
      'one-project': { type: 'boolean' },
      memories: { type: 'string', default: '100000' },
      concurrency: { type: 'string', default: '8' },
      searches: { type: 'string', default: '300' },
      stores: { type: 'string', default: '300' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const both = !values.quality && !values.speed;
  const embedder = values.embedder as EmbedderKind;
  if (!['ollama', 'glove', 'fake'].includes(embedder)) {
    console.error(`--embedder must be ollama, glove or fake (got "${values.embedder}")\n\n${USAGE}`);
    return 2;
  }
  const questionCount = values.questions === undefined ? undefined : Number(values.questions);
  if (questionCount !== undefined && !(Number.isInteger(questionCount) && questionCount >= 1)) {
    console.error(`--questions must be a whole number of at least 1 (got "${values.questions}")`);
    return 2;
  }
  const databaseUrl = process.env.DATABASE_URL;
  const results: Record<string, unknown> = { date: new Date().toISOString(), machine: machine() };
  let pass = true;
  let quality: any = null;
  let speed: any = null;

  if (values.quality || both) {
    const scratch = databaseUrl ? await scratchPostgres(databaseUrl) : await scratchPglite();
    try {
      quality = await runQuality(scratch, {
        concurrency: Number(values.concurrency),
        embedder,
        questions: questionCount,
        oneProject: values['one-project'] === true,
      });
      pass &&= quality.pass && quality.hybrid_vs_branches?.not_worse !== false;
    } finally {
      await scratch.drop();
    }
    await mkdir(RESULTS_DIR, { recursive: true });
    // A subset of the questions is a diagnostic run: it does not replace the full run's results.
    const name = `memory-quality${values['one-project'] ? '-one-project' : ''}${questionCount !== undefined ? '-diagnostic' : ''}`;
    await writeFile(`${RESULTS_DIR}${name}.json`, JSON.stringify({ ...results, ...quality }, null, 2) + '\n');
    await writeFile(`${RESULTS_DIR}${name}.md`, markdown(quality, null));
  }
  if (values.speed || both) {
    if (!databaseUrl) {
      console.error('The speed run needs DATABASE_URL (Postgres with pgvector).');
      return 2;
    }
    const scratch = await scratchPostgres(databaseUrl);
    try {
      speed = await runSpeed(scratch, {
        memories: Number(values.memories),
        concurrency: Number(values.concurrency),
        searches: Number(values.searches),
        stores: Number(values.stores),
      });
      pass &&= speed.pass;
    } finally {
      await scratch.drop();
    }
    await mkdir(RESULTS_DIR, { recursive: true });
    const name = Number(values.memories) === 100_000 ? 'memory-speed' : 'memory-speed-diagnostic';
    await writeFile(`${RESULTS_DIR}${name}.json`, JSON.stringify({ ...results, ...speed }, null, 2) + '\n');
    await writeFile(`${RESULTS_DIR}${name}.md`, markdown(null, speed));
  }
  console.log(`\n${markdown(quality, speed)}`);
  return pass ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
