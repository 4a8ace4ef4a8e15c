/**
 * bench:context's scores and report: per-question records in, per-repository / per-category /
 * overall figures and the markdown out (bench/context.ts runs the questions).
 */
import { percentile } from './stats.js';

/** One natural-language (or identifier) question as the benchmark asked it. */
export interface QuestionRecord {
  repo: string;
  id: string;
  category: string;
  intent: string;
  question: string;
  gold: string[];
  /** Gold ids the uploaded graph does not hold: the question counts as a miss on every score. */
  missingGold: string[];
  /** The node the packet's ANSWER names (null: ANSWER 0). */
  answer: string | null;
  answerName: string | null;
  /** ANSWER ∈ gold. */
  answerAt1: 0 | 1;
  /** |gold ∩ packet ids| / |gold|. */
  goldRecall: number;
  /** 1 / rank of the first gold node in find_symbols' top 10, else 0. */
  reciprocalRank: number;
  /** 1-based rank of the first gold node in find_symbols' top 10, null when none is there. */
  findSymbolsRank: number | null;
  /** 1-based position of the first gold node among the packet's nodes, null when none is there. */
  packetRank: number | null;
  packetNodes: number;
  approxTokens: number;
  resolveMs: number;
  findMs: number;
}

/** One query of the automatic identifier set: a question's first gold node, asked by its name. */
export interface IdentifierRecord {
  repo: string;
  fromQuestion: string;
  node: string;
  query: string;
  answer: string | null;
  answerName: string | null;
  /** The ANSWER is a node with that name (any of them when several share it). */
  answerAt1: 0 | 1;
  resolveMs: number;
}

export interface Figures {
  n: number;
  answer_at_1: number;
  gold_recall: number;
  find_symbols_mrr10: number;
  packet_tokens: { median: number; p95: number };
  resolve_context_ms: { p50: number; p95: number };
  find_symbols_ms: { p50: number; p95: number };
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r1 = (x: number) => Math.round(x * 10) / 10;
const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : Number.NaN);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

export function figures(records: QuestionRecord[]): Figures {
  const tokens = sorted(records.map((r) => r.approxTokens));
  const resolve = sorted(records.map((r) => r.resolveMs));
  const find = sorted(records.map((r) => r.findMs));
  return {
    n: records.length,
    answer_at_1: r3(mean(records.map((r) => r.answerAt1))),
    gold_recall: r3(mean(records.map((r) => r.goldRecall))),
    find_symbols_mrr10: r3(mean(records.map((r) => r.reciprocalRank))),
    packet_tokens: { median: percentile(tokens, 50), p95: percentile(tokens, 95) },
    resolve_context_ms: { p50: r1(percentile(resolve, 50)), p95: r1(percentile(resolve, 95)) },
    find_symbols_ms: { p50: r1(percentile(find, 50)), p95: r1(percentile(find, 95)) },
  };
}

/** Figures per value of `key`, in first-seen order. */
export function figuresBy(records: QuestionRecord[], key: (r: QuestionRecord) => string): Record<string, Figures> {
  const groups = new Map<string, QuestionRecord[]>();
  for (const r of records) {
    if (!groups.has(key(r))) groups.set(key(r), []);
    groups.get(key(r))!.push(r);
  }
  return Object.fromEntries([...groups].map(([k, rs]) => [k, figures(rs)]));
}

/** Scores one question from the packet's reading and find_symbols' hits. */
export function score(
  gold: string[],
  missingGold: string[],
  answer: string | null,
  packetIds: string[],
  symbolIds: string[],
): Pick<QuestionRecord, 'answerAt1' | 'goldRecall' | 'reciprocalRank' | 'findSymbolsRank' | 'packetRank'> {
  const goldSet = new Set(gold);
  const inPacket = new Set(packetIds.filter((id) => goldSet.has(id)));
  const packetIndex = packetIds.findIndex((id) => goldSet.has(id));
  const rank = symbolIds.slice(0, 10).findIndex((id) => goldSet.has(id));
  const counted = missingGold.length === 0;
  return {
    answerAt1: counted && answer !== null && goldSet.has(answer) ? 1 : 0,
    goldRecall: counted ? inPacket.size / goldSet.size : 0,
    reciprocalRank: counted && rank >= 0 ? 1 / (rank + 1) : 0,
    findSymbolsRank: rank >= 0 ? rank + 1 : null,
    packetRank: packetIndex >= 0 ? packetIndex + 1 : null,
  };
}

