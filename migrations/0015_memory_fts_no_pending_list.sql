-- Stores and the embedding worker's updates put their full-text entries straight into the GIN index
-- instead of its pending list. The pending list is merged only by VACUUM (or when it passes 4 MB),
-- and every search scans all of it: right after a burst of stores (10,000 in one project, one at a
-- time) it held 1,787 entries on 250 pages, and searches took 29 ms at p50 until autovacuum came by
-- (10 ms after). PGlite has no autovacuum at all.
ALTER INDEX idx_semantic_memory_fts SET (fastupdate = off);
SELECT gin_clean_pending_list('idx_semantic_memory_fts'::regclass);
