-- Scratch schema mirroring the production table (keywords unused: LoCoMo indexes only content)
CREATE EXTENSION IF NOT EXISTS vector;
CREATE OR REPLACE FUNCTION devstream_keywords_text(k text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(array_to_string(k, ' '), '') $$;
DROP TABLE IF EXISTS semantic_memory CASCADE;
CREATE TABLE semantic_memory (
  id varchar(32) PRIMARY KEY, project_id varchar(32), content text NOT NULL, content_type varchar(20) NOT NULL,
  keywords text[] NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL DEFAULT now(), archived_at timestamptz,
  fts tsvector GENERATED ALWAYS AS (setweight(to_tsvector('english', devstream_keywords_text(keywords)), 'A') || setweight(to_tsvector('english', content), 'B')) STORED
);
CREATE INDEX ON semantic_memory USING gin (fts);
CREATE INDEX ON semantic_memory (project_id, content_type, created_at);