/** One (backend, embedder, ranker) run of every question. */
export interface RunResult {
  label: string;
  backend: 'pglite' | 'postgres';
  embedder: string;
  ranker: 'default' | 'legacy';
  /** What the embedder wait found: done, absent (the service has no node embeddings), timeout, or none. */
  nodeEmbeddings: { state: 'none' | 'done' | 'absent' | 'timeout'; seconds?: number; pending?: number };
  overall: Figures;
  byRepo: Record<string, Figures>;
  byCategory: Record<string, Figures>;
  identifier: { n: number; answer_at_1: number; misses: IdentifierRecord[] };
  misses: Array<{
    repo: string;
    id: string;
    category: string;
    question: string;
    gold: string[];
    missingGold: string[];
    answer: string | null;
    answerName: string | null;
    packetRank: number | null;
    findSymbolsRank: number | null;
  }>;
  questions: QuestionRecord[];
  identifiers: IdentifierRecord[];
}

const CATEGORY_ORDER = ['how', 'where', 'callers', 'impact', 'concept', 'identifier'];
const categoryOrder = (c: string) => (CATEGORY_ORDER.indexOf(c) + 1 || CATEGORY_ORDER.length + 1) - 1;

export function summarizeRun(
  meta: Pick<RunResult, 'label' | 'backend' | 'embedder' | 'ranker' | 'nodeEmbeddings'>,
  questions: QuestionRecord[],
  identifiers: IdentifierRecord[],
): RunResult {
  const nl = questions.filter((q) => q.category !== 'identifier');
  return {
    ...meta,
    overall: figures(nl),
    byRepo: figuresBy(nl, (q) => q.repo),
    byCategory: figuresBy(
      [...questions].sort((a, b) => categoryOrder(a.category) - categoryOrder(b.category)),
      (q) => q.category,
    ),
    identifier: {
      n: identifiers.length,
      answer_at_1: r3(mean(identifiers.map((i) => i.answerAt1))),
      misses: identifiers.filter((i) => !i.answerAt1),
    },
    misses: questions
      .filter((q) => !q.answerAt1)
      .map((q) => ({
        repo: q.repo,
        id: q.id,
        category: q.category,
        question: q.question,
        gold: q.gold,
        missingGold: q.missingGold,
        answer: q.answer,
        answerName: q.answerName,
        packetRank: q.packetRank,
        findSymbolsRank: q.findSymbolsRank,
      })),
    questions,
    identifiers,
  };
}

export const BASELINE = [
  { system: 'this service (before issue 21)', answer_at_1: 0.16, gold_recall: 0.48, mrr10: 0.26 },
  { system: 'DevLens (its own engine and analyzer)', answer_at_1: 0.27, gold_recall: 0.44, mrr10: 0.37 },
];
export const TARGETS = { answer_at_1: 0.55, gold_recall: 0.75, find_symbols_mrr10: 0.6, packet_tokens_median: 1500 };

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '—');
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const fi = (x: number) => (Number.isFinite(x) ? String(Math.round(x)) : '—');
const cell = (s: string) => s.replace(/\|/g, '\\|');

function figureRow(label: string, f: Figures): string {
  return `| ${label} | ${f.n} | ${f3(f.answer_at_1)} | ${f3(f.gold_recall)} | ${f3(f.find_symbols_mrr10)} | ${fi(f.packet_tokens.median)} / ${fi(f.packet_tokens.p95)} | ${f1(f.resolve_context_ms.p50)} / ${f1(f.resolve_context_ms.p95)} | ${f1(f.find_symbols_ms.p50)} / ${f1(f.find_symbols_ms.p95)} |`;
}

export interface Report {
  date: string;
  machine: { cpus: number; cpu_model: string; total_memory_gib: number; node: string };
  questions_dir: string;
  repos: Array<{ repo: string; language: string; commit: string; checkout: string; nodes: number; questions: number }>;
  missing_gold: Array<{ repo: string; question: string; ids: string[] }>;
  baseline: typeof BASELINE;
  targets: typeof TARGETS;
  runs: RunResult[];
}

