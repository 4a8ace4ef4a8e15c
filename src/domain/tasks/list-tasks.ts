import { listTasks as queryTasks, type TaskFilter } from '../../db/queries/tasks.js';
import type { Context } from '../context.js';
import type { Task } from './model.js';
import { toTask } from './serialize.js';

export interface ListTasksInput extends TaskFilter {
  limit: number;
  offset: number;
}

/** Tasks matching every given filter; `total` counts all matches, `tasks` is one page of them. */
export async function listTasks(ctx: Context, input: ListTasksInput): Promise<{ tasks: Task[]; total: number }> {
  const { rows, total } = await queryTasks(ctx.db, input, { limit: input.limit, offset: input.offset });
  return { tasks: rows.map(toTask), total };
}
