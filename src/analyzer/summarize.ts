import { createHash } from 'node:crypto';
import { Ollama } from 'ollama';
import { z } from 'zod';
import type { CommitFile, GraphNode } from '../commit-file.js';

/** What a node's summaries are, as DevLens's commit files carry them. */
export interface NodeSummaries {
  technicalSummary: string;
  businessSummary: string;
  security: { severity: SecuritySeverity; summary: string };
}

export const SECURITY_SEVERITIES = ['none', 'low', 'medium', 'high', 'critical'] as const;
export type SecuritySeverity = (typeof SECURITY_SEVERITIES)[number];

/** A summarized node: its summaries and the model that wrote them, by code hash (for reuse). */
export interface KnownSummary extends NodeSummaries {
  model: string;
}

export interface SummarizeOptions {
  /** Ollama's URL (OLLAMA_HOST), e.g. http://127.0.0.1:11434. */
  host: string;
  /** The chat model (OLLAMA_SUMMARY_MODEL), e.g. qwen2.5-coder:7b. */
  model: string;
  /** Requests to the model at once (default 4). */
  concurrency?: number;
  /** Per node, from sending to the last byte of the answer (default 120 s). */
  timeoutMs?: number;
  /** Summaries already written for code of these hashes (the previous commit's): reused, not asked again. */
  known?: ReadonlyMap<string, KnownSummary>;
  /** Called before the first node and after each: how many are done of the total, and how many were reused or failed. */
  onProgress?: (progress: SummarizeProgress) => void;
}

export interface SummarizeProgress {
  done: number;
  total: number;
  asked: number;
  reused: number;
  failed: number;
}

export interface SummarizeResult extends SummarizeProgress {
  /** Nodes the model summarized (asked and answered as asked). */
  answered: number;
  /** Why the model was given up on (unreachable, or every request failing), when it was. */
  gaveUp?: string;
}

/** Node types summarized: the symbols (a file's own text is its symbols'). */
const SKIPPED_TYPES = new Set(['FILE', 'TEST', 'ROUTE']);
/** Code sent to the model at most, per node (the model's context is the limit, not the node's size). */
const MAX_CODE_CHARS = 6_000;
/** After this many failures in a row with nothing answered, the model is taken to be down: the rest keep their doc comments. */
const GIVE_UP_AFTER = 5;
/** Longest summary field kept (a model that rambles is clipped, not stored whole). */
const MAX_FIELD_CHARS = 2_000;

/** The hash a node's code is known by across commits: SHA-256 of its raw code (hex, 32 characters). */
export function codeHashOf(node: Pick<GraphNode, 'rawCode'>): string | undefined {
  if (node.rawCode === undefined || node.rawCode === '') return undefined;
  return createHash('sha256').update(node.rawCode).digest('hex').slice(0, 32);
}

const field = z
  .string()
  .trim()
  .min(1)
  .transform((s) => s.slice(0, MAX_FIELD_CHARS));

/** The model's answer, as the prompt asks for it; anything else is a failed node. */
const AnswerSchema = z.object({
  technicalSummary: field,
  businessSummary: field,
  security: z.object({
    severity: z
      .string()
      .transform((s) => s.trim().toLowerCase())
      .pipe(z.enum(SECURITY_SEVERITIES)),
    summary: field,
  }),
});

function promptFor(node: GraphNode): string {
  const code = (node.rawCode ?? '').slice(0, MAX_CODE_CHARS);
  return [
    `Summarize this ${node.type.toLowerCase()} \`${node.name}\` from ${node.filePath} for a code search index.`,
    'Answer with JSON only, in exactly this shape:',
    '{"technicalSummary": "what it does and how, 1-3 sentences naming its inputs, outputs and side effects",',
    ' "businessSummary": "why it exists: the behaviour a user or the product sees, 1-2 sentences",',
    ' "security": {"severity": "none|low|medium|high|critical", "summary": "one line: the security-relevant aspect, or that there is none"}}',
    'Describe only what the code shows; do not guess at code you cannot see.',
    ...(node.technicalSummary ? ['', 'Its doc comment:', node.technicalSummary] : []),
    '',
    '```',
    code,
    '```',
  ].join('\n');
}

/** Why a request failed, in a line (never the node's code). */
function describe(error: unknown, host: string, model: string, timeoutMs: number): string {
  const err = error as { name?: string; message?: string; status_code?: number; cause?: { code?: string } };
  if (err.name === 'TimeoutError') return `the model did not answer within ${timeoutMs} ms`;
  if (err.name === 'ResponseError')
    return `Ollama answered ${err.status_code ?? 'an error'} for "${model}": ${err.message}`;
  if (err.cause?.code) return `Ollama is unreachable at ${host} (${err.cause.code})`;
  if (error instanceof z.ZodError || error instanceof SyntaxError) return 'the answer was not the JSON asked for';
  return err.message ?? String(error);
}

