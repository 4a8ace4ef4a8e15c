import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { DbKind } from '../db/client.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Lull } from '../lull.js';
import type { Metrics } from '../observability/metrics.js';
import { Embedder } from './embedder.js';
import { ollamaProvider } from './ollama.js';
import { noEmbeddings } from './provider.js';
import { VectorIndexes } from './vector-indexes.js';
import { EmbeddingWorker } from './worker.js';

export interface EmbeddingPipeline {
  embedder: Embedder;
  indexes: VectorIndexes;
  worker: EmbeddingWorker;
}

/**
 * The embedder, the vector indexes and the embedding worker as the configuration says (the
 * service, `app.ts`, and `devstream-hub reembed` build them here): the Ollama provider, or none
 * when `EMBEDDING_PROVIDER=none` (memories are stored text-only).
 */
export function embeddingPipeline(
  embedding: Config['embedding'],
  db: Kysely<Database>,
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>,
  metrics?: Metrics,
  options: { engine?: DbKind; background?: Kysely<Database>; lull?: Lull } = {},
): EmbeddingPipeline {
  const provider =
    embedding.provider === 'ollama'
      ? ollamaProvider({ host: embedding.ollamaHost, model: embedding.model, timeoutMs: embedding.timeoutMs })
      : noEmbeddings;
  const embedder = new Embedder(provider, log, metrics);
  const indexes = new VectorIndexes(db, log, { compact: options.engine === 'pglite' });
  // A claimed job's lease outlives the longest embedder call.
  const worker = new EmbeddingWorker(options.background ?? db, embedder, indexes, log, {
    leaseMs: 2 * embedding.timeoutMs + 30_000,
    // PGlite runs one statement at a time: vectors go into its index one per statement (see WorkerOptions).
    vectorsPerStatement: options.engine === 'pglite' ? 1 : undefined,
    lull: options.lull,
  });
  return { embedder, indexes, worker };
}
