-- A store no longer inserts into the HNSW index on the request path. At 100k memories (768-D) that
-- insert cost ~6 ms of a store's ~8.5 ms p50 (13.4 ms p95; the target is 10): a store now writes the
-- memory (model and dimensions set, `embedding` still NULL) and its vector into its embedding job,
-- in one statement; the embedding worker moves staged vectors into the row (and so into the index)
-- in batches, off the request path. Searches scan the staged vectors exactly beside the index
-- (src/db/queries/memories.ts), so a memory is vector-findable the moment its store returns.
-- A job with a vector needs no embedder: it is indexed even while the embedder is down.

ALTER TABLE embedding_jobs ADD COLUMN embedding halfvec;

-- Searches look only at staged vectors: this stays small even when thousands of memories wait for
-- the embedder (after a model change), and empty most of the time.
CREATE INDEX idx_embedding_jobs_staged ON embedding_jobs (memory_id) WHERE embedding IS NOT NULL;

-- A memory may now name its model and dimensions while its vector is still staged.
ALTER TABLE semantic_memory DROP CONSTRAINT semantic_memory_check1;
ALTER TABLE semantic_memory ADD CONSTRAINT semantic_memory_vector_model
  CHECK ((embedding_model IS NULL) = (embedding_dims IS NULL) AND (embedding IS NULL OR embedding_model IS NOT NULL));
