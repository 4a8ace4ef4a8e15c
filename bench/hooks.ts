/**
 * Hook benchmark: `npm run bench:hooks` (not part of `npm test`; issue 23, "Measure").
 *
 * Does the context the hub injects by itself (`POST /api/v1/hooks/claude-code`, UserPromptSubmit) hold
 * the answer as often as an agent's own `devstream_search_memory` top 10, at no more than the hook's
 * budget, and fast enough to sit before every prompt?
 *
 * The store: every LoCoMo conversation (../shared/bench/locomo) as its own project (`locomo conv-26`,
 * …, its turns stored in order as bench:memory does), plus filler — copies of the corpus, each in a
 * vocabulary of its own (bench/lib/locomo.ts `dialect()`), in projects `filler 1` … — until the store
 * holds `--memories` (100,000) memories, through the real service (REST, bearer keys), embedded by
 * `--embedder` (GloVe by default). Then every LoCoMo question (or `--questions N`, evenly spread) is sent:
 *
 *   - as a UserPromptSubmit hook input to its conversation's project (`?project=locomo conv-26`), one
 *     fresh session_id per question (the endpoint injects a memory once per session);
 *   - as `POST /api/v1/memories/search` (devstream_search_memory's REST route), limit 10, same project.
 *
 * Scores: the share of questions whose injected context (additionalContext) names at least one of the
 * question's evidence turns' memory ids (12 hex characters), and the same for the search's top 10
 * (and top 5 and 3); tokens as ceil(characters / 4) (the approxTokens of resolve_context) of the
 * injected additionalContext, of the search tool's rendered text (what devstream_search_memory answers
 * an agent over MCP) and of its hits' full contents; the share of prompts that got nothing; p50/p95 of
 * the hook's own server time (Server-Timing `hook;dur`) and of the client's time for the whole request.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres npm run bench:hooks
 *   npm run bench:hooks -- --questions 200          a diagnostic subset (bench/results/hooks-diagnostic.*)
 *   npm run bench:hooks -- --embedder fake --pglite
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { approxTokens } from '../src/domain/graphs/resolve-context.js';
import { renderSearchResults } from '../src/domain/memory/render.js';
import { startService, type ServiceProcess } from './lib/child.js';
import { dialect, readLocomo, type Turn } from './lib/locomo.js';
import { machine } from './lib/machine.js';
import {
  loadLocomo,
  locomoProject,
  pool,
  post,
  spread,
  startEmbedder,
  timingPart,
  waitForEmbeddings,
  type EmbedderKind,
} from './lib/memory-service.js';
import { scratchPglite, scratchPostgres, type Scratch } from './lib/scratch.js';
import { rounded, summarize, type Summary } from './lib/stats.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

const HOOK_PATH = '/api/v1/hooks/claude-code';
const SEARCH_PATH = '/api/v1/memories/search';
/** The service's default HOOK_CONTEXT_TOKENS. */
const DEFAULT_BUDGET = 1500;
/** Claude Code's cap on a hook's additionalContext. */
const CLAUDE_CODE_CHAR_CAP = 10_000;
const TARGET = { server_p95_ms: 30 };
const CONTENT_TYPES = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
const WARMUP = 20;
const MEMORY_ID = /\b[0-9a-f]{12}\b/g;

const USAGE = `Usage: npm run bench:hooks [-- options]

  --memories N        memories in the store, LoCoMo's 5,882 turns included (default 100000)
  --questions N       replay only N of the 1,536 LoCoMo questions (evenly spread; every turn is loaded)
  --embedder E        glove (default: GloVe 100-D word vectors served as Ollama on loopback,
                      bench/lib/glove-ollama.ts), fake (the tests' 768-D fake embedder) or ollama (a real
                      Ollama at OLLAMA_HOST with OLLAMA_EMBEDDING_MODEL)
  --budget N          HOOK_CONTEXT_TOKENS of the service (default: unset, the service's 1500)
  --pglite            PGlite even when DATABASE_URL is set (PGlite is used when it is unset)
  --concurrency N     parallel stores while loading (default 8)
  -h, --help          this text

DATABASE_URL: a Postgres server (with pgvector) on which the benchmark may create and drop a scratch
database. A run of every question at 100,000 memories writes bench/results/hooks.{json,md}; any other
run writes bench/results/hooks-diagnostic.{json,md}.`;

