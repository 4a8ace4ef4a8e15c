import { useId } from 'react';
import { ErrorAlert } from '../../ErrorAlert';
import { useLoad } from '../../load';
import { api } from '../../api';
import { When } from '../../time';
import { Commit } from './bits';
import { graphsHref } from './model';

/** Every uploaded repository with its latest commit, how fresh it is, and its size. */
export function RepoList() {
  const { data, error } = useLoad(() => api.GET('/api/v1/graphs'), []);
  const repos = data?.graphs;
  const captionId = useId();
  return (
    <section aria-labelledby="graphs-title" className="graphs">
      <h1 id="graphs-title">Code graphs</h1>
      <ErrorAlert error={error} />
      {!repos && !error && <p className="status">Loading…</p>}
      {repos?.length === 0 && (
        <p className="status">
          No code graphs yet: run <code>devstream-hub analyze</code> or upload a DevLens graph (
          <code>POST /api/v1/graphs</code>).
        </p>
      )}
      {repos && repos.length > 0 && (
        // Wider than a phone: the table scrolls in its own box, which takes keyboard focus so arrow keys scroll it.
        <div className="table-scroll" role="region" aria-labelledby={captionId} tabIndex={0}>
          <table className="repos">
            <caption id={captionId}>Repositories and the commit each was analyzed at</caption>
            <thead>
              <tr>
                <th scope="col">Repository</th>
                <th scope="col">Latest commit</th>
                <th scope="col" className="num">
                  Commits kept
                </th>
                <th scope="col">Analyzed</th>
                <th scope="col">Uploaded</th>
                <th scope="col" className="num">
                  Nodes
                </th>
                <th scope="col" className="num">
                  Edges
                </th>
              </tr>
            </thead>
            <tbody>
              {repos.map((repo) => (
                <tr key={repo.graphId}>
                  <th scope="row">
                    <a href={graphsHref.repo(repo.graphId)}>{repo.repo}</a>
                  </th>
                  <td>
                    <Commit hash={repo.latestCommit} />
                  </td>
                  <td className="num">{repo.commits}</td>
                  <td>
                    <When iso={repo.analyzedAt} />
                  </td>
                  <td>
                    <When iso={repo.uploadedAt} />
                  </td>
                  <td className="num">{repo.nodes}</td>
                  <td className="num">{repo.edges}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
