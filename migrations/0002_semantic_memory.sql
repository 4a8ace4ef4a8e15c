-- Semantic memory (design.md §4) and the queue that embeds it (§6).
--
-- Fixes over DevStream (design.md §9): the full-text index is a generated column of the row itself,
-- so a memory without an embedding is searchable the moment it is stored; one row per memory (no
-- twin vector tables, no duplicate hits); access tracking does not touch updated_at.

CREATE EXTENSION IF NOT EXISTS vector;

-- array_to_string is only STABLE (element output functions may vary); for text[] it is immutable,
-- which a generated column needs.
CREATE FUNCTION devstream_keywords_text(keywords text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN array_to_string(keywords, ' ');

CREATE TABLE semantic_memory (
  id               varchar(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  project_id       varchar(32) REFERENCES intervention_plans (id) ON DELETE SET NULL,
  task_id          varchar(32) REFERENCES micro_tasks (id) ON DELETE SET NULL,
  content          text NOT NULL,
  content_type     varchar(20) NOT NULL
                   CHECK (content_type IN ('code', 'documentation', 'context', 'output', 'error', 'decision', 'learning')),
  content_format   varchar(20) NOT NULL CHECK (content_format IN ('text', 'json', 'code', 'markdown')),
  keywords         text[] NOT NULL DEFAULT '{}',
  importance_score real NOT NULL CHECK (importance_score BETWEEN 0.1 AND 1.0),
  -- sha256 of the content; empty once deleted (a hash of a short secret is as good as the secret).
  content_hash     varchar(64) NOT NULL,
  source           varchar(40) NOT NULL DEFAULT 'mcp_user_input',
  -- Any dimension: one HNSW index per dimension, as partial expression indexes (see below).
  embedding        vector,
  embedding_model  text,
  embedding_dims   integer,
  fts              tsvector GENERATED ALWAYS AS (
                     setweight(to_tsvector('english', devstream_keywords_text(keywords)), 'A') ||
                     setweight(to_tsvector('english', content), 'B')
                   ) STORED,
  access_count     integer NOT NULL DEFAULT 0,
  last_accessed_at timestamptz,
  created_by       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  -- Deleted: the row stays as a tombstone (id, who, when) with its content erased.
  archived_at      timestamptz,
  CHECK (archived_at IS NOT NULL OR content <> ''),
  CHECK ((embedding IS NULL) = (embedding_model IS NULL) AND (embedding IS NULL) = (embedding_dims IS NULL)),
  CHECK (embedding IS NULL OR vector_dims(embedding) = embedding_dims)
);

-- Vectors stay in the row (a 768-D vector is 3 KB; pgvector's default moves it out of line), so a
-- filtered exact scan over one project's vectors reads heap pages instead of a TOAST lookup per row.
ALTER TABLE semantic_memory ALTER COLUMN embedding SET STORAGE MAIN;

CREATE INDEX idx_semantic_memory_fts ON semantic_memory USING gin (fts) WHERE archived_at IS NULL;
CREATE INDEX idx_semantic_memory_filters ON semantic_memory (project_id, content_type, created_at)
  WHERE archived_at IS NULL;
CREATE INDEX idx_semantic_memory_created_at ON semantic_memory (created_at DESC) WHERE archived_at IS NULL;
-- Neighbours in storing order within a project (the keyword branch's session context).
CREATE INDEX idx_semantic_memory_sequence ON semantic_memory (project_id, created_at, id) WHERE archived_at IS NULL;
CREATE INDEX idx_semantic_memory_keywords ON semantic_memory USING gin (keywords) WHERE archived_at IS NULL;
CREATE INDEX idx_semantic_memory_task ON semantic_memory (task_id) WHERE task_id IS NOT NULL;
-- Identical content in the same project is one memory (storing it again returns the existing one).
CREATE UNIQUE INDEX semantic_memory_dedup_key ON semantic_memory (coalesce(project_id, ''), content_hash)
  WHERE archived_at IS NULL;
-- nomic-embed-text's dimension; other dimensions get their index when a model first answers with them.
CREATE INDEX idx_semantic_memory_embedding_768 ON semantic_memory
  USING hnsw ((embedding::vector(768)) vector_cosine_ops) WHERE embedding_dims = 768;

CREATE FUNCTION devstream_memory_touched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;
-- Only edits of the memory itself move updated_at: not access tracking, not embedding.
CREATE TRIGGER semantic_memory_updated_at BEFORE UPDATE ON semantic_memory
  FOR EACH ROW
  WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.keywords IS DISTINCT FROM NEW.keywords
        OR OLD.content_type IS DISTINCT FROM NEW.content_type OR OLD.project_id IS DISTINCT FROM NEW.project_id
        OR OLD.archived_at IS DISTINCT FROM NEW.archived_at)
  EXECUTE FUNCTION devstream_memory_touched();

-- Keyword ranking statistics. BM25 needs, per project, how many memories hold each lexeme (df),
-- how many memories there are and their total length. Writers never update a shared counter (every
-- store in a project would queue behind the one before it, each waiting for its commit's fsync):
-- the trigger appends signed deltas, searches add the pending deltas to the compacted counts, and
-- the service folds deltas into memory_lexeme_df every few seconds. Two pseudo-lexemes that no
-- parser produces (they start with a space) hold the memory count and the total length.
CREATE TABLE memory_lexeme_df (
  project_key varchar(32) NOT NULL,   -- project_id, '' for memories without a project
  lexeme      text NOT NULL,          -- or ' docs' (memories) / ' len' (sum of tsvector lengths)
  df          bigint NOT NULL,
  PRIMARY KEY (project_key, lexeme)
);
CREATE INDEX idx_memory_lexeme_df_lexeme ON memory_lexeme_df (lexeme);

CREATE TABLE memory_lexeme_delta (
  project_key varchar(32) NOT NULL,
  lexeme      text NOT NULL,
  delta       bigint NOT NULL
);
CREATE INDEX idx_memory_lexeme_delta_lexeme ON memory_lexeme_delta (lexeme, project_key);

CREATE FUNCTION devstream_memory_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.archived_at IS NULL THEN
    INSERT INTO memory_lexeme_delta (project_key, lexeme, delta)
      SELECT coalesce(OLD.project_id, ''), l, -1 FROM unnest(tsvector_to_array(OLD.fts)) AS l
      UNION ALL VALUES (coalesce(OLD.project_id, ''), ' docs', -1), (coalesce(OLD.project_id, ''), ' len', -length(OLD.fts));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.archived_at IS NULL THEN
    INSERT INTO memory_lexeme_delta (project_key, lexeme, delta)
      SELECT coalesce(NEW.project_id, ''), l, 1 FROM unnest(tsvector_to_array(NEW.fts)) AS l
      UNION ALL VALUES (coalesce(NEW.project_id, ''), ' docs', 1), (coalesce(NEW.project_id, ''), ' len', length(NEW.fts));
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER semantic_memory_stats
  AFTER INSERT OR DELETE OR UPDATE OF content, keywords, project_id, archived_at ON semantic_memory
  FOR EACH ROW EXECUTE FUNCTION devstream_memory_stats();

-- The embedding queue: a memory waiting for a vector of the current model. Workers in any number of
-- service instances claim rows with FOR UPDATE SKIP LOCKED and hold a lease, never a lock, while
-- the model answers.
CREATE TABLE embedding_jobs (
  memory_id    varchar(32) PRIMARY KEY REFERENCES semantic_memory (id) ON DELETE CASCADE,
  attempts     integer NOT NULL DEFAULT 0,
  run_after    timestamptz NOT NULL DEFAULT now(),
  leased_until timestamptz,
  last_error   text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_embedding_jobs_due ON embedding_jobs (run_after);
