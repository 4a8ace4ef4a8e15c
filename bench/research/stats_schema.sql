-- Lexeme document-frequency stats for BM25 (per project), maintained by trigger.
CREATE TABLE IF NOT EXISTS kw_lexeme_df (
  project_id varchar(32) NOT NULL, lexeme text NOT NULL, df integer NOT NULL,
  PRIMARY KEY (project_id, lexeme));
CREATE INDEX IF NOT EXISTS kw_lexeme_df_lexeme ON kw_lexeme_df (lexeme);
CREATE TABLE IF NOT EXISTS kw_project_stats (project_id varchar(32) PRIMARY KEY, n_docs integer NOT NULL, sum_len bigint NOT NULL);

CREATE OR REPLACE FUNCTION kw_stats_apply(p varchar, v tsvector, sign int) RETURNS void LANGUAGE sql AS $$
  INSERT INTO kw_lexeme_df AS d (project_id, lexeme, df)
    SELECT coalesce(p, ''), l, sign FROM unnest(tsvector_to_array(v)) l ORDER BY l   -- sorted: stable lock order
  ON CONFLICT (project_id, lexeme) DO UPDATE SET df = d.df + excluded.df;
  INSERT INTO kw_project_stats AS s (project_id, n_docs, sum_len) VALUES (coalesce(p, ''), sign, sign * length(v))
  ON CONFLICT (project_id) DO UPDATE SET n_docs = s.n_docs + excluded.n_docs, sum_len = s.sum_len + excluded.sum_len;
$$;
CREATE OR REPLACE FUNCTION kw_stats_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.archived_at IS NULL THEN PERFORM kw_stats_apply(OLD.project_id, OLD.fts, -1); END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.archived_at IS NULL THEN PERFORM kw_stats_apply(NEW.project_id, NEW.fts, 1); END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS kw_stats ON semantic_memory;
CREATE TRIGGER kw_stats AFTER INSERT OR DELETE OR UPDATE OF content, keywords, project_id, archived_at ON semantic_memory
  FOR EACH ROW EXECUTE FUNCTION kw_stats_trg();
-- (zero rows could be pruned by a periodic DELETE FROM kw_lexeme_df WHERE df <= 0)

-- bulk (re)build
TRUNCATE kw_lexeme_df, kw_project_stats;
INSERT INTO kw_lexeme_df SELECT coalesce(project_id, ''), l, count(*) FROM semantic_memory, unnest(tsvector_to_array(fts)) l WHERE archived_at IS NULL GROUP BY 1, 2;
INSERT INTO kw_project_stats SELECT coalesce(project_id, ''), count(*), sum(length(fts)) FROM semantic_memory WHERE archived_at IS NULL GROUP BY 1;
ANALYZE kw_lexeme_df; ANALYZE kw_project_stats;
