-- Background jobs the service runs for its clients: today `analyze` (build a code graph from a folder
-- the server can read and store it as an upload would). A queue like embedding_jobs: claimed with
-- FOR UPDATE SKIP LOCKED and held by a lease that the runner renews while it works, so any number of
-- service instances can share it and a job of an instance that died is taken up again.

CREATE TABLE jobs (
  id           varchar(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  kind         varchar(32) NOT NULL CHECK (kind IN ('analyze')),
  status       varchar(16) NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  params       jsonb NOT NULL,
  progress     jsonb,
  result       jsonb,
  error        text,
  attempts     integer NOT NULL DEFAULT 0,
  leased_until timestamptz,
  created_by   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  started_at   timestamptz,
  finished_at  timestamptz,
  CHECK ((status IN ('succeeded', 'failed')) = (finished_at IS NOT NULL))
);

-- The runner looks only at unfinished jobs.
CREATE INDEX idx_jobs_unfinished ON jobs (created_at) WHERE status IN ('queued', 'running');
