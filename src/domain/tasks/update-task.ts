import { updateTaskStatus } from '../../db/queries/tasks.js';
import type { TaskStatus } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { Context } from '../context.js';
import type { Task } from './model.js';
import { toTask } from './serialize.js';

export interface UpdateTaskInput {
  task_id: string;
  status: TaskStatus;
  notes?: string | undefined;
}

export interface UpdateTaskResult {
  success: true;
  task: Task;
  previous_status: TaskStatus;
  /** The memory the notes were stored as; null until semantic memory exists. */
  memory_id: string | null;
}

/**
 * Moves a task to a new status. `started_at` is set the first time it becomes active,
 * `completed_at` the first time it is completed, failed or skipped. Notes are kept in the
 * task's status history.
 */
export async function updateTask(ctx: Context, input: UpdateTaskInput): Promise<UpdateTaskResult> {
  const id = input.task_id.toLowerCase();
  const row = await updateTaskStatus(ctx.db, {
    id,
    status: input.status,
    notes: input.notes ?? null,
    createdBy: ctx.caller.name,
  });
  if (!row) throw notFound(`task_id: no task with id "${id}"`, { task_id: id });
  const { previous_status, ...task } = row;
  return { success: true, task: toTask(task), previous_status, memory_id: null };
}
