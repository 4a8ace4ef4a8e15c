import { useEffect, useId, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { ErrorAlert } from '../ErrorAlert';
import { api, errorOf, type ApiError, type Json } from '../api';
import { useLoad } from '../load';
import { usePolling } from '../poll';
import { href } from '../route';
import { useCan } from '../session';
import { When } from '../time';

type TaskList = Json<'/api/v1/tasks', 'get'>;
type Task = TaskList['tasks'][number];
type Status = Task['status'];

const STATUSES: readonly Status[] = ['pending', 'active', 'completed', 'failed', 'skipped'];
/** What a task usually becomes next: the status the move dialog offers first. */
const NEXT: Record<Status, Status> = { pending: 'active', active: 'completed', completed: 'active', failed: 'active', skipped: 'pending' };
/** The board reloads this often while the tab is visible. */
const REFRESH_MS = 5_000;
/** The most tasks one board shows (the API's page limit); more are counted, not shown. */
const PAGE = 500;

/** The drag payload type: a task id, from this page only. */
const DRAG_TYPE = 'application/x-devstream-task';

/** The tasks of one project in columns by status; keys with `write` move them by drag or menu, with notes. */
export function Board({ args }: { args: string[] }) {
  const project = args[0] ?? null;
  const projects = useProjects();
  const canWrite = useCan('write');
  const pickId = useId();
  const [moving, setMoving] = useState<{ task: Task; to: Status } | null>(null);
  const [moved, setMoved] = useState('');

  // No project chosen: show the first plan's board.
  useEffect(() => {
    if (project === null && projects.names?.[0]) window.location.replace(href('tasks', projects.names[0]));
  }, [project, projects.names]);

  const tasks = usePolling(
    project === null ? null : () => api.GET('/api/v1/tasks', { params: { query: { project, limit: PAGE } } }),
    [project],
    REFRESH_MS,
  );
  const list = project === null ? null : tasks.data;

  const onDrop = (to: Status) => (event: DragEvent) => {
    event.preventDefault();
    const task = list?.tasks.find((t) => t.id === event.dataTransfer.getData(DRAG_TYPE));
    if (task && task.status !== to) setMoving({ task, to });
  };

  return (
    <section aria-labelledby="board-title" className="board">
      <div className="toolbar">
        <h1 id="board-title">Tasks</h1>
        <label htmlFor={pickId}>Project</label>
        <select id={pickId} value={project ?? ''} onChange={(e) => window.location.assign(href('tasks', e.target.value))}>
          {project === null && <option value="">choose…</option>}
          {project !== null && !projects.names?.includes(project) && <option value={project}>{project}</option>}
          {projects.names?.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <span className="hint" aria-live="polite">
          {tasks.waiting !== null
            ? `Refreshing again in ${tasks.waiting} s`
            : tasks.at && (
                <>
                  Live · updated <time dateTime={tasks.at.toISOString()}>{tasks.at.toLocaleTimeString()}</time>
                </>
              )}
        </span>
        <button type="button" onClick={tasks.reload}>
          Refresh
        </button>
      </div>
      <ErrorAlert error={projects.error ?? tasks.error} />
      <p className="status" role="status">
        {moved}
      </p>
      {projects.names?.length === 0 && project === null && <p className="status">No plans yet: agents create them with their first task.</p>}
      {project !== null && list === null && !tasks.error && <p className="status">Loading…</p>}
      {list && list.total > list.tasks.length && (
        <p className="hint">
          Showing {list.tasks.length} of {list.total} tasks.
        </p>
      )}
      {list && (
        <div className="columns">
          {STATUSES.map((status) => {
            const cards = list.tasks.filter((t) => t.status === status).sort(byPriority);
            return (
              <section
                key={status}
                className="column"
                data-status={status}
                aria-labelledby={`column-${status}`}
                onDragOver={canWrite ? (e) => e.preventDefault() : undefined}
                onDrop={canWrite ? onDrop(status) : undefined}
              >
                <h2 id={`column-${status}`}>
                  {status} <span className="count">{cards.length}</span>
                </h2>
                <ul aria-label={`${status} tasks`}>
                  {cards.map((task) => (
                    <TaskCard key={task.id} task={task} canWrite={canWrite} onMove={() => setMoving({ task, to: NEXT[task.status] })} />
                  ))}
                </ul>
              </section>
            );
          })}
        </div>
      )}
      {moving && (
        <MoveDialog
          task={moving.task}
          to={moving.to}
          onClose={(done) => {
            setMoving(null);
            if (done) {
              setMoved(`Moved “${moving.task.title}” to ${done}.`);
              tasks.reload();
            }
          }}
        />
      )}
    </section>
  );
}

const byPriority = (a: Task, b: Task) => b.priority - a.priority || a.created_at.localeCompare(b.created_at);

function TaskCard({ task, canWrite, onMove }: { task: Task; canWrite: boolean; onMove(): void }) {
  return (
    <li
      className="task"
      aria-label={`Task ${task.title}`}
      draggable={canWrite}
      onDragStart={(e) => {
        e.dataTransfer.setData(DRAG_TYPE, task.id);
        e.dataTransfer.effectAllowed = 'move';
      }}
    >
      <h3>{task.title}</h3>
      <p className="meta">
        <span className="badge">P{task.priority}</span> <span className="badge">{task.task_type}</span> phase {task.phase_name}
      </p>
      <dl className="times">
        <dt>Created</dt>
        <dd>
          <When iso={task.created_at} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <When iso={task.updated_at} />
        </dd>
        {task.started_at && (
          <>
            <dt>Started</dt>
            <dd>
              <When iso={task.started_at} />
            </dd>
          </>
        )}
        {task.completed_at && (
          <>
            <dt>Ended</dt>
            <dd>
              <When iso={task.completed_at} />
            </dd>
          </>
        )}
      </dl>
      {canWrite && (
        <button type="button" onClick={onMove} aria-label={`Move ${task.title}`}>
          Move…
        </button>
      )}
    </li>
  );
}

/** Where a task goes and why: a modal dialog (focus kept inside, Escape cancels); notes are optional. */
function MoveDialog({ task, to, onClose }: { task: Task; to: Status; onClose(done: Status | null): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = { title: useId(), status: useId(), notes: useId() };
  const [status, setStatus] = useState<Status>(to);
  const [notes, setNotes] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    const { data, error: failed, response } = await api.PATCH('/api/v1/tasks/{id}', {
      params: { path: { id: task.id } },
      body: { status, ...(notes.trim() ? { notes } : {}) },
    });
    setBusy(false);
    if (data) onClose(data.task.status);
    else setError(errorOf(failed, response.status));
  };

  return (
    <dialog ref={dialog} aria-labelledby={ids.title} onClose={() => onClose(null)} className="move">
      <form onSubmit={submit}>
        <h2 id={ids.title}>Move “{task.title}”</h2>
        <p className="hint">Now {task.status}.</p>
        <label htmlFor={ids.status}>New status</label>
        <select id={ids.status} value={status} onChange={(e) => setStatus(e.target.value as Status)}>
          {STATUSES.filter((s) => s !== task.status).map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <label htmlFor={ids.notes}>Notes</label>
        <textarea id={ids.notes} value={notes} onChange={(e) => setNotes(e.target.value)} rows={4} maxLength={20_000} aria-describedby={`${ids.notes}-hint`} />
        <p className="hint" id={`${ids.notes}-hint`}>
          Optional. Kept in the task's history and stored as a decision memory of {task.project}.
        </p>
        <ErrorAlert error={error} />
        <div className="actions">
          <button type="submit" disabled={busy}>
            Move
          </button>
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** The plan (project) titles, for choosing a board. */
function useProjects(): { names: string[] | null; error: ApiError | null } {
  const { data, error } = useLoad(() => api.GET('/api/v1/plans', { params: { query: { limit: 500 } } }), []);
  return { names: data ? data.plans.map((p) => p.title).sort((a, b) => a.localeCompare(b)) : null, error };
}
