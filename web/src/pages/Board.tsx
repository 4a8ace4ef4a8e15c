import { Fragment, useEffect, useId, useMemo, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { ErrorAlert } from '../ErrorAlert';
import { SelectField } from '../SelectField';
import { api, type ApiError, type Json } from '../api';
import { useAction, useLoad, type Answer } from '../load';
import { usePolling } from '../poll';
import { href } from '../route';
import { useCan } from '../session';
import { When } from '../time';

type TaskList = Json<'/api/v1/tasks', 'get'>;
type Task = TaskList['tasks'][number];
type Status = Task['status'];
/** Each column's tasks (one page) and how many it holds in all. */
type Columns = Record<Status, TaskList>;

const STATUSES: readonly Status[] = ['pending', 'active', 'completed', 'failed', 'skipped'];
/** What a task usually becomes next: the status the move dialog offers first. */
const NEXT: Record<Status, Status> = {
  pending: 'active',
  active: 'completed',
  completed: 'active',
  failed: 'active',
  skipped: 'pending',
};
/** The board reloads this often while the tab is visible (five small calls, one per column). */
const REFRESH_MS = 10_000;
/** The most cards one column shows (highest priority first); its count is of all its tasks. */
const PER_COLUMN = 100;

/** The drag payload type: a task id, from this page only. */
const DRAG_TYPE = 'application/x-devstream-task';

/**
 * One page per column, asked for together: a column full of done work cannot push the open tasks off
 * the board. Any failed call fails the whole refresh (its answer, Retry-After included, is returned).
 */
async function loadColumns(project: string): Promise<Answer<Columns>> {
  const answers = await Promise.all(
    STATUSES.map((status) => api.GET('/api/v1/tasks', { params: { query: { project, status, limit: PER_COLUMN } } })),
  );
  const failed = answers.find((a) => a.data === undefined);
  if (failed) return { error: failed.error, response: failed.response };
  return {
    data: Object.fromEntries(STATUSES.map((s, i) => [s, answers[i]!.data!])) as Columns,
    response: answers[0]!.response,
  };
}

/** The tasks of one project in columns by status; keys with `write` move them by drag or menu, with notes. */
export function Board({ args }: { args: string[] }) {
  const project = args[0] ?? null;
  const projects = useProjects();
  const canWrite = useCan('write');
  const pickId = useId();
  const [moving, setMoving] = useState<{ task: Task; to: Status } | null>(null);
  const [moved, setMoved] = useState<{ text: string } | null>(null);
  const said = useRef<HTMLParagraphElement>(null);
  // After a move the focused dialog is gone and the card has moved: keyboard focus goes to what happened.
  useEffect(() => {
    if (moved) said.current?.focus();
  }, [moved]);

  // No project chosen: show the first plan's board.
  useEffect(() => {
    if (project === null && projects.names?.[0]) window.location.replace(href('tasks', projects.names[0]));
  }, [project, projects.names]);

  const board = usePolling(project === null ? null : () => loadColumns(project), [project], REFRESH_MS);
  const columns = project === null ? null : board.data;
  const byId = useMemo(
    () => new Map(columns ? STATUSES.flatMap((s) => columns[s].tasks.map((t) => [t.id, t] as const)) : []),
    [columns],
  );

  const onDrop = (to: Status) => (event: DragEvent) => {
    event.preventDefault();
    const task = byId.get(event.dataTransfer.getData(DRAG_TYPE));
    if (task && task.status !== to) setMoving({ task, to });
  };
  // The latest copy the board has (a move by someone else shows in the dialog), else the one it opened with.
  const movingTask = moving && (byId.get(moving.task.id) ?? moving.task);

  return (
    <section aria-labelledby="board-title" className="board">
      <div className="toolbar">
        <h1 id="board-title">Tasks</h1>
        <label htmlFor={pickId}>Project</label>
        <select
          id={pickId}
          value={project ?? ''}
          onChange={(e) => window.location.assign(href('tasks', e.target.value))}
        >
          {project === null && <option value="">choose…</option>}
          {project !== null && !projects.names?.includes(project) && <option value={project}>{project}</option>}
          {projects.names?.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        {board.at && board.waiting === null && (
          <span className="hint">
            Live · updated <time dateTime={board.at.toISOString()}>{board.at.toLocaleTimeString()}</time>
          </span>
        )}
        <span className="hint" aria-live="polite">
          {board.waiting !== null && `Refreshing again in ${board.waiting} s`}
        </span>
        <button type="button" onClick={board.reload}>
          Refresh
        </button>
      </div>
      <ErrorAlert error={projects.error ?? board.error} />
      <p className="status" role="status" ref={said} tabIndex={-1}>
        {moved?.text}
      </p>
      {projects.names?.length === 0 && project === null && (
        <p className="status">No plans yet: agents create them with their first task.</p>
      )}
      {project !== null && columns === null && !board.error && <p className="status">Loading…</p>}
      {columns && (
        <div className="columns">
          {STATUSES.map((status) => {
            const { tasks, total } = columns[status];
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
                  {status} <span className="count">{total}</span>
                </h2>
                <ul aria-label={`${status} tasks`}>
                  {tasks.map((task) => (
                    <TaskCard
                      key={task.id}
                      task={task}
                      canWrite={canWrite}
                      onMove={() => setMoving({ task, to: NEXT[task.status] })}
                    />
                  ))}
                </ul>
                {total > tasks.length && (
                  <p className="hint">
                    {tasks.length} of {total} shown, highest priority first.
                  </p>
                )}
              </section>
            );
          })}
        </div>
      )}
      {moving && movingTask && (
        <MoveDialog
          task={movingTask}
          from={moving.task.status}
          to={moving.to}
          onClose={(done) => {
            setMoving(null);
            if (done) {
              setMoved({ text: `Moved “${movingTask.title}” to ${done}.` });
              board.reload();
            }
          }}
        />
      )}
    </section>
  );
}

/** A card's times: always created and updated; started and ended once they happened. */
function times(task: Task): Array<[string, string]> {
  const all: Array<[string, string | null]> = [
    ['Created', task.created_at],
    ['Updated', task.updated_at],
    ['Started', task.started_at],
    ['Ended', task.completed_at],
  ];
  return all.filter((entry): entry is [string, string] => entry[1] !== null);
}

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
        <span className="badge">P{task.priority}</span> <span className="badge">{task.task_type}</span> phase{' '}
        {task.phase_name}
      </p>
      <dl className="times">
        {times(task).map(([label, iso]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>
              <When iso={iso} />
            </dd>
          </Fragment>
        ))}
      </dl>
      {canWrite && (
        <button type="button" onClick={onMove} aria-label={`Move ${task.title}`}>
          Move…
        </button>
      )}
    </li>
  );
}