export function markdown(report: Report): string {
  const { runs } = report;
  const ok = (value: number, target: number, higher = true) =>
    Number.isFinite(value) ? ((higher ? value >= target : value <= target) ? ' ✅' : ' ❌') : '';
  const lines = [
    `# bench:context — resolve_context and find_symbols on code questions (${report.date.slice(0, 10)})`,
    '',
    `Machine: ${report.machine.cpus} × ${report.machine.cpu_model}, ${report.machine.total_memory_gib} GiB, Node ${report.machine.node}. ` +
      `Questions: \`${report.questions_dir}\`.`,
    '',
    '| repository | language | commit | graph nodes | questions |',
    '| --- | --- | --- | --- | --- |',
    ...report.repos.map(
      (r) => `| ${r.repo} | ${r.language} | ${r.commit.slice(0, 12)} | ${r.nodes} | ${r.questions} |`,
    ),
    '',
    'ANSWER@1: the packet’s ANSWER is a gold node. Gold recall: the share of a question’s gold nodes among the',
    'packet’s nodes (its IDMAP). MRR@10: 1 / rank of the first gold node in find_symbols’ top 10. Natural-language',
    'questions are all but category `identifier`; the identifier set asks each question’s first gold node by its',
    'name (intent pinpoint). Latencies are client-observed over REST, in ms.',
    '',
    '## Overall (natural-language questions)',
    '',
    `| | ${runs.map((r) => cell(r.label)).join(' | ')} | target |`,
    `| --- | ${runs.map(() => '---').join(' | ')} | --- |`,
    `| questions | ${runs.map((r) => r.overall.n).join(' | ')} | |`,
    `| ANSWER@1 | ${runs.map((r) => f3(r.overall.answer_at_1) + ok(r.overall.answer_at_1, TARGETS.answer_at_1)).join(' | ')} | ≥ ${TARGETS.answer_at_1} |`,
    `| gold recall in packet | ${runs.map((r) => f3(r.overall.gold_recall) + ok(r.overall.gold_recall, TARGETS.gold_recall)).join(' | ')} | ≥ ${TARGETS.gold_recall} |`,
    `| find_symbols MRR@10 | ${runs.map((r) => f3(r.overall.find_symbols_mrr10) + ok(r.overall.find_symbols_mrr10, TARGETS.find_symbols_mrr10)).join(' | ')} | ≥ ${TARGETS.find_symbols_mrr10} |`,
    `| packet tokens median / p95 | ${runs.map((r) => `${fi(r.overall.packet_tokens.median)}${ok(r.overall.packet_tokens.median, TARGETS.packet_tokens_median, false)} / ${fi(r.overall.packet_tokens.p95)}`).join(' | ')} | median ≤ 1,500 |`,
    `| resolve_context p50 / p95 ms | ${runs.map((r) => `${f1(r.overall.resolve_context_ms.p50)} / ${f1(r.overall.resolve_context_ms.p95)}`).join(' | ')} | |`,
    `| find_symbols p50 / p95 ms | ${runs.map((r) => `${f1(r.overall.find_symbols_ms.p50)} / ${f1(r.overall.find_symbols_ms.p95)}`).join(' | ')} | |`,
    `| identifier set ANSWER@1 (n) | ${runs.map((r) => `${f3(r.identifier.answer_at_1)}${ok(r.identifier.answer_at_1, 1)} (${r.identifier.n})`).join(' | ')} | 1.0 |`,
    `| node embeddings | ${runs.map((r) => r.nodeEmbeddings.state + (r.nodeEmbeddings.seconds !== undefined ? ` (${r.nodeEmbeddings.seconds} s)` : '')).join(' | ')} | |`,
    '',
    'For context, the issue’s baseline (held-out set of 75 questions, not these; ANSWER@1 / recall / MRR@10):',
    ...report.baseline.map((b) => `${b.system} ${b.answer_at_1} / ${b.gold_recall} / ${b.mrr10};`),
    `targets ANSWER@1 ≥ ${TARGETS.answer_at_1}, recall ≥ ${TARGETS.gold_recall}, MRR@10 ≥ ${TARGETS.find_symbols_mrr10}, median packet ≤ 1,500 tokens (lexical channel alone), identifier questions 1.0.`,
  ];
  const header = [
    '| | n | ANSWER@1 | gold recall | MRR@10 | tokens median / p95 | resolve_context p50 / p95 | find_symbols p50 / p95 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const run of runs) {
    lines.push(
      '',
      `## ${run.label}`,
      '',
      ...header,
      ...Object.entries(run.byRepo).map(([repo, f]) => figureRow(`${repo} (natural language)`, f)),
      ...Object.entries(run.byCategory).map(([category, f]) => figureRow(`category ${category}`, f)),
      figureRow('**all natural language**', run.overall),
    );
    const shown = run.misses.slice(0, 20);
    if (shown.length) {
      lines.push(
        '',
        `Misses (ANSWER not gold): ${run.misses.length}${run.misses.length > shown.length ? `, first ${shown.length}` : ''}`,
        '',
        '| question | gold | ANSWER | gold in packet at | find_symbols rank |',
        '| --- | --- | --- | --- | --- |',
        ...shown.map(
          (m) =>
            `| ${m.id} (${m.category}) | ${cell(m.gold.join(', '))}${m.missingGold.length ? ` (missing: ${cell(m.missingGold.join(', '))})` : ''} | ${m.answer ? cell(m.answer) : '—'} | ${m.packetRank ?? '—'} | ${m.findSymbolsRank ?? '—'} |`,
        ),
      );
    }
    if (run.identifier.misses.length) {
      lines.push(
        '',
        `Identifier-set misses: ${run.identifier.misses
          .slice(0, 20)
          .map((m) => `\`${cell(m.query)}\` (${m.repo}) → ${m.answer ? cell(m.answer) : 'no answer'}`)
          .join('; ')}`,
      );
    }
  }
  if (report.missing_gold.length) {
    lines.push(
      '',
      '## Gold ids not in the uploaded graph (those questions count as misses)',
      '',
      ...report.missing_gold.map((m) => `- ${m.repo} ${m.question}: ${m.ids.join(', ')}`),
    );
  }
  return lines.join('\n') + '\n';
}
