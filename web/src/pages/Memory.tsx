import { useId, useState, type FormEvent } from 'react';
import { ErrorAlert } from '../ErrorAlert';
import { api, errorOf, type ApiError } from '../api';
import type { paths } from '../schema';

type Search = paths['/api/v1/memories/search']['post']['responses']['200']['content']['application/json'];
type Hit = Search['results'][number];
type Memory = paths['/api/v1/memories/{id}']['get']['responses']['200']['content']['application/json']['memory'];

const CONTENT_TYPES = ['code', 'documentation', 'context', 'output', 'error', 'decision', 'learning'] as const;
type ContentType = (typeof CONTENT_TYPES)[number];

const rank = (r: number | null | undefined) => (r == null ? '—' : `#${r}`);

/** Hybrid search over the team's memories, with the method and each branch's rank shown; a hit opens. */
export function MemoryPage() {
  const ids = { query: useId(), type: useId(), project: useId(), since: useId() };
  const [query, setQuery] = useState('');
  const [type, setType] = useState<ContentType | ''>('');
  const [project, setProject] = useState('');
  const [since, setSince] = useState('');
  const [result, setResult] = useState<Search | null>(null);
  const [open, setOpen] = useState<Memory | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const search = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setOpen(null);
    const { data, error: failed, response } = await api.POST('/api/v1/memories/search', {
      body: {
        query,
        limit: 20,
        ...(type ? { content_type: type } : {}),
        ...(project.trim() ? { project: project.trim() } : {}),
        ...(since ? { created_after: new Date(`${since}T00:00:00`).toISOString() } : {}),
      },
    });
    setBusy(false);
    if (data) {
      setResult(data);
      setError(null);
    } else setError(errorOf(failed, response.status));
  };

  const show = async (hit: Hit) => {
    const { data, error: failed, response } = await api.GET('/api/v1/memories/{id}', { params: { path: { id: hit.memory_id } } });
    if (data) setOpen(data.memory);
    else setError(errorOf(failed, response.status));
  };

  return (
    <section aria-labelledby="memory-title">
      <h1 id="memory-title">Memory</h1>
      <form className="search" onSubmit={search} role="search">
        <label htmlFor={ids.query}>Search</label>
        <input id={ids.query} type="search" value={query} onChange={(e) => setQuery(e.target.value)} required maxLength={2000} />
        <label htmlFor={ids.type}>Type</label>
        <select id={ids.type} value={type} onChange={(e) => setType(e.target.value as ContentType | '')}>
          <option value="">any</option>
          {CONTENT_TYPES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
        <label htmlFor={ids.project}>Project</label>
        <input id={ids.project} value={project} onChange={(e) => setProject(e.target.value)} maxLength={200} />
        <label htmlFor={ids.since}>Since</label>
        <input id={ids.since} type="date" value={since} onChange={(e) => setSince(e.target.value)} />
        <button type="submit" disabled={busy}>
          Search
        </button>
      </form>
      <ErrorAlert error={error} />
      {result && (
        <div className="results">
          <p className="status" aria-live="polite">
            {result.total} result{result.total === 1 ? '' : 's'} by <span className="badge">{result.method}</span> search
            {result.method_note ? ` (${result.method_note})` : ''}
          </p>
          <ol className="hits">
            {result.results.map((hit) => (
              <li key={hit.memory_id}>
                <button type="button" className="hit" onClick={() => void show(hit)} aria-label={`Open memory ${hit.memory_id}`}>
                  <span className="meta">
                    <span className="badge">{hit.content_type}</span> {hit.project} · vector {rank(hit.vector_rank)} · keyword {rank(hit.keyword_rank)}
                  </span>
                  <span className="excerpt">{hit.content.length > 240 ? `${hit.content.slice(0, 240)}…` : hit.content}</span>
                </button>
              </li>
            ))}
          </ol>
        </div>
      )}
      {open && (
        <article className="card detail" aria-label={`Memory ${open.memory_id}`}>
          <h2>Memory {open.memory_id}</h2>
          <pre className="content">{open.content}</pre>
          <dl>
            <dt>Type</dt>
            <dd>{open.content_type}</dd>
            <dt>Project</dt>
            <dd>{open.project}</dd>
            <dt>Keywords</dt>
            <dd>{open.keywords.join(', ') || '—'}</dd>
            <dt>Stored</dt>
            <dd>
              {new Date(open.created_at).toLocaleString()} by {open.created_by ?? 'anonymous'}
            </dd>
            <dt>Vector</dt>
            <dd>{open.embedding_model ? `${open.embedding_model}, ${open.embedding_dimensions} dimensions` : 'none yet (keyword search only)'}</dd>
            <dt>Found</dt>
            <dd>{open.access_count} times</dd>
          </dl>
        </article>
      )}
    </section>
  );
}
