import { useEffect, useId, useRef, useState } from 'react';
import { ErrorAlert } from '../ErrorAlert';
import { SearchField } from '../SearchField';
import { SelectField } from '../SelectField';
import { api, type Json } from '../api';
import { useAction } from '../load';
import type { paths } from '../schema';
import { useCan } from '../session';

type Search = Json<'/api/v1/memories/search', 'post'>;
type Memory = Json<'/api/v1/memories/{id}', 'get'>['memory'];
type Stored = paths['/api/v1/memories']['post']['responses']['201']['content']['application/json'];

const CONTENT_TYPES = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
type ContentType = (typeof CONTENT_TYPES)[number];

const rank = (r: number | null | undefined) => (r == null ? '—' : `#${r}`);

/**
 * Hybrid search over the team's memories, with the method and each branch's rank shown; a hit opens.
 * Keys with `write` also store new memories and delete the open one.
 */
export function MemoryPage() {
  const ids = { project: useId(), since: useId() };
  const [query, setQuery] = useState('');
  const [type, setType] = useState<ContentType | ''>('');
  const [project, setProject] = useState('');
  const [since, setSince] = useState('');
  const [result, setResult] = useState<Search | null>(null);
  const [open, setOpen] = useState<Memory | null>(null);
  const [done, setDone] = useState<{ text: string } | null>(null);
  const [storing, setStoring] = useState(false);
  const canWrite = useCan('write');
  const said = useRef<HTMLParagraphElement>(null);
  // After a store or delete the focused control is gone: keyboard focus goes to what happened.
  useEffect(() => {
    if (done) said.current?.focus();
  }, [done]);

  const search = useAction(
    () =>
      api.POST('/api/v1/memories/search', {
        body: {
          query,
          limit: 20,
          ...(type ? { content_type: type } : {}),
          ...(project.trim() ? { project: project.trim() } : {}),
          ...(since ? { created_after: new Date(`${since}T00:00:00`).toISOString() } : {}),
        },
      }),
    (data) => {
      setResult(data);
      setOpen(null);
    },
  );
  const show = useAction(
    (id: string) => api.GET('/api/v1/memories/{id}', { params: { path: { id } } }),
    (data) => setOpen(data.memory),
  );

  const stored = (out: Stored) => {
    setStoring(false);
    const note = out.embedding_note ? ` Not embedded yet: ${out.embedding_note}` : '';
    setDone({
      text: out.duplicate
        ? `Already stored in ${out.project} as memory ${out.memory_id}: nothing new was written.`
        : `Stored memory ${out.memory_id} in ${out.project}.${note}`,
    });
    void show.run(out.memory_id);
  };

  const deleted = (id: string) => {
    setOpen(null);
    setDone({ text: `Deleted memory ${id}.` });
    setResult(
      (r) =>
        r && {
          ...r,
          results: r.results.filter((hit) => hit.memory_id !== id),
          total: r.total - (r.results.some((hit) => hit.memory_id === id) ? 1 : 0),
        },
    );
  };

  return (
    <section aria-labelledby="memory-title">
      <div className="toolbar">
        <h1 id="memory-title">Memory</h1>
        {canWrite && !storing && (
          <button type="button" onClick={() => setStoring(true)}>
            New memory
          </button>
        )}
      </div>
      {storing && <StoreMemory defaultProject={project.trim()} onStored={stored} onCancel={() => setStoring(false)} />}
      <p className="status" role="status" ref={said} tabIndex={-1}>
        {done?.text}
      </p>
      <form
        className="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void search.run();
        }}
      >
        <SearchField label="Search" value={query} onChange={setQuery} />
        <SelectField<ContentType | ''>
          label="Type"
          value={type}
          options={CONTENT_TYPES}
          onChange={setType}
          empty="any"
        />
        <label htmlFor={ids.project}>Project</label>
        <input id={ids.project} value={project} onChange={(e) => setProject(e.target.value)} maxLength={200} />
        <label htmlFor={ids.since}>Since</label>
        <input id={ids.since} type="date" value={since} onChange={(e) => setSince(e.target.value)} />
        <button type="submit" disabled={search.busy}>
          Search
        </button>
      </form>
      <ErrorAlert error={search.error ?? show.error} />
      {result && (
        <div className="results">
          <p className="status" aria-live="polite">
            {result.total} result{result.total === 1 ? '' : 's'} by <span className="badge">{result.method}</span>{' '}
            search
            {result.method_note ? ` (${result.method_note})` : ''}
          </p>
          <ol className="hits">
            {result.results.map((hit) => (
              <li key={hit.memory_id}>
                <button type="button" className="hit" onClick={() => void show.run(hit.memory_id)}>
                  <span className="sr-only">Open memory {hit.memory_id}: </span>
                  <span className="meta">
                    <span className="badge">{hit.content_type}</span> {hit.project} · vector {rank(hit.vector_rank)} ·
                    keyword {rank(hit.keyword_rank)}
                  </span>
                  <span className="excerpt">
                    {hit.content.length > 240 ? `${hit.content.slice(0, 240)}…` : hit.content}
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </div>
      )}
      {open && <MemoryDetail key={open.memory_id} memory={open} canDelete={canWrite} onDeleted={deleted} />}
    </section>
  );
}

/** One memory with its details; `canDelete` adds a Delete button that asks once more before deleting. */
function MemoryDetail({
  memory,
  canDelete,
  onDeleted,
}: {
  memory: Memory;
  canDelete: boolean;
  onDeleted(id: string): void;
}) {
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(
    () => api.DELETE('/api/v1/memories/{id}', { params: { path: { id: memory.memory_id } } }),
    () => onDeleted(memory.memory_id),
  );
  return (
    <article className="card detail" aria-label={`Memory ${memory.memory_id}`}>
      <h2>Memory {memory.memory_id}</h2>
      <pre className="content">{memory.content}</pre>
      <dl>
        <dt>Type</dt>
        <dd>{memory.content_type}</dd>
        <dt>Project</dt>
        <dd>{memory.project}</dd>
        <dt>Keywords</dt>
        <dd>{memory.keywords.join(', ') || '—'}</dd>
        <dt>Stored</dt>
        <dd>
          {new Date(memory.created_at).toLocaleString()} by {memory.created_by ?? 'anonymous'}
        </dd>
        <dt>Vector</dt>
        <dd>
          {memory.embedding_model
            ? `${memory.embedding_model}, ${memory.embedding_dimensions} dimensions`
            : 'none yet (keyword search only)'}
        </dd>
        <dt>Found</dt>
        <dd>{memory.access_count} times</dd>
      </dl>
      {canDelete && !confirming && (
        <button type="button" onClick={() => setConfirming(true)}>
          Delete…
        </button>
      )}
      {confirming && (
        <div role="group" aria-label="Confirm deletion" className="actions">
          <span>Delete this memory for the whole team? It cannot be undone.</span>
          <button type="button" className="danger" disabled={remove.busy} onClick={() => void remove.run()}>
            Delete
          </button>
          {/* Focus lands on the safe choice when the question appears. */}
          <button type="button" autoFocus disabled={remove.busy} onClick={() => setConfirming(false)}>
            Keep
          </button>
        </div>
      )}
      <ErrorAlert error={remove.error} />
    </article>
  );
}

/** A form for a new memory: content, type, project and keywords, stored with POST /api/v1/memories. */
function StoreMemory({
  defaultProject,
  onStored,
  onCancel,
}: {
  defaultProject: string;
  onStored(out: Stored): void;
  onCancel(): void;
}) {
  const ids = { content: useId(), project: useId(), keywords: useId() };
  const [content, setContent] = useState('');
  const [type, setType] = useState<ContentType>('learning');
  const [project, setProject] = useState(defaultProject);
  const [keywords, setKeywords] = useState('');
  const store = useAction(() => {
    const words = keywords
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    return api.POST('/api/v1/memories', {
      body: {
        content,
        content_type: type,
        ...(project.trim() ? { project: project.trim() } : {}),
        ...(words.length ? { keywords: words } : {}),
      },
    });
  }, onStored);

  return (
    <form
      className="card store"
      onSubmit={(e) => {
        e.preventDefault();
        void store.run();
      }}
      aria-labelledby={`${ids.content}-title`}
    >
      <h2 id={`${ids.content}-title`}>New memory</h2>
      <label htmlFor={ids.content}>Content</label>
      <textarea id={ids.content} value={content} onChange={(e) => setContent(e.target.value)} rows={5} required />
      <div className="fields">
        <SelectField label="Kind" value={type} options={CONTENT_TYPES} onChange={setType} />
        <label htmlFor={ids.project}>In project</label>
        <input
          id={ids.project}
          value={project}
          onChange={(e) => setProject(e.target.value)}
          maxLength={200}
          placeholder="the service's default"
        />
        <label htmlFor={ids.keywords}>Keywords</label>
        <input
          id={ids.keywords}
          value={keywords}
          onChange={(e) => setKeywords(e.target.value)}
          placeholder="comma, separated"
        />
      </div>
      <ErrorAlert error={store.error} />
      <div className="actions">
        <button type="submit" disabled={store.busy}>
          Store
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
