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
