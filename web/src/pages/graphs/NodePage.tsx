import { useEffect, useRef } from 'react';
import { ErrorAlert } from '../../ErrorAlert';
import { useLoad } from '../../load';
import { api } from '../../api';
import { Breakable, NodeLink, Trail } from './bits';
import { ImpactView } from './ImpactView';
import { Neighbourhood } from './Neighbourhood';
import { formatScore, graphsHref, suggestionsOf, type NodeDetail, type Neighbour } from './model';

const ALL_PARTS = ['metadata', 'callers', 'callees', 'technical', 'business', 'security', 'code'] as const;
/** One empty list, so that the graph (which redraws when its lists change) sees the same one each render. */
const NONE: Neighbour[] = [];

/** Callers or callees as links (the keyboard's way through the neighbourhood graph), with the edge type. */
function Neighbours({
  title,
  graphId,
  list,
  total,
}: {
  title: string;
  graphId: string;
  list: Neighbour[];
  total: number;
}) {
  const id = `${title.toLowerCase()}-title`;
  return (
    <section aria-labelledby={id}>
      <h3 id={id}>
        {title} ({total})
      </h3>
      {list.length === 0 ? (
        <p className="status">None.</p>
      ) : (
        <ul className="neighbours" aria-labelledby={id}>
          {list.map((n) => (
            <li key={`${n.edgeType} ${n.nodeId}`}>
              <NodeLink graphId={graphId} node={n} /> <span className="edge">{n.edgeType.toLowerCase()}</span>
            </li>
          ))}
        </ul>
      )}
      {list.length < total && (
        <p className="status">
          Showing {list.length} of {total}.
        </p>
      )}
    </section>
  );
}

/** The technical, business and security summaries, or why there are none. */
function Summaries({ node }: { node: NodeDetail['node'] }) {
  const { technicalSummary, businessSummary, security } = node;
  if (!technicalSummary && !businessSummary && !security?.summary) {
    return <p className="status">No summaries in this graph (structure only): the analyzer ran without summarizing.</p>;
  }
  return (
    <dl className="summaries">
      {technicalSummary && (
        <>
          <dt>Technical</dt>
          <dd>{technicalSummary}</dd>
        </>
      )}
      {businessSummary && (
        <>
          <dt>Business</dt>
          <dd>{businessSummary}</dd>
        </>
      )}
      {security?.summary && (
        <>
          <dt>Security{security.severity ? ` (${security.severity})` : ''}</dt>
          <dd>{security.summary}</dd>
        </>
      )}
    </dl>
  );
}

/**
 * A node id or name the graph does not have (get_node answered NOT_FOUND): what the service suggests
 * instead, as links, and a symbol search for the text; nothing is shown in its place.
 */
function NotFound({ graphId, nodeId, suggestions }: { graphId: string; nodeId: string; suggestions: string[] }) {
  return (
    <section aria-labelledby="node-title" className="graphs">
      <Trail />
      <h1 id="node-title">Node not found</h1>
      <p role="alert" className="error">
        “{nodeId}” not found{suggestions.length > 0 ? ', did you mean:' : '.'}
      </p>
      {suggestions.length > 0 && (
        <ul className="symbols" aria-label="Suggestions">
          {suggestions.map((id) => (
            <li key={id}>
              <a href={graphsHref.node(graphId, id)} className="node-id">
                <Breakable text={id} />
              </a>
            </li>
          ))}
        </ul>
      )}
      <p className="hint">
        A name opens a node only when it matches a symbol exactly (any case).{' '}
        <a href={graphsHref.repo(graphId, nodeId)}>Search the repository for “{nodeId}”</a>
      </p>
    </section>
  );
}

/** One node: summaries, code, its one-hop neighbourhood (drawn and listed) and what a change to it would break. */
export function NodePage({ graphId, nodeId }: { graphId: string; nodeId: string }) {
  const { data, error } = useLoad(
    () =>
      api.GET('/api/v1/nodes/{nodeId}', {
        params: { path: { nodeId }, query: { repo: graphId, include: [...ALL_PARTS] } },
      }),
    [graphId, nodeId],
  );
  const heading = useRef<HTMLHeadingElement>(null);
  // Following a link swaps the page's content without a load (the focused link is gone): put keyboard and
  // screen-reader focus on the new node's name.
  useEffect(() => {
    if (data) heading.current?.focus();
  }, [data]);

  const suggestions = suggestionsOf(error);
  if (!data && suggestions) return <NotFound graphId={graphId} nodeId={nodeId} suggestions={suggestions} />;
  if (!data) {
    return (
      <section aria-label="Node" className="graphs">
        <Trail />
        <ErrorAlert error={error} />
        {!error && <p className="status">Loading…</p>}
      </section>
    );
  }
  const { node, callers = NONE, callees = NONE } = data;
  return (
    <article aria-labelledby="node-title" className="graphs node">
      <Trail repo={data.repo} graphId={graphId} />
      <h1 id="node-title" ref={heading} tabIndex={-1}>
        <Breakable text={node.name} />
      </h1>
      <p className="meta">
        <span className="badge">{node.type.toLowerCase()}</span> <Breakable text={node.filePath} />:{node.startLine}-
        {node.endLine}
        {node.score != null && (
          <>
            {' · '}
            <span className="score" title={String(node.score)}>
              score {formatScore(node.score)}
            </span>
          </>
        )}
        {node.copies > 1 && ` · copy ${node.copy} of ${node.copies} sharing this id`} ·{' '}
        <code className="node-id">
          <Breakable text={node.nodeId} />
        </code>
      </p>
      {data.alternatives.length > 0 && (
        <p className="hint">
          Found by name; it could also mean:{' '}
          {data.alternatives.map((alt, i) => (
            <span key={alt}>
              {i > 0 && ', '}
              <a href={graphsHref.node(graphId, alt)}>
                <Breakable text={alt} />
              </a>
            </span>
          ))}
        </p>
      )}
      <div className="node-grid">
        <div>
          <section aria-labelledby="summaries-title" className="card">
            <h2 id="summaries-title">Summaries</h2>
            <Summaries node={node} />
          </section>
          <section aria-labelledby="code-title" className="card">
            <h2 id="code-title">Code</h2>
            {data.code ? (
              <pre className="code" tabIndex={0} aria-labelledby="code-title">
                <code>{data.code}</code>
              </pre>
            ) : (
              <p className="status">No source stored for this node.</p>
            )}
          </section>
        </div>
        <section aria-labelledby="hood-title" className="card">
          <h2 id="hood-title">Neighbourhood</h2>
          <Neighbourhood graphId={graphId} node={node} callers={callers} callees={callees} />
          <Neighbours title="Callers" graphId={graphId} list={callers} total={data.callersTotal ?? callers.length} />
          <Neighbours title="Callees" graphId={graphId} list={callees} total={data.calleesTotal ?? callees.length} />
        </section>
      </div>
      <ImpactView graphId={graphId} nodeId={node.nodeId} />
    </article>
  );
}