interface Row {
  qid: string;
  category: number;
  /** Evidence turns with a memory (every LoCoMo question has at least one). */
  evidence: number;
  hook: {
    status: number;
    /** additionalContext, '' when the answer was `{}`. */
    chars: number;
    tokens: number;
    ids: number;
    hit: boolean;
    serverMs: number | null;
    /** Every `name;dur=` entry of its Server-Timing header (hook and any parts it reports). */
    timing: Record<string, number>;
    clientMs: number;
  } | null;
  search: {
    hit10: boolean;
    hit5: boolean;
    hit3: boolean;
    /** ceil(chars/4) of the tool's rendered text. */
    tokens: number;
    /** ceil(chars/4) of the top 10 hits' full contents. */
    contentTokens: number;
    /** Server-Timing op, and op minus embed. */
    serverMs: number | null;
    serverMsWithoutEmbed: number | null;
    clientMs: number;
  };
}

const share = (rows: Row[], pick: (r: Row) => boolean) =>
  rows.length === 0 ? Number.NaN : rows.filter(pick).length / rows.length;
const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((s, x) => s + x, 0) / xs.length);
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r1 = (x: number) => Math.round(x * 10) / 10;

async function createKey(url: string, admin: string, name: string, scopes: string[]): Promise<string> {
  const r = await post(url, '/api/v1/keys', { name, scopes }, { authorization: `Bearer ${admin}` });
  if (r.status !== 201 || typeof r.body?.token !== 'string')
    throw new Error(`creating the key ${name} failed: ${r.status} ${r.body?.error?.code ?? ''}`);
  return r.body.token;
}

/** Filler: copies of the corpus in vocabularies of their own, `filler 1` …, mixed types, in parallel. */
async function loadFiller(
  url: string,
  turns: Turn[],
  count: number,
  concurrency: number,
  headers: Record<string, string>,
): Promise<number> {
  const started = performance.now();
  let lastReport = started;
  let stored = 0;
  await pool(count, concurrency, async (i) => {
    const copy = 1 + Math.floor(i / turns.length);
    const turn = turns[i % turns.length]!;
    const r = await post(
      url,
      '/api/v1/memories',
      {
        content: dialect(turn.content, copy),
        content_type: CONTENT_TYPES[i % CONTENT_TYPES.length],
        project: `filler ${copy}`,
      },
      headers,
    );
    if (r.status !== 201) throw new Error(`filler store ${i} failed: ${r.status} ${JSON.stringify(r.body)}`);
    stored++;
    if (performance.now() - lastReport > 15_000) {
      lastReport = performance.now();
      console.log(
        `  ${stored} of ${count} filler memories, ${(stored / ((lastReport - started) / 1000)).toFixed(0)}/s`,
      );
    }
  });
  return (performance.now() - started) / 1000;
}

