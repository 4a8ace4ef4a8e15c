-- Code-graph nodes get vectors too (issue 21, the semantic channel of code search), by the same
-- worker, model-per-row and half-precision design as memories: a node's embedding document (its name's
-- words, the first line of its signature, its doc comment or summaries; ≤ 512 characters, built by
-- src/domain/graphs/node-embedding-text.ts) is stored with the node at upload; after the upload
-- commits, the commit's nodes are queued, and the embedding worker embeds them in batches (memories
-- first, so a 25,000-node upload never holds up a memory's vector).
--
-- Nodes uploaded before this migration have no document (NULL) and get no vector until their graph
-- is uploaded again. GHOST nodes (references to code the graph does not hold) get none either.
ALTER TABLE graph_nodes ADD COLUMN embed_doc text;

-- One vector per node and model, in half precision (as memories since 0005), kept in the row.
-- Rows go with their commit (a re-upload of the commit, retention): one cascade per commit, not a
-- trigger per node.
CREATE TABLE graph_node_vectors (
  graph_id        text NOT NULL,
  commit_hash     text NOT NULL,
  seq             integer NOT NULL,
  embedding       halfvec NOT NULL,
  embedding_model text NOT NULL,
  embedding_dims  integer NOT NULL,
  CHECK (vector_dims(embedding) = embedding_dims),
  PRIMARY KEY (graph_id, commit_hash, seq),
  FOREIGN KEY (graph_id, commit_hash) REFERENCES graph_commits (graph_id, commit_hash) ON DELETE CASCADE
);
ALTER TABLE graph_node_vectors ALTER COLUMN embedding SET STORAGE MAIN;

-- Per dimension, as for memories: nomic-embed-text's ships here, others are created when a model
-- first answers with them (src/embeddings/vector-indexes.ts). Large commits are searched through it
-- (iterative scan, filtered to the commit); small ones are scanned exactly through the primary key.
CREATE INDEX idx_graph_node_vectors_embedding_768 ON graph_node_vectors
  USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops) WHERE embedding_dims = 768;

-- The queue, as embedding_jobs (0002): claimed with FOR UPDATE SKIP LOCKED under a lease, retried
-- with backoff, never dropped while its commit lives.
CREATE TABLE graph_node_embedding_jobs (
  graph_id     text NOT NULL,
  commit_hash  text NOT NULL,
  seq          integer NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  run_after    timestamptz NOT NULL DEFAULT now(),
  leased_until timestamptz,
  last_error   text,
  -- false: embed anew, even if an earlier commit holds a vector of the same node and document
  -- (`devstream-hub reembed --all`: the model's vectors are not to be trusted).
  reuse        boolean NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (graph_id, commit_hash, seq),
  FOREIGN KEY (graph_id, commit_hash) REFERENCES graph_commits (graph_id, commit_hash) ON DELETE CASCADE
);
CREATE INDEX idx_graph_node_embedding_jobs_due ON graph_node_embedding_jobs (run_after);
