-- Keyword statistics written in place when the session asks (devstream.stats_inline = on): the
-- trigger adds to memory_lexeme_df itself instead of appending deltas for the service to fold. For
-- embedded PGlite, which has one connection and so no writers to queue behind each other: there the
-- folds cost more than the stores (each store's ~55 deltas inserted, then deleted and summed), and
-- since PGlite runs a statement on the service's own thread, a fold of a few thousand deltas held
-- every request for 0.5-1.3 s (c10 store_memory p95 1.5 s). Postgres sessions keep the deltas.
CREATE OR REPLACE FUNCTION devstream_memory_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  inline boolean := coalesce(current_setting('devstream.stats_inline', true), '') = 'on';
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.archived_at IS NULL THEN
    IF inline THEN
      INSERT INTO memory_lexeme_df AS t (project_key, lexeme, df)
        SELECT coalesce(OLD.project_id, ''), l, -1 FROM unnest(tsvector_to_array(OLD.fts)) AS l
        UNION ALL VALUES (coalesce(OLD.project_id, ''), ' docs', -1), (coalesce(OLD.project_id, ''), ' len', -length(OLD.fts))
      ON CONFLICT (project_key, lexeme) DO UPDATE SET df = t.df + excluded.df;
      DELETE FROM memory_lexeme_df
       WHERE project_key = coalesce(OLD.project_id, '')
         AND lexeme = ANY (tsvector_to_array(OLD.fts) || ARRAY[' docs', ' len']) AND df <= 0;
    ELSE
      INSERT INTO memory_lexeme_delta (project_key, lexeme, delta)
        SELECT coalesce(OLD.project_id, ''), l, -1 FROM unnest(tsvector_to_array(OLD.fts)) AS l
        UNION ALL VALUES (coalesce(OLD.project_id, ''), ' docs', -1), (coalesce(OLD.project_id, ''), ' len', -length(OLD.fts));
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.archived_at IS NULL THEN
    IF inline THEN
      INSERT INTO memory_lexeme_df AS t (project_key, lexeme, df)
        SELECT coalesce(NEW.project_id, ''), l, 1 FROM unnest(tsvector_to_array(NEW.fts)) AS l
        UNION ALL VALUES (coalesce(NEW.project_id, ''), ' docs', 1), (coalesce(NEW.project_id, ''), ' len', length(NEW.fts))
      ON CONFLICT (project_key, lexeme) DO UPDATE SET df = t.df + excluded.df;
    ELSE
      INSERT INTO memory_lexeme_delta (project_key, lexeme, delta)
        SELECT coalesce(NEW.project_id, ''), l, 1 FROM unnest(tsvector_to_array(NEW.fts)) AS l
        UNION ALL VALUES (coalesce(NEW.project_id, ''), ' docs', 1), (coalesce(NEW.project_id, ''), ' len', length(NEW.fts));
    END IF;
  END IF;
  RETURN NULL;
END $$;
