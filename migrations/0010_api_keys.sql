-- API keys (issue 6): who may call the service, and with which scopes. Only a SHA-256 hash of each
-- token is stored; the token itself is shown once, when the key is created. A revoked key keeps its
-- row (revoked_at set), so its name stays taken and rows it created still say who wrote them.

CREATE TABLE api_keys (
  id           varchar(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{12}$'),
  name         varchar(64) NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
  token_hash   char(64) NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  scopes       text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'write', 'admin']::text[]),
  created_by   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);

-- Names are unique regardless of case, revoked keys included.
CREATE UNIQUE INDEX idx_api_keys_name ON api_keys (lower(name));
