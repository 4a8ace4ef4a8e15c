-- A project's exact vector scan (src/db/queries/memories/vector-branch.ts) reads the covering index of
-- migration 0009 with an index-only scan. Its key was (project_id, content_type), the same leading
-- column as idx_semantic_memory_filters and idx_semantic_memory_project_seq, and the planner picked
-- one of those when a project's rows lie together in the table (a bulk load, a project written at a
-- stretch): their heap fetches are costed as nearly sequential, the covering index's larger pages
-- as random. At 100,000 memories in 17 projects (5,880 in the one searched) that plan took 7.2-7.8 ms
-- at p50 against 5.5-5.9 for the index-only scan. The key is now the expression the exact branch
-- filters on, `project_id || ''`, which no other index holds: only this index serves a project's
-- exact scan. `project_id` itself is included, as an index-only scan of an expression index needs.
-- Rebuilding it took 1.5 s at 100,000 memories of 768 dimensions.
DO $$
DECLARE d int;
BEGIN
  FOR d IN
    SELECT substring(c.relname FROM '(\d+)$')::int
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'semantic_memory'::regclass AND c.relname ~ '^idx_semantic_memory_scope_\d+$'
  LOOP
    EXECUTE format('DROP INDEX %I', 'idx_semantic_memory_scope_' || d);
    EXECUTE format(
      'CREATE INDEX %I ON semantic_memory ((project_id || ''''), content_type) '
      'INCLUDE (project_id, id, created_at, embedding_model, embedding) '
      'WHERE archived_at IS NULL AND embedding IS NOT NULL AND embedding_dims = %s',
      'idx_semantic_memory_scope_' || d, d);
  END LOOP;
END $$;
