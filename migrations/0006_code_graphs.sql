-- Code graphs uploaded by an analyzer job (DevLens commit files), one set of rows per commit
-- (design.md §4 and §7). A graph is a repository; each upload is a commit of it, replaced whole when
-- the same commit is uploaded again and dropped past GRAPH_RETENTION commits.

CREATE TABLE code_graphs (
  graph_id       text PRIMARY KEY CHECK (graph_id ~ '^[A-Za-z0-9._-]{1,64}$'),
  repo           text NOT NULL CHECK (length(repo) BETWEEN 1 AND 200),
  repo_url       text,
  default_branch text,
  created_by     text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
-- Repos are named by people and agents alike: one graph per name, whatever its case.
CREATE UNIQUE INDEX code_graphs_repo_key ON code_graphs (lower(repo));

CREATE TABLE graph_commits (
  graph_id     text NOT NULL REFERENCES code_graphs (graph_id) ON DELETE CASCADE,
  commit_hash  text NOT NULL CHECK (length(commit_hash) BETWEEN 1 AND 100),
  branch       text,
  analyzed_at  timestamptz NOT NULL,
  uploaded_at  timestamptz NOT NULL DEFAULT now(),
  node_count   integer NOT NULL DEFAULT 0,
  edge_count   integer NOT NULL DEFAULT 0,
  -- The commit file's own statistics and any top-level fields we do not model (kept, not dropped).
  stats        jsonb,
  extra        jsonb,
  created_by   text,
  PRIMARY KEY (graph_id, commit_hash)
);
-- The latest commit of a graph: the one analyzed last (then uploaded last).
CREATE INDEX graph_commits_latest ON graph_commits (graph_id, analyzed_at DESC, uploaded_at DESC);

-- Nodes keep their position in the upload (seq): analyzers repeat ids (overloads), and every
-- copy stays addressable.
CREATE TABLE graph_nodes (
  graph_id          text NOT NULL,
  commit_hash       text NOT NULL,
  seq               integer NOT NULL,
  node_id           text NOT NULL,
  name              text NOT NULL,
  type              text NOT NULL,
  file_path         text NOT NULL,
  start_line        integer NOT NULL,
  end_line          integer NOT NULL,
  technical_summary text,
  business_summary  text,
  security_severity text,
  security_summary  text,
  code              text,
  score             double precision,
  -- The node's own metadata object, and the fields of the node we do not model (parentFile, codeHash…).
  metadata          jsonb,
  extra             jsonb,
  -- Search document (field weights as DevLens boosts them): A name and its parts, B path, C summaries
  -- (or doc comments and identifiers from the code when there are none), D security.
  search            tsvector NOT NULL,
  PRIMARY KEY (graph_id, commit_hash, seq),
  FOREIGN KEY (graph_id, commit_hash) REFERENCES graph_commits (graph_id, commit_hash) ON DELETE CASCADE
);
CREATE INDEX graph_nodes_node_id ON graph_nodes (graph_id, commit_hash, node_id);
CREATE INDEX graph_nodes_name ON graph_nodes (graph_id, commit_hash, lower(name));
CREATE INDEX graph_nodes_search ON graph_nodes USING gin (search);

-- Edges may name nodes the commit does not hold (GHOST references): no foreign key on the ends.
CREATE TABLE graph_edges (
  graph_id    text NOT NULL,
  commit_hash text NOT NULL,
  seq         integer NOT NULL,
  from_id     text NOT NULL,
  to_id       text NOT NULL,
  type        text NOT NULL,
  metadata    jsonb,
  PRIMARY KEY (graph_id, commit_hash, seq),
  FOREIGN KEY (graph_id, commit_hash) REFERENCES graph_commits (graph_id, commit_hash) ON DELETE CASCADE
);
CREATE INDEX graph_edges_from ON graph_edges (graph_id, commit_hash, from_id);
CREATE INDEX graph_edges_to ON graph_edges (graph_id, commit_hash, to_id);

-- The nodes of one commit whose search document matches a query, at most `max_rows`, always through
-- the GIN index: with a LIMIT and common words the planner would pick a sequential scan that stops
-- early, but testing each row's tsvector costs far more than it expects (36 ms against 3 ms for one
-- common word at 50k nodes). The graph is tested on the rows (written so that no index serves it):
-- ANDing the whole commit's bitmap with the word's costs more than checking the word's rows.
CREATE FUNCTION graph_search_matches(p_graph text, p_commit text, p_query tsquery, max_rows integer)
  RETURNS SETOF integer
  LANGUAGE sql STABLE
  SET enable_seqscan = off
AS $$
  SELECT n.seq FROM graph_nodes n
   WHERE n.graph_id || '' = p_graph AND n.commit_hash || '' = p_commit AND n.search @@ p_query
   LIMIT max_rows
$$;
