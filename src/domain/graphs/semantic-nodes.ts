import { commitVectorState } from '../../db/queries/graphs/node-embedding-jobs.js';
import { nearestNodes, type NodeHit } from '../../db/queries/graphs/node-vectors.js';
import type { Context, MemoryServices } from '../context.js';

/**
 * How the semantic channel went:
 * - `ok`: the question was embedded and compared with the commit's nodes, all of them embedded;
 * - `pending`: some of the commit's nodes still wait for a vector; the hits are among those embedded
 *   so far (none, without embedding the question, when none is yet);
 * - `no-embedder`: EMBEDDING_PROVIDER=none (lexical search alone, by configuration);
 * - `unavailable`: the embedder failed, timed out or is known to be down, or no node of the commit
 *   has a vector of the configured model and none is queued (an upload from before node embeddings):
 *   lexical alone, and `note` says why.
 */
export type SemanticStatus = 'ok' | 'no-embedder' | 'pending' | 'unavailable';

export interface SemanticNodeHits {
  /** Nearest first (cosine distance), the configured model's vectors only; empty unless `ok` or `pending`. */
  hits: NodeHit[];
  status: SemanticStatus;
  /** Why the channel has no hits or only some (every status but `ok`), for the answer to say; null when `ok`. */
  note: string | null;
}

/** What the channel needs of a request's context (the whole Context will do). */
export type SemanticContext = Pick<Context, 'db' | 'timing'> & { memory: Pick<MemoryServices, 'embedder'> };

/**
 * The semantic channel of code search: the `limit` nodes of one commit nearest to `question`. The
 * question is embedded as memory search embeds its query (the request's embedder call: the provider's
 * timeout, and the circuit breaker that skips an embedder known to be down), so this never throws
 * because the embedder is down and never waits on one known to be down: the status says why there are
 * no hits, and the caller ranks lexically alone. A commit without vectors of the model costs no
 * embedder call.
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
  const model = embedder.model;
  const state = model === null ? { vectors: false, pending: false } : await commitVectorState(ctx.db, g, model);
  if (!state.vectors) {
    return state.pending
      ? { hits: [], status: 'pending', note: "this commit's nodes are still waiting for their vectors" }
      : {
          hits: [],
          status: 'unavailable',
          note: `no node of this commit has a vector of ${model ?? 'the model'}: upload the commit again to embed them`,
        };
  }
  const embedStarted = performance.now();
  const attempt = await embedder.tryEmbed([question], 'query');
  ctx.timing('embed', performance.now() - embedStarted);
  if (!attempt.ok) return { hits: [], status: 'unavailable', note: attempt.reason };
  const hits = await nearestNodes(ctx.db, g, attempt.vectors[0]!, attempt.model, limit);
  return state.pending
    ? { hits, status: 'pending', note: "some of this commit's nodes are still waiting for their vectors" }
    : { hits, status: 'ok', note: null };
}
