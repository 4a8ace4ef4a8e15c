-- Keys limited to projects and code graphs (issue 24): `projects` names the projects (plans, by
-- title, any case) a key may see and write, `repos` the code graphs (by repo name, any case).
-- NULL: every project / every graph, as before. An empty array would be a key that sees nothing:
-- refused, so a limit always names something.

ALTER TABLE api_keys
  ADD COLUMN projects text[] CHECK (projects IS NULL OR cardinality(projects) BETWEEN 1 AND 100),
  ADD COLUMN repos text[] CHECK (repos IS NULL OR cardinality(repos) BETWEEN 1 AND 100);
