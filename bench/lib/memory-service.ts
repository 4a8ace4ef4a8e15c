/**
 * Helpers of the benchmarks that drive the memory service over REST (bench/memory.ts, bench/hooks.ts):
 * a JSON POST that reads the Server-Timing header, a worker pool, loading LoCoMo, waiting for the
 * embedding queue, and the embedders (`--embedder glove|fake|ollama`).
 */
import { FakeOllama } from '../../support/fake-ollama.js';
import { startGloveOllama } from './glove-ollama.js';
import type { Turn } from './locomo.js';

/** One `name;dur=<ms>` entry of a Server-Timing header; NaN when absent. */
export function timingPart(header: string, name: string): number {
  return Number(new RegExp(`(?:^|[,\\s])${name};dur=([\\d.]+)`).exec(header)?.[1] ?? Number.NaN);
}

export async function post(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; serverMs: number | null; embedMs: number; timing: string }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  const timing = response.headers.get('server-timing') ?? '';
  const op = timingPart(timing, 'op');
  const embed = timingPart(timing, 'embed');
  return {
    status: response.status,
    body: json,
    serverMs: Number.isNaN(op) ? null : op,
    embedMs: Number.isNaN(embed) ? 0 : embed,
    timing,
  };
}

/** Runs `work(i)` for i in [0, n) with `concurrency` workers. */
export async function pool(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        await work(i);
      }
    }),
  );
}

/** The project of a LoCoMo conversation (`locomo conv-26`). */
export const locomoProject = (conv: string): string => `locomo ${conv}`;

/** Every conversation in one project (`bench:memory -- --quality --one-project`). */
export const LOCOMO_ONE_PROJECT = 'locomo all';

/**
 * Each conversation is stored in order (as one agent would), the conversations in parallel; the
 * answer maps a turn's id to its memory's id. `projectOf` names a conversation's project.
 */
export async function loadLocomo(
  url: string,
  turns: Turn[],
  concurrency: number,
  headers: Record<string, string> = {},
  projectOf: (conv: string) => string = locomoProject,
): Promise<Map<string, string>> {
  const memoryOf = new Map<string, string>();
  const conversations = [...new Set(turns.map((t) => t.conv))];
  await pool(conversations.length, concurrency, async (c) => {
    for (const turn of turns.filter((t) => t.conv === conversations[c])) {
      const r = await post(
        url,
        '/api/v1/memories',
        { content: turn.content, content_type: 'context', project: projectOf(turn.conv) },
        headers,
      );
      if (r.status !== 201) throw new Error(`store failed: ${r.status} ${JSON.stringify(r.body)}`);
      memoryOf.set(turn.id, r.body.memory_id);
    }
  });
  return memoryOf;
}

export async function ollamaAnswers(host: string | undefined): Promise<boolean> {
  if (!host) return false;
  try {
    const base = /^[a-z]+:\/\//i.test(host) ? host : `http://${host}`;
    return (await fetch(`${base.replace(/\/+$/, '')}/api/version`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

/** Resolves once the service's embedding queue is empty (GET /readyz). */
export async function waitForEmbeddings(
  url: string,
  timeoutMs: number,
  onWait?: (pending: number) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = Date.now();
  for (;;) {
    const ready = (await (await fetch(`${url}/readyz`)).json()) as { embeddings?: { queue?: { pending: number } } };
    const pending = ready.embeddings?.queue?.pending;
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`embedding queue not drained: ${JSON.stringify(ready.embeddings)}`);
    if (onWait && pending !== undefined && Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      onWait(pending);
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

export type EmbedderKind = 'ollama' | 'glove' | 'fake';

export interface Embedder {
  /** The service's Ollama settings. */
  env: Record<string, string>;
  label: string;
  model: string;
  close(): Promise<void>;
}

/** The embedder of the vector and hybrid runs, as the service's Ollama settings; null when there is none. */
export async function startEmbedder(kind: EmbedderKind): Promise<Embedder | null> {
  if (kind === 'glove') {
    const glove = await startGloveOllama();
    return {
      env: { OLLAMA_HOST: glove.url, OLLAMA_EMBEDDING_MODEL: glove.model },
      label: `GloVe ${glove.dimensions}-D (${glove.model}, SIF-weighted mean)`,
      model: glove.model,
      close: () => glove.close(),
    };
  }
  if (kind === 'fake') {
    const fake = await new FakeOllama().start();
    return {
      env: { OLLAMA_HOST: fake.url, OLLAMA_EMBEDDING_MODEL: 'nomic-embed-text' },
      label: 'fake embedder (768-D bags of hashed words, support/fake-ollama.ts)',
      model: 'fake nomic-embed-text',
      close: () => fake.stop(),
    };
  }
  if (!(await ollamaAnswers(process.env.OLLAMA_HOST))) return null;
  const model = process.env.OLLAMA_EMBEDDING_MODEL ?? 'nomic-embed-text';
  return { env: {}, label: `Ollama ${model}`, model, close: async () => {} };
}

/** `n` of the items, evenly spread over the list (so over every conversation and category). */
export function spread<T>(items: T[], n: number | undefined): T[] {
  if (n === undefined || n >= items.length) return items;
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]!);
}