async function hookCall(
  url: string,
  token: string,
  project: string,
  sessionId: string,
  prompt: string,
): Promise<{
  status: number;
  context: string;
  serverMs: number | null;
  timing: Record<string, number>;
  clientMs: number;
  body: unknown;
}> {
  const t = performance.now();
  const r = await post(
    url,
    `${HOOK_PATH}?project=${encodeURIComponent(project)}`,
    {
      session_id: sessionId,
      transcript_path: `/home/dev/.claude/projects/bench/${sessionId}.jsonl`,
      cwd: '/home/dev/bench',
      permission_mode: 'default',
      hook_event_name: 'UserPromptSubmit',
      prompt,
    },
    { authorization: `Bearer ${token}` },
  );
  const clientMs = performance.now() - t;
  const dur = timingPart(r.timing, 'hook');
  const context = r.body?.hookSpecificOutput?.additionalContext;
  return {
    status: r.status,
    context: typeof context === 'string' ? context : '',
    serverMs: Number.isNaN(dur) ? null : dur,
    timing: Object.fromEntries(
      [...r.timing.matchAll(/([\w-]+);dur=([\d.]+)/g)].map((m) => [m[1]!, Number(m[2])] as const),
    ),
    clientMs,
    body: r.body,
  };
}

async function searchCall(url: string, token: string, project: string, query: string) {
  const t = performance.now();
  const r = await post(url, SEARCH_PATH, { query, project, limit: 10 }, { authorization: `Bearer ${token}` });
  const clientMs = performance.now() - t;
  if (r.status !== 200) throw new Error(`search failed: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    body: r.body,
    serverMs: r.serverMs,
    serverMsWithoutEmbed: r.serverMs === null ? null : r.serverMs - r.embedMs,
    clientMs,
  };
}

function summary(rows: Row[], budget: number) {
  const hooked = rows.filter((r) => r.hook !== null);
  const hookServer = hooked.map((r) => r.hook!.serverMs).filter((x): x is number => x !== null);
  const time = (xs: number[]): Summary => rounded(summarize(xs));
  const hooks =
    hooked.length === 0
      ? null
      : {
          questions: hooked.length,
          evidence_share: r3(share(hooked, (r) => r.hook!.hit)),
          mean_tokens: r1(mean(hooked.map((r) => r.hook!.tokens))),
          mean_tokens_when_injected: r1(mean(hooked.filter((r) => r.hook!.chars > 0).map((r) => r.hook!.tokens))),
          max_tokens: Math.max(...hooked.map((r) => r.hook!.tokens)),
          max_chars: Math.max(...hooked.map((r) => r.hook!.chars)),
          over_budget: hooked.filter((r) => r.hook!.tokens > budget).length,
          over_char_cap: hooked.filter((r) => r.hook!.chars > CLAUDE_CODE_CHAR_CAP).length,
          mean_memories_injected: r1(mean(hooked.map((r) => r.hook!.ids))),
          nothing_share: r3(share(hooked, (r) => r.hook!.chars === 0)),
          non_200: hooked.filter((r) => r.hook!.status !== 200).length,
          server_timing_missing: hooked.length - hookServer.length,
          server_timing_parts: Object.fromEntries(
            [...new Set(hooked.flatMap((r) => Object.keys(r.hook!.timing)))].map((name) => [
              name,
              time(hooked.map((r) => r.hook!.timing[name]).filter((x): x is number => x !== undefined)),
            ]),
          ),
          server_ms: time(hookServer),
          // The hook embeds the prompt itself (Server-Timing embed): the time without the embedder's.
          server_ms_without_embed: time(
            hooked.filter((r) => r.hook!.serverMs !== null).map((r) => r.hook!.serverMs! - (r.hook!.timing.embed ?? 0)),
          ),
          client_ms: time(hooked.map((r) => r.hook!.clientMs)),
        };
  const search = {
    questions: rows.length,
    evidence_share_top10: r3(share(rows, (r) => r.search.hit10)),
    evidence_share_top5: r3(share(rows, (r) => r.search.hit5)),
    evidence_share_top3: r3(share(rows, (r) => r.search.hit3)),
    mean_tokens_rendered: r1(mean(rows.map((r) => r.search.tokens))),
    mean_tokens_contents: r1(mean(rows.map((r) => r.search.contentTokens))),
    server_ms: time(rows.map((r) => r.search.serverMs).filter((x): x is number => x !== null)),
    server_ms_without_embed: time(
      rows.map((r) => r.search.serverMsWithoutEmbed).filter((x): x is number => x !== null),
    ),
    client_ms: time(rows.map((r) => r.search.clientMs)),
  };
  return { hooks, search };
}

async function run(
  scratch: Scratch,
  options: { memories: number; questions?: number; embedder: EmbedderKind; budget?: number; concurrency: number },
) {
  const { turns, questions: allQuestions } = await readLocomo();
  const questions = spread(allQuestions, options.questions);
  const fillerCount = Math.max(0, options.memories - turns.length);
  console.log(
    `LoCoMo: ${turns.length} turns in ${new Set(turns.map((t) => t.conv)).size} conversations + ${fillerCount} filler memories on ${scratch.kind}; ${questions.length} of ${allQuestions.length} questions`,
  );
  const embedder = await startEmbedder(options.embedder);
  if (!embedder) throw new Error('no embedder: no Ollama answers at OLLAMA_HOST (try --embedder glove)');
  const admin = randomBytes(24).toString('hex');
  const env: Record<string, string> = {
    ...scratch.env,
    ...embedder.env,
    EMBEDDING_PROVIDER: 'ollama',
    LOG_LEVEL: 'warn',
    AUTH: 'required',
    ADMIN_TOKEN: admin,
  };
  if (options.budget !== undefined) env.HOOK_CONTEXT_TOKENS = String(options.budget);
  let service: ServiceProcess | undefined;
  try {
    service = await startService({ cwd: ROOT, env });
    const url = service.url;
    const writer = await createKey(url, admin, 'bench-hooks-loader', ['read', 'write']);
    const reader = await createKey(url, admin, 'bench-hooks-agent', ['read']);
    const writeHeaders = { authorization: `Bearer ${writer}` };

    const t0 = performance.now();
    const memoryOf = await loadLocomo(url, turns, options.concurrency, writeHeaders);
    const locomoSeconds = (performance.now() - t0) / 1000;
    console.log(`LoCoMo loaded in ${locomoSeconds.toFixed(1)} s; filler…`);
    const fillerSeconds = await loadFiller(url, turns, fillerCount, options.concurrency, writeHeaders);
    console.log(`filler loaded in ${fillerSeconds.toFixed(1)} s`);
    const t1 = performance.now();
    await waitForEmbeddings(url, 60 * 60_000, (pending) => console.log(`  ${pending} embedding jobs pending`));
    const drainSeconds = (performance.now() - t1) / 1000;
    console.log(`embedding queue drained ${drainSeconds.toFixed(1)} s after the last store (${embedder.label})`);

    let postgres: Record<string, string> | null = null;
    let memoriesInStore: number | null = null;
    if (scratch.kind === 'postgres') {
      const client = new pg.Client({ connectionString: scratch.dbOptions.databaseUrl });
      await client.connect();
      try {
        // As bench:memory: statistics and a checkpoint now, not during the measurements.
        await client.query('vacuum analyze');
        await client.query('checkpoint').catch((error: Error) => console.log(`(no checkpoint: ${error.message})`));
        memoriesInStore = Number((await client.query('select count(*) as n from semantic_memory')).rows[0].n);
        postgres = (
          await client.query(
            `select current_setting('server_version') as server_version,
                    (select extversion from pg_extension where extname = 'vector') as pgvector,
                    current_setting('shared_buffers') as shared_buffers,
                    pg_size_pretty(pg_total_relation_size('semantic_memory')) as semantic_memory,
                    pg_size_pretty(pg_total_relation_size('memory_vectors')) as memory_vectors`,
          )
        ).rows[0];
      } finally {
        await client.end();
      }
    }

    // Is the endpoint there? (Before it lands, the run measures the baseline only.)
    const probe = await hookCall(url, reader, locomoProject(questions[0]!.conv), 'bench-hooks-probe', 'probe');
    const hooksAvailable = probe.status !== 404;
    if (!hooksAvailable) console.log(`${HOOK_PATH}: 404, the hook endpoint is not in this build; baseline only`);
    else if (probe.status !== 200) throw new Error(`hook probe: ${probe.status} ${JSON.stringify(probe.body)}`);

    const runId = randomBytes(4).toString('hex');
    // Warm-up (not scored): the first requests of a fresh process pay for JIT and prepared statements.
    for (let i = 0; i < WARMUP; i++) {
      const q = allQuestions[(i * 7919) % allQuestions.length]!;
      if (hooksAvailable) await hookCall(url, reader, locomoProject(q.conv), `warmup-${runId}-${i}`, q.question);
      await searchCall(url, reader, locomoProject(q.conv), q.question);
    }

    const rows: Row[] = [];
    const unexpected: string[] = [];
    const started = performance.now();
    for (const [i, q] of questions.entries()) {
      const project = locomoProject(q.conv);
      const wanted = new Set(q.evidence.map((e) => memoryOf.get(e)).filter((m): m is string => m !== undefined));
      let hook: Row['hook'] = null;
      if (hooksAvailable) {
        const h = await hookCall(url, reader, project, `bench-${runId}-${q.qid}`, q.question);
        if (h.status !== 200 && unexpected.length < 5)
          unexpected.push(`${q.qid}: ${h.status} ${JSON.stringify(h.body)}`);
        const ids = new Set(h.context.match(MEMORY_ID) ?? []);
        hook = {
          status: h.status,
          chars: h.context.length,
          tokens: approxTokens(h.context),
          ids: ids.size,
          hit: [...ids].some((id) => wanted.has(id)),
          serverMs: h.serverMs,
          timing: h.timing,
          clientMs: h.clientMs,
        };
      }
      const s = await searchCall(url, reader, project, q.question);
      const ranked: string[] = s.body.results.map((hit: { memory_id: string }) => hit.memory_id);
      const hitIn = (k: number) => ranked.slice(0, k).some((m) => wanted.has(m));
      rows.push({
        qid: q.qid,
        category: q.category,
        evidence: wanted.size,
        hook,
        search: {
          hit10: hitIn(10),
          hit5: hitIn(5),
          hit3: hitIn(3),
          tokens: approxTokens(renderSearchResults(s.body)),
          contentTokens: approxTokens(s.body.results.map((hit: { content: string }) => hit.content).join('\n')),
          serverMs: s.serverMs,
          serverMsWithoutEmbed: s.serverMsWithoutEmbed,
          clientMs: s.clientMs,
        },
      });
      if ((i + 1) % 250 === 0) console.log(`  ${i + 1} of ${questions.length} questions`);
    }
    const replaySeconds = (performance.now() - started) / 1000;
    const budget = options.budget ?? DEFAULT_BUDGET;
    const overall = summary(rows, budget);
    const byCategory: Record<string, ReturnType<typeof summary>> = {};
    for (const c of [1, 2, 3, 4, 5]) {
      const some = rows.filter((r) => r.category === c);
      if (some.length > 0) byCategory[String(c)] = summary(some, budget);
    }
    const hooks = overall.hooks;
    const targets = hooks
      ? {
          evidence: {
            hooks: hooks.evidence_share,
            search_top10: overall.search.evidence_share_top10,
            pass: hooks.evidence_share >= overall.search.evidence_share_top10,
          },
          tokens: { max: hooks.max_tokens, budget: DEFAULT_BUDGET, pass: hooks.max_tokens <= DEFAULT_BUDGET },
          server_p95: {
            ms: hooks.server_ms.p95,
            threshold_ms: TARGET.server_p95_ms,
            pass: hooks.server_timing_missing === 0 && hooks.server_ms.p95 <= TARGET.server_p95_ms,
          },
        }
      : null;
    return {
      engine: scratch.kind,
      postgres,
      memories: {
        requested: options.memories,
        locomo_turns: turns.length,
        filler: fillerCount,
        in_store: memoriesInStore,
      },
      embedder: { kind: options.embedder, label: embedder.label, model: embedder.model },
      hook_context_tokens: options.budget ?? null,
      dataset: `LoCoMo (../shared/bench/locomo): ${turns.length} turns in 10 conversations (one project each), ${questions.length === allQuestions.length ? `all ${allQuestions.length} questions` : `${questions.length} of the ${allQuestions.length} questions (evenly spread)`}`,
      method: {
        hook: `POST ${HOOK_PATH}?project=<conversation's project>, UserPromptSubmit with the question as prompt, a fresh session_id per question, a read-scoped bearer key`,
        search: `POST ${SEARCH_PATH} (devstream_search_memory) {query, project, limit: 10}, same key`,
        evidence:
          "a question counts when the injected additionalContext (or the search's top k) names the memory id of at least one of its evidence turns",
        tokens:
          'ceil(characters / 4) (approxTokens, as resolve_context counts): of additionalContext (0 when nothing was injected; means over every question); of the search tool\u2019s rendered text (renderSearchResults, what an agent reads over MCP) and of its 10 hits\u2019 full contents',
        timing:
          "server: the hook's Server-Timing hook;dur (the target's figure; it includes embedding the prompt) and the search's op, each also without its embed entry; client: the whole request as seen by this process on loopback, sequential, after 20 unscored warm-up calls of each",
      },
      hooks_available: hooksAvailable,
      unexpected_hook_answers: unexpected,
      load_seconds: { locomo: r1(locomoSeconds), filler: r1(fillerSeconds), embedding_drain: r1(drainSeconds) },
      replay_seconds: r1(replaySeconds),
      ...overall,
      by_category: byCategory,
      targets,
      pass: targets ? targets.evidence.pass && targets.tokens.pass && targets.server_p95.pass : false,
    };
  } finally {
    await service?.stop();
    await embedder.close();
  }
}

