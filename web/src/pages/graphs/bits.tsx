import { Fragment } from 'react';
import { graphsHref, isGhost, where } from './model';

/**
 * A path, node id or name with a line-break opportunity after each `/` and `::` and before each `.`, so a
 * narrow screen breaks `source/utils/combine.ts::combineHeaders` between its parts; `overflow-wrap: anywhere`
 * in the CSS still breaks a part too long for the line. The text (and an accessible name) is unchanged.
 */
export function Breakable({ text }: { text: string }) {
  return (
    <>
      {text.split(/(?<=\/|::)|(?=\.)/).map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </>
  );
}

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
export function NodeLink({
  graphId,
  node,
}: {
  graphId: string;
  node: { nodeId: string; name: string; type: string; filePath: string; startLine: number };
}) {
  return (
    <>
      {isGhost(node) ? (
        <span className="ghost" title="Not in this commit (unresolved)">
          <Breakable text={node.name} />
        </span>
      ) : (
        <a href={graphsHref.node(graphId, node.nodeId)}>
          <Breakable text={node.name} />
        </a>
      )}{' '}
      <span className="badge">{node.type.toLowerCase()}</span>{' '}
      <span className="where">
        <Breakable text={where(node)} />
      </span>
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
