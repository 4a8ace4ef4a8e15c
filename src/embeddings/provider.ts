/** What a text is embedded for: stored memories and search queries get different task prefixes. */
export type EmbedKind = 'document' | 'query';

/** Turns texts into vectors (design.md §6). Implementations throw EmbeddingError on any failure. */
export interface EmbeddingProvider {
  readonly name: 'ollama' | 'none';
  /** The model whose vectors this provider makes; null when it makes none. */
  readonly model: string | null;
  embed(texts: string[], kind: EmbedKind): Promise<number[][]>;
}

/** The embedder failed (unreachable, timed out, or answered with an error or a bad vector). */
export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError';
}

/** `EMBEDDING_PROVIDER=none`: keyword search only, no vectors ever. */
export const noEmbeddings: EmbeddingProvider = {
  name: 'none',
  model: null,
  embed: () => Promise.reject(new EmbeddingError('no embedding provider is configured (EMBEDDING_PROVIDER=none)')),
};

/**
 * Task prefixes the model was trained with. nomic-embed-text ranks much better when stored text
 * and queries are marked (`search_document: ` / `search_query: `); other models get the text as is.
 */
export function taskPrefix(model: string, kind: EmbedKind): string {
  if (/^nomic-embed-text/i.test(model)) return kind === 'document' ? 'search_document: ' : 'search_query: ';
  return '';
}

/** Checks an embedder's answer: one finite, non-empty vector per text, all of one dimension. */
export function checkVectors(vectors: unknown, count: number): number[][] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw new EmbeddingError(`expected ${count} embeddings, got ${Array.isArray(vectors) ? vectors.length : 'none'}`);
  }
  const dims = (vectors[0] as unknown[] | undefined)?.length ?? 0;
  if (dims === 0 || dims > 16_000) throw new EmbeddingError(`embeddings have an unusable dimension (${dims})`);
  for (const v of vectors as unknown[]) {
    if (!Array.isArray(v) || v.length !== dims || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new EmbeddingError(`embeddings are not all finite ${dims}-dimensional vectors`);
    }
  }
  // The vector index holds half-precision copies (see migrations/0003): a value it cannot hold
  // would fail the insert, so such a vector is refused here and the memory stored text-only.
  if ((vectors as number[][]).some((v) => v.some((x) => Math.abs(x) > HALFVEC_MAX))) {
    throw new EmbeddingError(`embeddings have values beyond ±${HALFVEC_MAX}, which the vector index cannot store`);
  }
  return vectors as number[][];
}

/** The largest magnitude a half-precision float (pgvector's halfvec) holds. */
const HALFVEC_MAX = 65504;
