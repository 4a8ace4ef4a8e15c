-- 1. Keep a memory's row in one piece. With a 3 KB vector in the row (STORAGE MAIN, see 0002), Postgres'
-- default toast target (~2 KB) pushed the other variable-length columns out of line: every keyword
-- candidate's tsvector and every hit's content cost a TOAST index probe (measured at 100k memories:
-- 4 buffer reads per candidate, most of a keyword search's time). Rows are now compressed or split
-- only when they would not fit in a page; long contents still go to TOAST. Rows written before
-- this migration keep their layout until rewritten (VACUUM FULL semantic_memory).
ALTER TABLE semantic_memory SET (toast_tuple_target = 8160);

-- 2. The vector indexes hold half-precision copies of the vectors (pgvector's halfvec): half the
-- bytes per graph node, so a search or an insert reads half the pages (measured at 100k memories,
-- 768-D: index 391 → 197 MB, store p95 29 → 17 ms, recall against exact search unchanged) and
-- dimensions up to 4,000 can be indexed. Searches rank through the index and report the exact
-- (full-precision) distance. Rebuilds every existing per-dimension index (one pass over the rows).
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT c.relname, substring(c.relname FROM '(\d+)$')::int AS dims
             FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = 'semantic_memory'::regclass AND c.relname ~ '^idx_semantic_memory_embedding_\d+$'
  LOOP
    EXECUTE format('DROP INDEX %I', r.relname);
    IF r.dims <= 4000 THEN
      EXECUTE format('CREATE INDEX %I ON semantic_memory USING hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops) WHERE embedding_dims = %s',
                     r.relname, r.dims, r.dims);
    END IF;
  END LOOP;
END $$;
