-- Access counts live beside the memories, not in their rows. A memory's row is ~3.5 KB (its vector
-- is in it), two to a page: bumping access_count could never be a HOT update, so every search wrote
-- a new version of each hit with an entry in all nine indexes, the HNSW one included (measured at
-- 100k memories: 281 ms and 417 kB of WAL to count one search's 10 hits). Here a count is a narrow
-- row, updated in place (fillfactor leaves room for HOT updates).
CREATE TABLE memory_access (
  memory_id        varchar(32) PRIMARY KEY REFERENCES semantic_memory (id) ON DELETE CASCADE,
  access_count     integer NOT NULL DEFAULT 0 CHECK (access_count >= 0),
  last_accessed_at timestamptz
) WITH (fillfactor = 70);

INSERT INTO memory_access (memory_id, access_count, last_accessed_at)
  SELECT id, access_count, last_accessed_at FROM semantic_memory
   WHERE access_count > 0 OR last_accessed_at IS NOT NULL;

ALTER TABLE semantic_memory DROP COLUMN access_count, DROP COLUMN last_accessed_at;
