-- Each memory's place in its project's order of storing (1, 2, 3, ...): one more than the project's
-- latest live memory's when it is stored (see memoryInsertCtes; memories stored at the same moment
-- may share a number). The keyword branch's session context reads it: a hit's neighbours are the
-- candidates within two places of it, found among the candidates themselves (a join), where each
-- of the top hits used to look them up in an index on (project_id, created_at, id) with two probes
-- (at 30,000 memories in one project a third of the keyword branch's time; ADR 0003). Numbered here
-- in the order that index gave. This rewrites each memory row once: 30,000 memories with 768-D
-- vectors took 30 s on the benchmark machine, 22 of them in the HNSW index; VACUUM later reclaims
-- the old row versions.
ALTER TABLE semantic_memory ADD COLUMN project_seq bigint;

UPDATE semantic_memory m
   SET project_seq = o.n
  FROM (SELECT id, row_number() OVER (PARTITION BY project_id ORDER BY created_at, id) AS n
          FROM semantic_memory
         WHERE archived_at IS NULL AND project_id IS NOT NULL) o
 WHERE m.id = o.id;

-- The insert's "latest in the project" (index only), in place of the neighbour lookups' index.
CREATE INDEX idx_semantic_memory_project_seq ON semantic_memory (project_id, project_seq) WHERE archived_at IS NULL;
DROP INDEX idx_semantic_memory_sequence;
