import { NodePage } from './NodePage';
import { RepoList } from './RepoList';
import { RepoPage } from './RepoPage';
import { graphsHref } from './model';
import './graphs.css';

/**
 * Code graphs: repos, symbols, nodes, impact and context packets. `args` are the hash route's segments
 * after `graphs`: none (the repo list), `repo/<graphId>[/<symbol query>]`, or `node/<graphId>/<nodeId>`.
 */
export function Graphs({ args }: { args: string[] }) {
  const [view, graphId, rest] = args;
  if (view === undefined) return <RepoList />;
  if (view === 'repo' && graphId) return <RepoPage graphId={graphId} query={rest ?? ''} />;
  if (view === 'node' && graphId && rest) return <NodePage graphId={graphId} nodeId={rest} />;
  return (
    <section aria-labelledby="graphs-title">
      <h1 id="graphs-title">Code graphs</h1>
      <p role="alert" className="error">
        No such page: #/graphs/{args.join('/')}.
      </p>
      <a href={graphsHref.list()}>All repositories</a>
    </section>
  );
}
