import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, TaskStatus, TaskType } from '../schema.js';
import { notifyChangeSql } from '../change-events.js';
import { memoryInsertCtes, memoryInsertedNotifySql, type NewMemory } from './memories/insert-memory.js';
import { rowCount, unplanned } from '../unplanned.js';
import { inProjects, type ProjectScope } from './project-scope.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A task row joined with its phase and project names; timestamps as Date. */
export interface TaskRow {
  id: string;
  title: string;
  description: string;
  task_type: TaskType;
  status: TaskStatus;
  priority: number;
  phase_id: string;
  phase_name: string;
  project: string;
  assigned_agent: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface TaskFilter {
  status?: TaskStatus | undefined;
  /** Exact project title, case-insensitive. */
  project?: string | undefined;
  /** Minimum priority. */
  minPriority?: number | undefined;
  /** Exact phase name, case-insensitive. */
  phase?: string | undefined;
  /** Only tasks of these projects (the caller's limit). */
  projects?: ProjectScope;
}

function selectTasks(db: Db) {
  return db
    .selectFrom('micro_tasks as t')
    .innerJoin('phases as ph', 'ph.id', 't.phase_id')
    .innerJoin('intervention_plans as p', 'p.id', 'ph.plan_id')
    .select([
      't.id',
      't.title',
      't.description',
      't.task_type',
      't.status',
      't.priority',
      't.phase_id',
      'ph.name as phase_name',
      'p.title as project',
      't.assigned_agent',
      't.created_by',
      't.created_at',
      't.updated_at',
      't.started_at',
      't.completed_at',
    ]);
}

/** One page of tasks, most important first then newest, and the number of all matching tasks. */
export async function listTasks(
  db: Db,
  filter: TaskFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: TaskRow[]; total: number }> {
  let rows = selectTasks(db);
  let count = db.selectFrom('micro_tasks as t').select((eb) => eb.fn.countAll<number>().as('n'));
  // Filter values out of the planner's sight, page sizes in the text (unplanned.ts): one generic
  // plan per page shape, not a plan every call.
  if (filter.status) {
    rows = rows.where('t.status', '=', unplanned(filter.status, 'text'));
    count = count.where('t.status', '=', unplanned(filter.status, 'text'));
  }
  if (filter.minPriority !== undefined) {
    rows = rows.where('t.priority', '>=', unplanned(filter.minPriority, 'int'));
    count = count.where('t.priority', '>=', unplanned(filter.minPriority, 'int'));
  }
  if (filter.project !== undefined || filter.phase !== undefined || filter.projects !== undefined) {
    const { project, phase, projects } = filter;
    const phaseIds = db
      .selectFrom('phases as ph')
      .innerJoin('intervention_plans as p', 'p.id', 'ph.plan_id')
      .select('ph.id')
      .$if(project !== undefined, (q) => q.where(sql`lower(p.title)`, '=', sql`lower(${unplanned(project!, 'text')})`))
      .$if(phase !== undefined, (q) => q.where(sql`lower(ph.name)`, '=', sql`lower(${unplanned(phase!, 'text')})`))
      .$if(projects !== undefined, (q) => q.where(inProjects(sql.ref('p.id'), projects)));
    rows = rows.where('t.phase_id', 'in', phaseIds);
    count = count.where('t.phase_id', 'in', phaseIds);
  }
  const found = await rows
    .orderBy('t.priority', 'desc')
    .orderBy('t.created_at', 'desc')
    .orderBy('t.id')
    .limit(rowCount(page.limit))
    .$if(page.offset > 0, (q) => q.offset(rowCount(page.offset)))
    .execute();
  // A page that is not full ends the matches: they number offset + its rows, and counting them
  // again is a second statement for nothing (a filtered list usually fits one page). A full page,
  // or one past the end, is counted.
  if (found.length < page.limit && (found.length > 0 || page.offset === 0))
    return { rows: found, total: page.offset + found.length };
  const total = await count.executeTakeFirstOrThrow();
  return { rows: found, total: Number(total.n) };
}

/** One task by id, with its phase and project names; undefined when there is none (in `projects`). */
export async function getTaskRow(db: Db, id: string, projects?: ProjectScope): Promise<TaskRow | undefined> {
  return (await selectTasks(db)
    .where('t.id', '=', id)
    .where(inProjects(sql.ref('p.id'), projects))
    .executeTakeFirst()) as TaskRow | undefined;
}

export async function tasksOfPlan(db: Db, planId: string): Promise<TaskRow[]> {
  return selectTasks(db)
    .where('ph.plan_id', '=', planId)
    .orderBy('ph.sequence_order')
    .orderBy('t.priority', 'desc')
    .orderBy('t.created_at')
    .execute();
}

export interface NewTask {
  id: string;
  title: string;
  description: string;
  task_type: TaskType;
  priority: number;
  assigned_agent: string;
  created_by: string | null;
}

/**
 * Creates a pending micro-task with DevStream's defaults (10-minute cap, 256k context tokens) in one
 * statement: inserts it into the phase named `phaseName` (case-insensitive) of the project titled
 * `project` (case-insensitive), tells every instance (task-changed, at commit) and returns it with
 * the stored names. Returns undefined, having written nothing, when either does not exist.
 */
export async function insertTaskIntoNamedPhase(
  db: Db,
  task: NewTask & { project: string; phaseName: string },
): Promise<TaskRow | undefined> {
  const result = await sql<TaskRow>`
    with target as (
      select ph.id as phase_id, ph.name as phase_name, p.title as project
        from intervention_plans p
        join phases ph on ph.plan_id = p.id and lower(ph.name) = lower(${task.phaseName})
       where lower(p.title) = lower(${task.project})
    ), ins as (
      insert into micro_tasks (id, phase_id, title, description, task_type, priority, assigned_agent, created_by,
                               status, max_duration_minutes, max_context_tokens, retry_count)
      select ${task.id}, phase_id, ${task.title}, ${task.description}, ${task.task_type}, ${task.priority},
             ${task.assigned_agent}, ${task.created_by}, 'pending', 10, 256000, 0
        from target
      returning *
    )
    select ins.id, ins.title, ins.description, ins.task_type, ins.status, ins.priority, ins.phase_id,
           target.phase_name, target.project, ins.assigned_agent, ins.created_by,
           ins.created_at, ins.updated_at, ins.started_at, ins.completed_at,
           ${notifyChangeSql('task-changed', sql`target.project`, sql`ins.id`)} as notified
      from ins join target on target.phase_id = ins.phase_id`.execute(db);
  const row = result.rows[0] as (TaskRow & { notified?: unknown }) | undefined;
  if (!row) return undefined;
  const { notified: _, ...inserted } = row;
  return inserted;
}

/** A task after updateTaskStatus, with its project and its notes' memory (inserted now, or met as a duplicate). */
export type StatusChangeRow = TaskRow & {
  previous_status: TaskStatus;
  project_id: string;
  memory_id: string | null;
  memory_inserted: boolean;
};

/**
 * Sets a task's status in one statement: locks the row, sets `started_at` on the first move to
 * active and `completed_at` on the first move to a closing status, records the change (with the
 * caller's notes) in task_status_history, stores `note` (if any) as a memory of the task's project
 * (see memoryInsertCtes; `note.project` is not read), tells every instance (task-changed, and
 * memory-changed for a new memory) at commit, and returns the task with its previous status and
 * the memory's id: the new one, or the live memory of the project with this content already
 * (memory_inserted false); null only when that one was committed after this statement began.
 * Returns undefined, having written nothing, when no task has this id (in `projects`).
 */
export async function updateTaskStatus(
  db: Db,
  change: { id: string; status: TaskStatus; notes: string | null; createdBy: string | null; projects?: ProjectScope },
  note?: NewMemory,
): Promise<StatusChangeRow | undefined> {
  const { id, status, notes, createdBy, projects } = change;
  const visible =
    projects === undefined
      ? sql`true`
      : sql`phase_id in (select ph.id from phases ph where ${inProjects(sql.ref('ph.plan_id'), projects)})`;
  const closing = status === 'completed' || status === 'failed' || status === 'skipped';
  const memory = note
    ? sql`, target as (
        select p.id, p.title from upd join phases ph on ph.id = upd.phase_id join intervention_plans p on p.id = ph.plan_id
      ), ${memoryInsertCtes(note)}`
    : sql``;
  const result = await sql<StatusChangeRow>`
    with old as (
      select id, status from micro_tasks where id = ${id} and ${visible} for update
    ), upd as (
      update micro_tasks t
         set status = ${status},
             started_at = case when ${status === 'active'} then coalesce(t.started_at, now()) else t.started_at end,
             completed_at = case when ${closing} then coalesce(t.completed_at, now()) else t.completed_at end
        from old
       where t.id = old.id
      returning t.*, old.status as previous_status
    ), hist as (
      insert into task_status_history (task_id, from_status, to_status, notes, created_by)
      select id, previous_status, status, ${notes}, ${createdBy} from upd
    )${memory}
    select upd.id, upd.title, upd.description, upd.task_type, upd.status, upd.priority, upd.phase_id,
           ph.name as phase_name, p.title as project, p.id as project_id, upd.assigned_agent, upd.created_by,
           upd.created_at, upd.updated_at, upd.started_at, upd.completed_at, upd.previous_status,
           -- The notes' memory: the new one, or the same notes stored before (see memoryInsertCtes).
           ${note ? sql`coalesce(ins.id, (select id from dup))` : sql`null::text`} as memory_id,
           ${note ? sql`ins.id is not null` : sql`false`} as memory_inserted,
           ${notifyChangeSql('task-changed', sql`p.title`, sql`upd.id`)} as task_notified
           ${note ? sql`, ${memoryInsertedNotifySql} as memory_notified` : sql``}
      from upd
      join phases ph on ph.id = upd.phase_id
      join intervention_plans p on p.id = ph.plan_id
      ${note ? sql`cross join target left join ins on true` : sql``}`.execute(db);
  const row = result.rows[0] as (typeof result.rows)[number] & { task_notified?: unknown; memory_notified?: unknown };
  if (!row) return undefined;
  const { task_notified: _, memory_notified: __, ...task } = row;
  return task;
}
