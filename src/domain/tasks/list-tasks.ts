import { z } from 'zod';
import { listTasks as queryTasks, type TaskFilter } from '../../db/queries/tasks.js';
import type { Context } from '../context.js';
import { visibleProjects } from '../visibility.js';
import { TaskSchema } from './model.js';
import { toTask } from './serialize.js';

export interface ListTasksInput extends TaskFilter {
  limit: number;
  offset: number;
}

/** What `devstream_list_tasks` returns: its MCP outputSchema and its REST body. */
export const ListTasksResultSchema = z.object({ tasks: z.array(TaskSchema), total: z.number().int() });
export type ListTasksResult = z.output<typeof ListTasksResultSchema>;

/**
 * Tasks matching every given filter, of the projects the caller may see; `total` counts all
 * matches, `tasks` is one page of them.
 */
export async function listTasks(ctx: Context, input: ListTasksInput): Promise<ListTasksResult> {
  const filter = { ...input, projects: visibleProjects(ctx.caller) };
  const { rows, total } = await queryTasks(ctx.db, filter, { limit: input.limit, offset: input.offset });
  return { tasks: rows.map(toTask), total };
}