/**
 * Writes technical, business and security summaries into `nodes` (in place) with a chat model
 * through the `ollama` client, as `devlens analyze --summarize` does: `metadata.summarySource =
 * 'llm'` and `metadata.summaryModel`, and `codeHash` on every node with code. A node whose code hash
 * is `known` (the previous commit's summaries) takes those without asking the model, so a re-run
 * on an unchanged commit asks nothing. A node the model fails (timeout, error, an answer that is
 * not the JSON asked for) keeps what it had — its doc comment at most — and counts as failed;
 * after GIVE_UP_AFTER failures in a row with none answered yet, the rest are not asked (the model
 * is down). Bounded concurrency; never throws for the model's sake.
 */
export async function summarizeNodes(nodes: GraphNode[], options: SummarizeOptions): Promise<SummarizeResult> {
  const { host, model } = options;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const client = new Ollama({
    host,
    fetch: (input, init) => {
      const timeout = AbortSignal.timeout(timeoutMs);
      return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
    },
  });
  for (const node of nodes) {
    const hash = codeHashOf(node);
    if (hash) (node as GraphNode & { codeHash?: string }).codeHash = hash;
  }
  const wanted = nodes.filter((n) => !SKIPPED_TYPES.has(n.type) && codeHashOf(n) !== undefined);
  const progress: SummarizeProgress = { done: 0, total: wanted.length, asked: 0, reused: 0, failed: 0 };
  let answered = 0;
  let failedInARow = 0;
  let gaveUp: string | undefined;

  const apply = (node: GraphNode, summaries: NodeSummaries, by: string) => {
    node.technicalSummary = summaries.technicalSummary;
    Object.assign(node, { businessSummary: summaries.businessSummary, security: summaries.security });
    node.metadata = { ...node.metadata, summarySource: 'llm', summaryModel: by };
  };
  const summarize = async (node: GraphNode) => {
    const known = options.known?.get(codeHashOf(node)!);
    if (known) {
      apply(node, known, known.model);
      progress.reused++;
      return;
    }
    if (gaveUp) {
      progress.failed++;
      return;
    }
    progress.asked++;
    try {
      const response = await client.chat({
        model,
        messages: [{ role: 'user', content: promptFor(node) }],
        format: 'json',
        stream: false,
        options: { temperature: 0 },
      });
      apply(node, AnswerSchema.parse(JSON.parse(response.message.content)), model);
      answered++;
      failedInARow = 0;
    } catch (error) {
      progress.failed++;
      failedInARow++;
      if (answered === 0 && failedInARow >= GIVE_UP_AFTER) gaveUp ??= describe(error, host, model, timeoutMs);
    }
  };

  options.onProgress?.({ ...progress });
  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const node = wanted[next++]!;
      await summarize(node);
      progress.done++;
      options.onProgress?.({ ...progress });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  return { ...progress, answered, ...(gaveUp ? { gaveUp } : {}) };
}

/**
 * summarizeNodes over a commit's nodes, then its `stats.documentedNodes` counted again (the nodes
 * with a technical summary now): what `analyze --summarize` and the server's analyze job run.
 */
export async function summarizeCommit(commit: CommitFile, options: SummarizeOptions): Promise<SummarizeResult> {
  const result = await summarizeNodes(commit.nodes, options);
  commit.stats.documentedNodes = commit.nodes.filter((n) => n.technicalSummary).length;
  return result;
}

/** The LLM summaries of a commit's nodes by code hash (a previous commit file's), for `known`. */
export function knownSummaries(
  nodes: Iterable<Partial<GraphNode> & { businessSummary?: unknown; security?: unknown; codeHash?: unknown }>,
): Map<string, KnownSummary> {
  const known = new Map<string, KnownSummary>();
  for (const node of nodes) {
    const metadata = (node.metadata ?? {}) as Record<string, unknown>;
    if (metadata.summarySource !== 'llm') continue;
    const hash = typeof node.codeHash === 'string' ? node.codeHash : codeHashOf({ rawCode: node.rawCode });
    const parsed = AnswerSchema.safeParse(node);
    if (!hash || !parsed.success) continue;
    known.set(hash, { ...parsed.data, model: typeof metadata.summaryModel === 'string' ? metadata.summaryModel : '' });
  }
  return known;
}

/** A stored node's model summaries as the server reads them (null where absent), by the hash of its code. */
export interface StoredSummary {
  codeHash: string;
  technicalSummary: string | null;
  businessSummary: string | null;
  security: { severity: string | null; summary: string | null };
  model: string | null;
}

/** knownSummaries of stored summaries (the server's latest commit): those complete enough to reuse. */
export function knownFromStored(stored: Iterable<StoredSummary>): Map<string, KnownSummary> {
  return knownSummaries(
    [...stored].map((s) => ({
      codeHash: s.codeHash,
      technicalSummary: s.technicalSummary ?? undefined,
      businessSummary: s.businessSummary ?? undefined,
      security: { severity: s.security.severity ?? undefined, summary: s.security.summary ?? undefined },
      metadata: { summarySource: 'llm', summaryModel: s.model ?? undefined },
    })),
  );
}