/**
 * Where a task goes and why: a modal dialog (focus kept inside, Escape cancels); notes are optional.
 * `task` is the latest the board has, so a move by someone else while the dialog is open shows; the
 * dialog cannot be dismissed while its call is on the way (the move would land unannounced).
 */
function MoveDialog({
  task,
  from,
  to,
  onClose,
}: {
  task: Task;
  from: Status;
  to: Status;
  onClose(done: Status | null): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = { title: useId(), notes: useId() };
  const [status, setStatus] = useState<Status>(to);
  const [notes, setNotes] = useState('');
  const move = useAction(
    () =>
      api.PATCH('/api/v1/tasks/{id}', {
        params: { path: { id: task.id } },
        body: { status, ...(notes.trim() ? { notes } : {}) },
      }),
    (data) => onClose(data.task.status),
  );

  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void move.run();
  };

  return (
    <dialog
      ref={dialog}
      aria-labelledby={ids.title}
      className="move"
      onCancel={(e) => move.busy && e.preventDefault()}
      onClose={() => onClose(null)}
    >
      <form onSubmit={submit}>
        <h2 id={ids.title}>Move “{task.title}”</h2>
        <p className="hint">
          Now {task.status}.
          {task.status !== from && <strong> Someone moved it from {from} while this was open.</strong>}
        </p>
        <SelectField
          label="New status"
          value={status}
          options={STATUSES.filter((s) => s !== from)}
          onChange={setStatus}
        />
        <label htmlFor={ids.notes}>Notes</label>
        <textarea
          id={ids.notes}
          value={notes}
          onChange={(e) => setNotes(e.target.value)}
          rows={4}
          maxLength={20_000}
          aria-describedby={`${ids.notes}-hint`}
        />
        <p className="hint" id={`${ids.notes}-hint`}>
          Optional. Kept in the task's history and stored as a decision memory of {task.project}.
        </p>
        <ErrorAlert error={move.error} />
        <div className="actions">
          <button type="submit" disabled={move.busy}>
            Move
          </button>
          <button type="button" disabled={move.busy} onClick={() => dialog.current?.close()}>
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
  const names = useMemo(
    () => (data ? data.plans.map((p) => p.title).sort((a, b) => a.localeCompare(b)) : null),
    [data],
  );
  return { names, error };
}
