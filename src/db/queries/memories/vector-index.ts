import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** pgvector's HNSW indexes `halfvec` up to this many dimensions; beyond it, vector search scans. */
export const MAX_INDEXED_DIMS = 4000;
/** A B-tree entry holds a halfvec up to about this many dimensions (see migrations/0009). */
const MAX_SCOPE_INDEXED_DIMS = 1024;

/**
 * Creates the indexes for vectors of this dimension unless they exist (768's ship with the schema):
 * HNSW for large scopes, and the covering B-tree that exact scans of a project read (migrations/0021).
 * Returns false when the dimension is too large for HNSW.
 */
export async function ensureVectorIndex(db: Db, dims: number, options: { compact?: boolean } = {}): Promise<boolean> {
  if (!Number.isInteger(dims) || dims < 1) throw new Error(`bad vector dimension ${dims}`);
  if (dims > MAX_INDEXED_DIMS) return false;
  const d = sql.lit(dims);
  // compact: PGlite's sparser graph (migrations/0017).
  const graph = options.compact ? sql`with (m = 8, ef_construction = 32)` : sql``;
  await sql`create index if not exists ${sql.id(`idx_memory_vectors_embedding_${dims}`)} on memory_vectors
            using hnsw ((embedding::halfvec(${d})) halfvec_cosine_ops) ${graph} where embedding_dims = ${d}`.execute(
    db,
  );
  if (dims <= MAX_SCOPE_INDEXED_DIMS) {
    // Keyed on the expression the exact branch filters by, which no other index holds (migrations/0020).
    await sql`create index if not exists ${sql.id(`idx_memory_vectors_scope_${dims}`)} on memory_vectors ((project_id || ''), content_type)
              include (project_id, memory_id, created_at, embedding_model, embedding)
              where embedding_dims = ${d}`.execute(db);
  }
  return true;
}
