import { z } from 'zod';
import { PHASE_STATUSES, PLAN_STATUSES, TASK_STATUSES, TASK_TYPES } from '../../db/schema.js';

const isoTimestamp = z.iso.datetime({ offset: true }).describe('ISO 8601 timestamp');

/** A task as every tool and route returns it. */
export const TaskSchema = z.object({
  id: z.string().describe('12 lowercase hex characters'),
  title: z.string(),
  description: z.string(),
  task_type: z.enum(TASK_TYPES),
  status: z.enum(TASK_STATUSES),
  priority: z.number().int().min(1).max(10),
  phase_id: z.string(),
  phase_name: z.string(),
  project: z.string().describe('The project (plan) title'),
  assigned_agent: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
  started_at: isoTimestamp.nullable(),
  completed_at: isoTimestamp.nullable(),
});
export type Task = z.infer<typeof TaskSchema>;

export const PhaseSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  status: z
    .enum(PHASE_STATUSES)
    .describe(
      'completed when every task is completed or skipped (at least one completed); active again when one is added or reopened',
    ),
  sequence_order: z.number().int(),
  tasks_total: z.number().int(),
  tasks_completed: z.number().int(),
});
export type PhaseSummary = z.infer<typeof PhaseSummarySchema>;

export const PlanSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  status: z.enum(PLAN_STATUSES),
  priority: z.number().int(),
  objectives: z.array(z.string()),
  estimated_hours: z.number().nullable(),
  actual_hours: z.number().nullable(),
  phases_total: z.number().int(),
  phases_completed: z.number().int(),
  tasks_total: z.number().int(),
  tasks_completed: z.number().int(),
  created_by: z.string().nullable(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
  phases: z.array(PhaseSummarySchema),
});
export type PlanSummary = z.infer<typeof PlanSummarySchema>;

export const PlanDetailSchema = PlanSummarySchema.extend({
  phases: z.array(PhaseSummarySchema.extend({ tasks: z.array(TaskSchema) })),
});
export type PlanDetail = z.infer<typeof PlanDetailSchema>;

/** DevStream's priority bands. */
export function priorityLabel(priority: number): 'HIGH' | 'MEDIUM' | 'LOW' {
  return priority >= 8 ? 'HIGH' : priority >= 5 ? 'MEDIUM' : 'LOW';
}
