import { useId, useState } from 'react';
import { ErrorAlert } from '../../ErrorAlert';
import { SearchField } from '../../SearchField';
import { SelectField } from '../../SelectField';
import { api } from '../../api';
import { useAction } from '../../load';
import { Breakable } from './bits';
import { graphsHref, type Packet } from './model';

const INTENTS = ['exploratory', 'pinpoint', 'reference-list', 'flow', 'overview', 'concept', 'security-audit'] as const;
type Intent = (typeof INTENTS)[number];

/** The packet's IDMAP line (`IDMAP N1=<nodeId> N3=<nodeId>`) as [short id, node id] pairs. */
export function idMap(packet: string): [string, string][] {
  const line = packet.split('\n').find((l) => l.startsWith('IDMAP '));
  if (!line) return [];
  return line
    .slice('IDMAP '.length)
    .split(/ (?=N\d+=)/)
    .map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)] as [string, string];
    })
    .filter(([short, id]) => short && id);
}

/** resolve_context for a question about the repo: the packet as an agent gets it, its token cost, and its nodes as links. */
export function ContextPacket({ graphId }: { graphId: string }) {
  const budgetId = useId();
  const [task, setTask] = useState('');
  const [intent, setIntent] = useState<Intent>('exploratory');
  const [budget, setBudget] = useState('');
  const [packet, setPacket] = useState<Packet | null>(null);
  const resolve = useAction(
    () =>
      api.POST('/api/v1/context', {
        body: { task, intent, repo: graphId, ...(budget ? { tokenBudget: Number(budget) } : {}) },
      }),
    setPacket,
  );

  return (
    <section aria-labelledby="context-title" className="card">
      <h2 id="context-title">Context packet</h2>
      <form
        className="search"
        aria-label="Context packet"
        onSubmit={(e) => {
          e.preventDefault();
          void resolve.run();
        }}
      >
        <SearchField label="Question" value={task} onChange={setTask} placeholder="how does … work" />
        <SelectField label="Intent" value={intent} options={INTENTS} onChange={setIntent} />
        <label htmlFor={budgetId}>Token budget</label>
        <input
          id={budgetId}
          type="number"
          min={500}
          max={100000}
          step={100}
          value={budget}
          onChange={(e) => setBudget(e.target.value)}
          placeholder="by intent"
          className="budget"
        />
        <button type="submit" disabled={resolve.busy}>
          Resolve
        </button>
      </form>
      <ErrorAlert error={resolve.error} />
      {packet && (
        <div className="packet">
          <p className="status" aria-live="polite">
            ≈ <strong>{packet.approxTokens} tokens</strong> of a {packet.budget}-token budget · intent {packet.intent} ·
            commit <code title={packet.commitHash}>{packet.commitHash.slice(0, 10)}</code>
          </p>
          <pre aria-label="Packet text" tabIndex={0}>
            {packet.packet}
          </pre>
          <h3>Nodes in this packet</h3>
          <ul className="idmap">
            {idMap(packet.packet).map(([short, nodeId]) => (
              <li key={short}>
                <span className="short">{short}</span>{' '}
                <a href={graphsHref.node(graphId, nodeId)}>
                  <Breakable text={nodeId} />
                </a>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