type Result = Awaited<ReturnType<typeof run>>;

function markdown(r: Result, date: string): string {
  const h = r.hooks;
  const s = r.search;
  const ms = (x: Summary) => `${x.p50.toFixed(1)} / ${x.p95.toFixed(1)}`;
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const lines = [
    `# Hook benchmark (${date.slice(0, 10)})`,
    '',
    `${r.dataset}; ${(r.memories.in_store ?? r.memories.requested).toLocaleString('en')} memories in the store (${r.memories.filler.toLocaleString('en')} filler in other projects), ${r.engine}${r.postgres ? ` ${r.postgres.server_version?.split(' ')[0]}, pgvector ${r.postgres.pgvector}` : ''}; embedder ${r.embedder.label}; HOOK_CONTEXT_TOKENS ${r.hook_context_tokens ?? `unset (default ${DEFAULT_BUDGET})`}.`,
    '',
    '| | questions with ≥1 evidence turn | mean tokens | prompts with nothing | server p50 / p95 ms | server without embed p50 / p95 ms | client p50 / p95 ms |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  if (h)
    lines.push(
      `| UserPromptSubmit hook | ${pct(h.evidence_share)} | ${h.mean_tokens.toFixed(1)} (max ${h.max_tokens}; ${h.mean_tokens_when_injected.toFixed(1)} when injected) | ${pct(h.nothing_share)} | ${ms(h.server_ms)} | ${ms(h.server_ms_without_embed)} | ${ms(h.client_ms)} |`,
    );
  else lines.push('| UserPromptSubmit hook | (endpoint not in this build: 404) | | | | | |');
  lines.push(
    `| search_memory top 10 | ${pct(s.evidence_share_top10)} | ${s.mean_tokens_rendered.toFixed(1)} rendered (${s.mean_tokens_contents.toFixed(1)} of full contents) | | ${ms(s.server_ms)} | ${ms(s.server_ms_without_embed)} | ${ms(s.client_ms)} |`,
    `| search_memory top 5 | ${pct(s.evidence_share_top5)} | | | | | |`,
    `| search_memory top 3 | ${pct(s.evidence_share_top3)} | | | | | |`,
    '',
    '| category | questions | hook evidence | hook mean tokens | hook nothing | search top 10 evidence |',
    '| --- | --- | --- | --- | --- | --- |',
  );
  for (const [c, g] of Object.entries(r.by_category))
    lines.push(
      `| ${c} | ${g.search.questions} | ${g.hooks ? pct(g.hooks.evidence_share) : ''} | ${g.hooks ? g.hooks.mean_tokens.toFixed(1) : ''} | ${g.hooks ? pct(g.hooks.nothing_share) : ''} | ${pct(g.search.evidence_share_top10)} |`,
    );
  lines.push('', `Tokens: ${r.method.tokens}. Timing: ${r.method.timing}.`, '');
  if (h && Object.keys(h.server_timing_parts).length > 1)
    lines.push(
      `The hook's Server-Timing entries, p50 / p95 ms: ${Object.entries(h.server_timing_parts)
        .map(([name, x]) => `${name} ${ms(x)}`)
        .join(', ')}.`,
      '',
    );
  if (r.targets) {
    const t = r.targets;
    lines.push(
      `Target: hook evidence ≥ search top 10's (${pct(t.evidence.hooks)} vs ${pct(t.evidence.search_top10)}) ${t.evidence.pass ? '✅' : '❌'}; every injection ≤ ${t.tokens.budget} tokens (max ${t.tokens.max}) ${t.tokens.pass ? '✅' : '❌'}; server p95 ≤ ${t.server_p95.threshold_ms} ms (${t.server_p95.ms.toFixed(1)}) ${t.server_p95.pass ? '✅' : '❌'} — ${r.pass ? 'met' : 'not met'}.`,
      '',
    );
  } else lines.push('Target: not measured (no hook endpoint).', '');
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      memories: { type: 'string', default: '100000' },
      questions: { type: 'string' },
      embedder: { type: 'string', default: 'glove' },
      budget: { type: 'string' },
      pglite: { type: 'boolean' },
      concurrency: { type: 'string', default: '8' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const whole = (name: string, raw: string | undefined, min: number): number | undefined => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${name} must be a whole number of at least ${min} (got "${raw}")`);
    return n;
  };
  const embedder = values.embedder as EmbedderKind;
  if (!['ollama', 'glove', 'fake'].includes(embedder))
    throw new UsageError(`--embedder must be glove, fake or ollama (got "${values.embedder}")`);
  const options = {
    memories: whole('memories', values.memories, 1)!,
    questions: whole('questions', values.questions, 1),
    budget: whole('budget', values.budget, 1),
    concurrency: whole('concurrency', values.concurrency, 1)!,
    embedder,
  };
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl && !values.pglite) console.log('DATABASE_URL is unset: PGlite (the target is for Postgres)');
  const scratch = databaseUrl && !values.pglite ? await scratchPostgres(databaseUrl) : await scratchPglite();
  const date = new Date().toISOString();
  let result: Result;
  try {
    result = await run(scratch, options);
  } finally {
    await scratch.drop();
  }
  const full =
    options.questions === undefined &&
    options.memories === 100_000 &&
    options.budget === undefined &&
    scratch.kind === 'postgres' &&
    result.hooks_available;
  const name = full ? 'hooks' : 'hooks-diagnostic';
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(
    `${RESULTS_DIR}${name}.json`,
    JSON.stringify({ date, machine: machine(), ...result }, null, 2) + '\n',
  );
  const md = markdown(result, date);
  await writeFile(`${RESULTS_DIR}${name}.md`, md);
  console.log(`\n${md}\n(bench/results/${name}.{json,md})`);
  return result.pass ? 0 : 1;
}

class UsageError extends Error {}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
