import { graphsHref, isGhost, where } from './model';

/** A commit hash, short, with the full hash on hover and for copying. */
export function Commit({ hash }: { hash: string | null }) {
  if (!hash) return <span className="status">none</span>;
  return (
    <code className="commit" title={hash}>
      {hash.slice(0, 10)}
    </code>
  );
}

/** A node as a link to its page, with type and location; a GHOST (not in the commit) as plain text. */
export function NodeLink({ graphId, node }: { graphId: string; node: { nodeId: string; name: string; type: string; filePath: string; startLine: number } }) {
  return (
    <>
      {isGhost(node) ? (
        <span className="ghost" title="Not in this commit (unresolved)">
          {node.name}
        </span>
      ) : (
        <a href={graphsHref.node(graphId, node.nodeId)}>{node.name}</a>
      )}{' '}
      <span className="badge">{node.type.toLowerCase()}</span> <span className="where">{where(node)}</span>
    </>
  );
}

/** Breadcrumbs back to the repo list (and the repo, on a node page). */
export function Trail({ repo, graphId }: { repo?: string | undefined; graphId?: string }) {
  return (
    <nav aria-label="Breadcrumb" className="trail">
      <a href={graphsHref.list()}>Code graphs</a>
      {repo && graphId && (
        <>
          {' › '}
          <a href={graphsHref.repo(graphId)}>{repo}</a>
        </>
      )}
    </nav>
  );
}
