import { useEffect, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../ErrorAlert';
import { SearchField } from '../../SearchField';
import { useLoad } from '../../load';
import { api } from '../../api';
import { When } from '../../time';
import { Commit, NodeLink, Trail } from './bits';
import { ContextPacket } from './ContextPacket';
import { graphsHref, type Repo } from './model';

/** The repo's commit, freshness and size, in one line. */
function Facts({ repo }: { repo: Repo }) {
  return (
    <p className="meta">
      commit <Commit hash={repo.latestCommit} /> · analyzed <When iso={repo.analyzedAt} /> · uploaded{' '}
      <When iso={repo.uploadedAt} /> · {repo.nodes} nodes, {repo.edges} edges · {repo.commits} commit
      {repo.commits === 1 ? '' : 's'} kept
    </p>
  );
}

/** One repository: symbol search (the query lives in the route, so Back returns to the results) and a context packet. */
export function RepoPage({ graphId, query }: { graphId: string; query: string }) {
  const repos = useLoad(() => api.GET('/api/v1/graphs'), []);
  // The route holds the graph id; a hand-typed repo name is found too (the API takes either).
  const repo = repos.data?.graphs.find((g) => g.graphId === graphId || g.repo === graphId);
  const symbols = useLoad(
    () => (query ? api.GET('/api/v1/symbols', { params: { query: { q: query, repo: graphId, limit: 25 } } }) : null),
    [graphId, query],
  );
  const [text, setText] = useState(query);
  // Back and Forward change the route's query: the field follows.
  useEffect(() => setText(query), [query]);

  const search = (event: FormEvent) => {
    event.preventDefault();
    if (text.trim()) window.location.hash = graphsHref.repo(graphId, text.trim());
  };

  return (
    <section aria-labelledby="repo-title" className="graphs">
      <Trail />
      <h1 id="repo-title">{repo?.repo ?? 'Repository'}</h1>
      <ErrorAlert error={repos.error} />
      {repos.data && !repo && (
        <p role="alert" className="error">
          No code graph {graphId}: it may have been deleted.
        </p>
      )}
      {repo && <Facts repo={repo} />}

      <section aria-labelledby="symbols-title" className="card">
        <h2 id="symbols-title">Find symbols</h2>
        <form className="search" role="search" aria-label="Symbols" onSubmit={search}>
          <SearchField label="Symbol" value={text} onChange={setText} placeholder="name, path fragment or words" />
          <button type="submit">Find</button>
        </form>
        <ErrorAlert error={symbols.error} />
        {query && !symbols.data && !symbols.error && <p className="status">Searching…</p>}
        {symbols.data && (
          <>
            <p className="status" aria-live="polite">
              {symbols.data.total} symbol{symbols.data.total === 1 ? '' : 's'} for “{symbols.data.query}”
            </p>
            <ol className="symbols">
              {symbols.data.symbols.map((s) => (
                <li key={s.nodeId}>
                  <NodeLink graphId={graphId} node={s} />{' '}
                  {s.exactMatch ? (
                    <span className="badge exact">exact</span>
                  ) : (
                    <span className="relevance">relevance {s.relevance.toFixed(2)}</span>
                  )}
                </li>
              ))}
            </ol>
          </>
        )}
      </section>

      <ContextPacket key={graphId} graphId={graphId} />
    </section>
  );
}
