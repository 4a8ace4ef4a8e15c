import type { Kysely } from 'kysely';
import { ensureNodeVectorIndex } from '../db/queries/graphs/node-vectors.js';
import { ensureVectorIndex } from '../db/queries/memories/vector-index.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';

/**
 * Makes sure an HNSW index exists for each vector dimension the embedder produces (once per process),
 * over memories and over code-graph nodes.
 */
export class VectorIndexes {
  private readonly known = new Map<number, Promise<void>>([[768, Promise.resolve()]]);

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    /** PGlite's sparser memory graphs (migrations/0017). */
    private readonly options: { compact?: boolean } = {},
  ) {}

  ensure(dims: number): Promise<void> {
    let pending = this.known.get(dims);
    if (!pending) {
      pending = Promise.all([
        ensureVectorIndex(this.db, dims, this.options),
        ensureNodeVectorIndex(this.db, dims),
      ]).then(
        ([indexed]) => {
          if (indexed) this.log.info({ dims }, 'vector index ready for this dimension');
          else this.log.warn({ dims }, 'vectors this large cannot be indexed by HNSW: vector search will scan');
        },
        (error: unknown) => {
          // Another instance may be creating it; vector search works without it, only slower.
          this.known.delete(dims);
          this.log.warn({ err: error, dims }, 'could not create the vector index for this dimension');
        },
      );
      this.known.set(dims, pending);
    }
    return pending;
  }
}
