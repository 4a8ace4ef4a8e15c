-- Exact vector scans read their vectors from an index instead of the table. A project's hybrid
-- search scans its memories' vectors exactly (src/db/queries/memories.ts); through the filter index
-- that meant a bitmap heap scan of every row (~2,400 pages for 6,300 memories at 100k: 10 ms). An
-- index holding the vector and what the exact branch filters on answers it with an index-only scan
-- (~6 ms). Per dimension, as the HNSW indexes, and only where a B-tree entry surely holds the vector
-- (halfvec up to 1,024 dimensions: 2 KB of a 2.7 KB entry, room left for a long model name); larger
-- vectors keep the heap scan.
-- Only rows with a vector: a store writes none (the worker moves it in, see 0007), so stores do not
-- pay for this index. At 100k memories of 768 dimensions it takes ~210 MB.

DO $$
DECLARE d int;
BEGIN
  FOR d IN
    SELECT 768
    UNION
    SELECT substring(c.relname FROM '(\d+)$')::int
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'semantic_memory'::regclass AND c.relname ~ '^idx_semantic_memory_embedding_\d+$'
  LOOP
    IF d <= 1024 THEN
      EXECUTE format(
        'CREATE INDEX IF NOT EXISTS %I ON semantic_memory (project_id, content_type) '
        'INCLUDE (id, created_at, embedding_model, embedding) '
        'WHERE archived_at IS NULL AND embedding IS NOT NULL AND embedding_dims = %s',
        'idx_semantic_memory_scope_' || d, d);
    END IF;
  END LOOP;
END $$;
