import { z } from 'zod';
import { PLAN_STATUSES, TASK_STATUSES, TASK_TYPES } from '../db/schema.js';
import { createTask, CreateTaskResultSchema } from '../domain/tasks/create-task.js';
import { getPlan, GetPlanResultSchema, listPlans, ListPlansResultSchema } from '../domain/tasks/list-plans.js';
import { listTasks, ListTasksResultSchema } from '../domain/tasks/list-tasks.js';
import {
  renderCreatedTask,
  renderPlan,
  renderPlanList,
  renderTaskList,
  renderUpdatedTask,
} from '../domain/tasks/render.js';
import { updateTask, UpdateTaskResultSchema } from '../domain/tasks/update-task.js';
import { hexId, name, page, text } from '../domain/fields.js';
import { planLink, taskLink } from '../domain/resource-links.js';
import { defineOperation } from './operation.js';

const priority = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be from 1 to 10')
  .max(10, 'must be from 1 to 10');

export const listTasksOp = defineOperation({
  name: 'devstream_list_tasks',
  title: 'List tasks',
  description:
    'List DevStream tasks, most important first, filtered by status, project (exact name, case-insensitive) and minimum priority. ' +
    'Returns one page (limit/offset) and the total number of matches.',
  action: 'listing tasks',
  input: z.strictObject({
    status: z.enum(TASK_STATUSES).optional().describe('Only tasks with this status'),
    project: name('project').optional().describe('Only tasks of this project (exact name, case-insensitive)'),
    priority: priority.optional().describe('Only tasks with at least this priority (1-10)'),
    ...page(50, 500),
  }),
  output: ListTasksResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'GET', path: '/tasks' }],
  handler: (ctx, input) =>
    listTasks(ctx, {
      status: input.status,
      project: input.project,
      minPriority: input.priority,
      limit: input.limit,
      offset: input.offset,
    }),
  render: renderTaskList,
  links: (out) => out.tasks.map(taskLink),
});

export const createTaskOp = defineOperation({
  name: 'devstream_create_task',
  title: 'Create task',
  description:
    'Create a DevStream task in a phase of a project. A project or phase that does not exist under exactly that name ' +
    '(case-insensitive) is created first; the result says which were created.',
  action: 'creating task',
  input: z.strictObject({
    title: name('title').describe('Task title'),
    description: text(20_000, { what: 'description', trim: true, nonEmpty: true }).describe(
      'Detailed task description',
    ),
    task_type: z.enum(TASK_TYPES).describe('Kind of work'),
    priority: priority.describe('Priority 1-10 (higher = more important)'),
    phase_name: name('phase_name').describe('Phase name, e.g. "Core Engine & Infrastructure"'),
    project: name('project').optional().describe("Project name (default: the server's DEFAULT_PROJECT)"),
    assigned_agent: name('assigned_agent', 50).optional().describe('Agent the task is for (default "developer")'),
  }),
  output: CreateTaskResultSchema,
  scope: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  routes: [{ method: 'POST', path: '/tasks', status: 201 }],
  handler: createTask,
  render: renderCreatedTask,
});

export const updateTaskOp = defineOperation({
  name: 'devstream_update_task',
  title: 'Update task status',
  description:
    "Set a task's status. started_at is set the first time it becomes active; completed_at the first time it is " +
    'completed, failed or skipped. Optional notes are kept with the change.',
  action: 'updating task',
  input: z.strictObject({
    task_id: hexId.describe('Task id (12 hex characters)'),
    status: z.enum(TASK_STATUSES).describe('New status'),
    notes: text(20_000, { what: 'notes' }).optional().describe('Notes about the update'),
  }),
  output: UpdateTaskResultSchema,
  scope: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  routes: [{ method: 'PATCH', path: '/tasks/:id', params: { id: 'task_id' } }],
  handler: updateTask,
  render: renderUpdatedTask,
});

export const listPlansOp = defineOperation({
  name: 'devstream_list_plans',
  title: 'List plans',
  description:
    'List intervention plans (projects) with their phases and progress: phases and tasks in total and completed.',
  action: 'listing plans',
  input: z.strictObject({
    status: z.enum(PLAN_STATUSES).optional().describe('Only plans with this status'),
    ...page(50, 500),
  }),
  output: ListPlansResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'GET', path: '/plans' }],
  handler: listPlans,
  render: renderPlanList,
  links: (out) => out.plans.map(planLink),
});

export const getPlanOp = defineOperation({
  name: 'devstream_get_plan',
  title: 'Get plan',
  description: 'One plan with its phases and every task in them.',
  action: 'getting plan',
  input: z.strictObject({ id: hexId.describe('Plan id (12 hex characters)') }),
  output: GetPlanResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  tool: false,
  routes: [{ method: 'GET', path: '/plans/:id' }],
  handler: getPlan,
  render: renderPlan,
});

export const taskOperations = [listTasksOp, createTaskOp, updateTaskOp, listPlansOp, getPlanOp];
