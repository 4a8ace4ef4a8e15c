-- Claude Code hook sessions (issue 23, POST /api/v1/hooks/claude-code). Kept in the database, not in
-- an instance's memory, so that a session's hooks may land on any replica.
--
-- hook_injections: what a session was already given (a memory, a code node), so a later hook of the
-- same session does not inject it again. `caller` is the key's name ('' with AUTH=off): one key
-- cannot read or reset another's sessions. Rows expire; the service sweeps them.
CREATE TABLE hook_injections (
  caller     text NOT NULL,
  session_id text NOT NULL,
  item       text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (caller, session_id, item)
);
CREATE INDEX idx_hook_injections_expiry ON hook_injections (expires_at);

-- hook_sessions: what a session touched, for the one `context` memory stored at its end when
-- HOOK_CAPTURE=1 (files read and written, task changes by tool name and id; never the transcript).
CREATE TABLE hook_sessions (
  caller       text NOT NULL,
  session_id   text NOT NULL,
  project      text,
  files_read   text[] NOT NULL DEFAULT '{}',
  files_edited text[] NOT NULL DEFAULT '{}',
  tasks        text[] NOT NULL DEFAULT '{}',
  started_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (caller, session_id)
);
CREATE INDEX idx_hook_sessions_expiry ON hook_sessions (expires_at);
