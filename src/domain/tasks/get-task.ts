import type { Context } from '../context.js';
import { visibleProjects } from '../visibility.js';
import { getTaskRow } from '../../db/queries/tasks.js';
import type { Task } from './model.js';
import { toTask } from './serialize.js';

/** Task ids are 12 lowercase hex characters (ids.ts). */
const TASK_ID = /^[0-9a-f]{12}$/;

/**
 * One task by id (the `devstream://task/{id}` resource), or null when there is none, the caller may
 * not see its project, or the id cannot be one.
 */
export async function getTask(ctx: Pick<Context, 'db' | 'caller'>, id: string): Promise<Task | null> {
  if (!TASK_ID.test(id)) return null;
  const row = await getTaskRow(ctx.db, id, visibleProjects(ctx.caller));
  return row ? toTask(row) : null;
}
