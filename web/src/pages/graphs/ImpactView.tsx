import { useId, useState } from 'react';
import { ErrorAlert } from '../../ErrorAlert';
import { useLoad } from '../../load';
import { api } from '../../api';
import { NodeLink } from './bits';
import { type Impact } from './model';

const DIRECTIONS = {
  upstream: 'upstream (what breaks)',
  downstream: 'downstream (what it uses)',
  both: 'both',
} as const;
type Direction = keyof typeof DIRECTIONS;

type Dependent = NonNullable<Impact['dependents']>[number];

function byHop(dependents: Dependent[]): [number, Dependent[]][] {
  const hops = new Map<number, Dependent[]>();
  for (const d of dependents) hops.set(d.hop, [...(hops.get(d.hop) ?? []), d]);
  return [...hops.entries()].sort(([a], [b]) => a - b);
}

/** The `impact` tool for one node: its dependents (or dependencies) hop by hop, each a link. */
export function ImpactView({ graphId, nodeId }: { graphId: string; nodeId: string }) {
  const ids = { direction: useId(), radius: useId() };
  const [direction, setDirection] = useState<Direction>('upstream');
  const [radius, setRadius] = useState(2);
  const { data, error } = useLoad(
    () => api.POST('/api/v1/tools/impact', { body: { target: nodeId, repo: graphId, direction, radius } }),
    [graphId, nodeId, direction, radius],
  );
  const dependents = data?.dependents ?? [];

  return (
    <section aria-labelledby="impact-title" className="card impact">
      <h2 id="impact-title">Impact</h2>
      <div className="search">
        <label htmlFor={ids.direction}>Direction</label>
        <select id={ids.direction} value={direction} onChange={(e) => setDirection(e.target.value as Direction)}>
          {Object.entries(DIRECTIONS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor={ids.radius}>Hops</label>
        <select id={ids.radius} value={radius} onChange={(e) => setRadius(Number(e.target.value))}>
          {[1, 2, 3, 4, 5].map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </div>
      <ErrorAlert error={error} />
      {!data && !error && <p className="status">Loading…</p>}
      {data && (
        <>
          <p className="status" aria-live="polite">
            {data.total} {direction === 'upstream' ? 'dependent' : 'node'}
            {data.total === 1 ? '' : 's'} within {data.radius ?? radius} hop{(data.radius ?? radius) === 1 ? '' : 's'}
            {data.truncated ? ' (cut short: too many to walk)' : ''}
          </p>
          {byHop(dependents).map(([hop, list]) => (
            <section key={hop} aria-label={`Hop ${hop}`}>
              <h3>Hop {hop}</h3>
              <ul className="neighbours">
                {list.map((d) => (
                  <li key={`${d.direction} ${d.nodeId}`}>
                    <NodeLink graphId={graphId} node={d} />{' '}
                    <span className="edge">
                      {d.direction === 'upstream' ? '←' : '→'} {d.via.toLowerCase()}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </>
      )}
    </section>
  );
}
