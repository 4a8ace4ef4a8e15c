-- Embedded PGlite: the memories' HNSW index is a sparser graph (m 8, ef_construction 32; pgvector's
-- defaults are 16 and 64). PGlite computes distances in WASM: putting one vector into the default
-- graph took 8.6 ms at the median and 34 ms at p90 (10,000 memories), into this one 3.4 and 9.6, and
-- it runs on the service's own thread. Searches probe it with ef_search 40 (client.ts). Only a
-- database with no vector yet is changed (rebuilding 10,000 took 37 s); Postgres keeps the defaults.
DO $$
BEGIN
  IF version() LIKE '%PGlite%' AND NOT EXISTS (SELECT 1 FROM semantic_memory WHERE embedding IS NOT NULL) THEN
    DROP INDEX IF EXISTS idx_semantic_memory_embedding_768;
    CREATE INDEX idx_semantic_memory_embedding_768 ON semantic_memory
      USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WITH (m = 8, ef_construction = 32)
      WHERE embedding_dims = 768;
  END IF;
END $$;
