-- Memories' vectors move out of semantic_memory into a table of their own (decision 0006, 2026-12-06).
-- The embedding worker used to move each staged vector into its memory's row: an UPDATE of an indexed
-- column, so never a HOT update. Each moved vector wrote a new ~3.5 KB row version with an entry in
-- every index of semantic_memory (the GIN ones with ~60 words a memory among them) and left a dead row
-- that autovacuum later removed from every index, the HNSW one included. On the 10k store of
-- DevStream's workload a batch of 32 took 36-44 ms and 930-1,010 KB of WAL; inserting the same vectors
-- into a table holding the vector and its filters, with its own HNSW index, 19-25 ms and 56-60 KB.
--
-- memory_vectors holds, beside the vector, the memory's columns a vector search filters on (project,
-- content type, date): a project's exact scan still reads one covering index (decision 0004). They
-- never change after a store. A memory's row keeps its model and dimensions (of its vector, staged or
-- here); a deleted memory has no row here. Archived memories' vectors are not copied.

CREATE TABLE memory_vectors (
  memory_id       varchar(32) PRIMARY KEY REFERENCES semantic_memory (id) ON DELETE CASCADE,
  project_id      varchar(32),
  content_type    varchar(20) NOT NULL,
  created_at      timestamptz NOT NULL,
  embedding_model text NOT NULL,
  embedding_dims  integer NOT NULL,
  embedding       halfvec NOT NULL,
  CHECK (vector_dims(embedding) = embedding_dims)
);
-- Vectors stay in the row, as they did in semantic_memory (0002, 0003): an exact scan through the
-- HNSW index's heap fetches reads pages, not a TOAST lookup per row.
ALTER TABLE memory_vectors ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE memory_vectors SET (toast_tuple_target = 8160);

INSERT INTO memory_vectors (memory_id, project_id, content_type, created_at, embedding_model, embedding_dims, embedding)
SELECT id, project_id, content_type, created_at, embedding_model, embedding_dims, embedding
  FROM semantic_memory
 WHERE embedding IS NOT NULL AND archived_at IS NULL;

-- The indexes of each dimension that had them (768's always): HNSW for large scopes, the covering
-- B-tree for a project's exact scan (keyed on the expression the exact branch filters by: 0020), as
-- src/db/queries/memories/vector-index.ts creates them for a new dimension. PGlite's graph is the
-- sparser one of 0017.
DO $$
DECLARE
  d int;
  graph text := CASE WHEN version() LIKE '%PGlite%' THEN ' WITH (m = 8, ef_construction = 32)' ELSE '' END;
BEGIN
  FOR d IN
    SELECT 768
    UNION
    SELECT substring(c.relname FROM '(\d+)$')::int
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'semantic_memory'::regclass AND c.relname ~ '^idx_semantic_memory_embedding_\d+$'
  LOOP
    EXECUTE format(
      'CREATE INDEX %I ON memory_vectors USING hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops)%s '
      'WHERE embedding_dims = %s',
      'idx_memory_vectors_embedding_' || d, d, graph, d);
    IF d <= 1024 THEN
      EXECUTE format(
        'CREATE INDEX %I ON memory_vectors ((project_id || ''''), content_type) '
        'INCLUDE (project_id, memory_id, created_at, embedding_model, embedding) '
        'WHERE embedding_dims = %s',
        'idx_memory_vectors_scope_' || d, d);
    END IF;
  END LOOP;
END $$;

-- Dropping the column drops its indexes (HNSW and covering, every dimension) and the check that named it.
ALTER TABLE semantic_memory DROP COLUMN embedding;
ALTER TABLE semantic_memory ADD CONSTRAINT semantic_memory_vector_model
  CHECK ((embedding_model IS NULL) = (embedding_dims IS NULL));
