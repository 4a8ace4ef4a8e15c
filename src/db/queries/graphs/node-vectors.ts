import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../schema.js';
import { vectorLiteral } from '../../vector-literal.js';
import { MAX_INDEXED_DIMS } from '../memories/vector-index.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * As for memories (queries/memories/vector-branch.ts): an exact scan costs about 1.5 µs per vector
 * in scope, the HNSW index with a filter about 1.5 ms × (all vectors / vectors in scope). The scope is
 * one commit (its node count); all is every retained commit's (graph_commits.node_count, a few rows).
 * Exact when scope² ≤ EXACT_SCAN_RATIO × all.
 */
const EXACT_SCAN_RATIO = 1000;

export interface NodeHit {
  seq: number;
  node_id: string;
  /** Cosine distance (0 = same direction, 2 = opposite), from the half-precision vectors. */
  distance: number;
}

/**
 * The `limit` nodes of one commit nearest to `vector` by cosine distance, among the nodes with a
 * vector of `model` (and of the vector's dimension); nearest first, ties by seq (through the index,
 * which of several tied nodes make the cut is the index's). A commit small next to all stored nodes
 * is scanned exactly through the primary key; a large one goes through the HNSW index of the
 * dimension (iterative scan, see client.ts). Both are in the statement; one runs.
 */
export async function nearestNodes(
  db: Db,
  g: { graphId: string; commitHash: string },
  vector: number[],
  model: string,
  limit: number,
): Promise<NodeHit[]> {
  if (vector.length === 0 || limit < 1) return [];
  const dims = sql.lit(vector.length);
  const k = sql.lit(Math.min(Math.floor(limit), 1000));
  const literal = vectorLiteral(vector);
  const distance = sql`v.embedding::halfvec(${dims}) <=> ${literal}::halfvec(${dims})`;
  const ofModel = sql`v.embedding_dims = ${dims} and v.embedding_model = ${model}`;
  const result = await sql<NodeHit>`
    with scope as (
      select (select node_count from graph_commits where graph_id = ${g.graphId} and commit_hash = ${g.commitHash})::float8 ^ 2
               <= ${sql.lit(EXACT_SCAN_RATIO)} * (select coalesce(sum(node_count), 0) from graph_commits) as exact
    ), near as materialized (
      -- A fence (offset 0): the HNSW index cannot serve the order, so the commit is scanned once.
      (select seq, distance from (
         select v.seq, ${distance} as distance from graph_node_vectors v
          where (select exact from scope) and v.graph_id = ${g.graphId} and v.commit_hash = ${g.commitHash}
            and ${ofModel}
         offset 0) s
        order by distance, seq
        limit ${k})
      union all
      -- The commit and model tests are one opaque condition that no B-tree serves (as filterSql's
      -- indexable: false): the planner guesses half the rows pass, so the order comes from the HNSW index.
      (select v.seq, ${distance} as distance from graph_node_vectors v
        where not (select exact from scope) and v.embedding_dims = ${dims}
          and coalesce(v.graph_id || '' = ${g.graphId} and v.commit_hash || '' = ${g.commitHash}
                       and v.embedding_model || '' = ${model}, false)
        order by ${distance}
        limit ${k})
    )
    select near.seq, n.node_id, near.distance::float8 as distance
      from near join graph_nodes n on n.graph_id = ${g.graphId} and n.commit_hash = ${g.commitHash} and n.seq = near.seq
     order by near.distance, near.seq
     limit ${k}`.execute(db);
  return result.rows.map((r) => ({ seq: r.seq, node_id: r.node_id, distance: Number(r.distance) }));
}

/** Creates the HNSW index of node vectors of this dimension unless it exists (768's ships with migrations/0011). */
export async function ensureNodeVectorIndex(db: Db, dims: number): Promise<boolean> {
  if (!Number.isInteger(dims) || dims < 1) throw new Error(`bad vector dimension ${dims}`);
  if (dims > MAX_INDEXED_DIMS) return false;
  const d = sql.lit(dims);
  await sql`create index if not exists ${sql.id(`idx_graph_node_vectors_embedding_${dims}`)} on graph_node_vectors
            using hnsw ((embedding::halfvec(${d})) halfvec_cosine_ops) where embedding_dims = ${d}`.execute(db);
  return true;
}
