-- A key's default MCP tool profile (issue 23): the tools its sessions are offered when the MCP URL
-- names none (`?tools=` wins). NULL: none set, so every tool the key's scopes allow (`all`).

ALTER TABLE api_keys ADD COLUMN tool_profile text CHECK (tool_profile IN ('all', 'core'));
