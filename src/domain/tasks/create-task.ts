import { z } from 'zod';
import { notifyChange } from '../../db/change-events.js';
import { fromDbError } from '../../db/errors.js';
import { findOrCreatePhase, findOrCreatePlan } from '../../db/queries/plans.js';
import { insertTaskIntoNamedPhase } from '../../db/queries/tasks.js';
import type { TaskType } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import type { Context } from '../context.js';
import { newId } from '../ids.js';
import { TaskSchema } from './model.js';
import { toTask } from './serialize.js';
import { writeProject } from '../visibility.js';

export interface CreateTaskInput {
  title: string;
  description: string;
  task_type: TaskType;
  priority: number;
  phase_name: string;
  project?: string | undefined;
  assigned_agent?: string | undefined;
}

/** What `devstream_create_task` returns: its MCP outputSchema and its REST body. */
export const CreateTaskResultSchema = z.object({
  success: z.boolean(),
  task: TaskSchema,
  /** Which of the project and the phase this call created. */
  auto_created: z.object({ project: z.boolean(), phase: z.boolean() }),
});
export type CreateTaskResult = z.output<typeof CreateTaskResultSchema>;

/**
 * Creates a pending task in the named phase of the named project (DEFAULT_PROJECT when none, see
 * writeProject), creating the project and the phase when no existing one has that exact name
 * (case-insensitive). A project the caller is not limited to is FORBIDDEN, existing or not.
 * Either the task exists afterwards, or nothing was written: when project and phase exist (the
 * common case) it is one INSERT; otherwise one transaction creates what is missing, then the task.
 */
export async function createTask(ctx: Context, input: CreateTaskInput): Promise<CreateTaskResult> {
  const projectTitle = writeProject(ctx.caller, input.project, ctx.defaultProject);
  const createdBy = ctx.caller.name;
  const task = {
    id: newId(),
    project: projectTitle,
    phaseName: input.phase_name,
    title: input.title,
    description: input.description,
    task_type: input.task_type,
    priority: input.priority,
    assigned_agent: input.assigned_agent ?? 'developer',
    created_by: createdBy,
  };
  // The insert announces the task itself (task-changed, at commit).
  const existing = await insertTaskIntoNamedPhase(ctx.db, task);
  if (existing) return { success: true, task: toTask(existing), auto_created: { project: false, phase: false } };

  const result = await ctx.db.transaction().execute(async (trx) => {
    let plan;
    let phase;
    try {
      plan = await findOrCreatePlan(trx, { id: newId(), title: projectTitle, createdBy });
      phase = await findOrCreatePhase(trx, { id: newId(), planId: plan.id, name: input.phase_name, createdBy });
    } catch (error) {
      if (error instanceof AppError) throw error;
      // An unreachable database is that, not a failed auto-creation.
      const dbError = fromDbError(error);
      if (dbError.status === 503) throw dbError;
      throw new AppError(
        'AUTO_CREATE_FAILED',
        `could not find or create project "${projectTitle}" / phase "${input.phase_name}"`,
        {
          cause: error,
        },
      );
    }
    const row = await insertTaskIntoNamedPhase(trx, task);
    if (!row) throw new Error(`phase "${phase.name}" of "${plan.title}" vanished while the task was created`);
    const created = toTask(row);
    // Announced at commit, to every instance: the plan when this made it or its phase (the insert tells of the task).
    if (plan.created || phase.created)
      await notifyChange(trx, { type: 'plan-changed', project: plan.title, id: plan.id });
    return { success: true as const, task: created, auto_created: { project: plan.created, phase: phase.created } };
  });
  if (result.auto_created.project)
    ctx.notice('info', `Created project "${result.task.project}"`, { project: result.task.project });
  if (result.auto_created.phase) {
    ctx.notice('info', `Created phase "${result.task.phase_name}" in "${result.task.project}"`, {
      phase: result.task.phase_name,
    });
  }
  return result;
}
