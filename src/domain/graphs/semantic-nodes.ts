import { commitHasPendingNodes } from '../../db/queries/graphs/node-embedding-jobs.js';
import { nearestNodes, type NodeHit } from '../../db/queries/graphs/node-vectors.js';
import type { Context, MemoryServices } from '../context.js';

/**
 * How the semantic channel went:
 * - `ok`: the question was embedded and the commit's nodes are all embedded;
 * - `pending`: the question was embedded, but some of the commit's nodes still wait for a vector
 *   (the hits are among those embedded so far, possibly none);
 * - `no-embedder`: EMBEDDING_PROVIDER=none (lexical search alone, by configuration);
 * - `unavailable`: the embedder failed, timed out or is known to be down (lexical alone for now).
 */
export type SemanticStatus = 'ok' | 'no-embedder' | 'pending' | 'unavailable';

export interface SemanticNodeHits {
  /** Nearest first (cosine distance), the configured model's vectors only; empty unless `ok` or `pending`. */
  hits: NodeHit[];
  status: SemanticStatus;
  /** Why there are no hits to fuse (`no-embedder`, `unavailable`), for the answer to say; else null. */
  note: string | null;
}

/** What the channel needs of a request's context (the whole Context will do). */
export type SemanticContext = Pick<Context, 'db' | 'timing'> & { memory: Pick<MemoryServices, 'embedder'> };

/**
 * The semantic channel of code search: the `limit` nodes of one commit nearest to `question`. The
 * question is embedded as memory search embeds its query (the request's embedder call: the provider's
 * timeout, and the circuit breaker that skips an embedder known to be down), so this never throws
 * because the embedder is down and never waits on one known to be down: the status says why there are
 * no hits, and the caller ranks lexically alone.
 */
export async function semanticNodeHits(
  ctx: SemanticContext,
  g: { graphId: string; commitHash: string },
  question: string,
  limit: number,
): Promise<SemanticNodeHits> {
  const { embedder } = ctx.memory;
  if (!embedder.enabled) {
    return { hits: [], status: 'no-embedder', note: 'embeddings are disabled (EMBEDDING_PROVIDER=none)' };
  }
  const embedStarted = performance.now();
  const attempt = await embedder.tryEmbed([question], 'query');
  ctx.timing('embed', performance.now() - embedStarted);
  if (!attempt.ok) return { hits: [], status: 'unavailable', note: attempt.reason };
  const [hits, pending] = await Promise.all([
    nearestNodes(ctx.db, g, attempt.vectors[0]!, attempt.model, limit),
    commitHasPendingNodes(ctx.db, g),
  ]);
  return { hits, status: pending ? 'pending' : 'ok', note: null };
}
