import { z } from 'zod';
import { findByHash } from '../../db/queries/memories/find-duplicate.js';
import { updateTaskStatus } from '../../db/queries/tasks.js';
import { TASK_STATUSES, type TaskStatus } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { Context } from '../context.js';
import { newId } from '../ids.js';
import { contentHash } from '../memory/classify.js';
import { TaskSchema } from './model.js';
import { toTask } from './serialize.js';
import { visibleProjects } from '../visibility.js';

export interface UpdateTaskInput {
  task_id: string;
  status: TaskStatus;
  notes?: string | undefined;
}

/** What `devstream_update_task` returns: its MCP outputSchema and its REST body. */
export const UpdateTaskResultSchema = z.object({
  success: z.boolean(),
  task: TaskSchema,
  previous_status: z.enum(TASK_STATUSES),
  memory_id: z.string().nullable().describe('The memory the notes were stored as (null: not stored as a memory)'),
});
export type UpdateTaskResult = z.output<typeof UpdateTaskResultSchema>;

/**
 * Moves a task to a new status. `started_at` is set the first time it becomes active,
 * `completed_at` the first time it is completed, failed or skipped. Notes are kept in the task's
 * status history and stored, in the same statement, as a `decision` memory of the task's project
 * (DevStream's format), which the embedding worker then embeds: update_task never waits on the
 * embedder. One round trip (two when the notes repeat a memory of the project stored while it ran).
 */
export async function updateTask(ctx: Context, input: UpdateTaskInput): Promise<UpdateTaskResult> {
  const id = input.task_id.toLowerCase();
  const notes = input.notes?.trim() ? input.notes : undefined;
  const enqueue = ctx.memory.embedder.enabled;
  const content = notes === undefined ? undefined : `Task status update: ${input.status}. Notes: ${notes}`;
  // A task of a project the caller may not see is NOT_FOUND, as if absent.
  const row = await updateTaskStatus(
    ctx.db,
    {
      id,
      status: input.status,
      notes: notes ?? null,
      createdBy: ctx.caller.name,
      projects: visibleProjects(ctx.caller),
    },
    content === undefined
      ? undefined
      : {
          id: newId(),
          project: '', // the task's own project (updateTaskStatus)
          task_id: id,
          content,
          content_type: 'decision',
          content_format: 'text',
          keywords: ['task', 'update', input.status],
          importance_score: 0.7,
          content_hash: contentHash(content),
          source: 'task_update',
          embedding: null,
          enqueue,
          created_by: ctx.caller.name,
        },
  );
  if (!row) throw notFound(`task_id: no task with id "${id}"`, { task_id: id });
  const { previous_status, project_id, memory_id, memory_inserted, ...task } = row;
  let memoryId: string | null = memory_id;
  // The same notes stored by another call since the statement began are read now. The update stands
  // either way (it has committed): a duplicate deleted meanwhile leaves no id.
  if (content !== undefined && memoryId === null)
    memoryId = (await findByHash(ctx.db, project_id, contentHash(content)))?.id ?? null;
  else if (memory_inserted && enqueue) ctx.memory.queued('embedding');
  return { success: true, task: toTask(task), previous_status, memory_id: memoryId };
}
