import { z } from 'zod';
import { getPlan as queryPlan, listPlans as queryPlans, phasesWithCounts } from '../../db/queries/plans.js';
import { tasksOfPlan } from '../../db/queries/tasks.js';
import type { PhaseStatus, PlanStatus } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { Context } from '../context.js';
import { PlanDetailSchema, PlanSummarySchema, type PhaseSummary, type PlanSummary } from './model.js';
import { groupBy } from '../group-by.js';
import { iso } from '../iso-date.js';
import { toTask } from './serialize.js';
import { visibleProjects } from '../visibility.js';

type PlanRow = NonNullable<Awaited<ReturnType<typeof queryPlan>>>;
type PhaseRow = Awaited<ReturnType<typeof phasesWithCounts>>[number];

/**
 * A phase's status as shown: no tool sets a phase's status (auto-created phases are stored active), so
 * a pending or active phase whose tasks are all done (completed or skipped, at least one completed) is
 * reported completed, and active again when a task is added or reopened. Without this,
 * `phases_completed` stayed 0 for ever. Blocked and skipped phases keep their stored status.
 */
function phaseStatus(stored: PhaseStatus, counts: { total: number; completed: number; skipped: number }): PhaseStatus {
  const done = counts.completed > 0 && counts.completed + counts.skipped === counts.total;
  return (stored === 'pending' || stored === 'active') && done ? 'completed' : stored;
}

function summarize(plan: PlanRow, phaseRows: PhaseRow[]): PlanSummary {
  const phases: PhaseSummary[] = phaseRows.map((ph) => {
    const total = Number(ph.tasks_total);
    const completed = Number(ph.tasks_completed);
    return {
      id: ph.id,
      name: ph.name,
      status: phaseStatus(ph.status, { total, completed, skipped: Number(ph.tasks_skipped) }),
      sequence_order: ph.sequence_order,
      tasks_total: total,
      tasks_completed: completed,
    };
  });
  return {
    id: plan.id,
    title: plan.title,
    description: plan.description,
    status: plan.status,
    priority: plan.priority,
    objectives: Array.isArray(plan.objectives) ? plan.objectives.map(String) : [],
    estimated_hours: plan.estimated_hours,
    actual_hours: plan.actual_hours,
    phases_total: phases.length,
    phases_completed: phases.filter((p) => p.status === 'completed').length,
    tasks_total: phases.reduce((n, p) => n + p.tasks_total, 0),
    tasks_completed: phases.reduce((n, p) => n + p.tasks_completed, 0),
    created_by: plan.created_by,
    created_at: iso(plan.created_at),
    updated_at: iso(plan.updated_at),
    phases,
  };
}

/** What `devstream_list_plans` returns: its MCP outputSchema and its REST body. */
export const ListPlansResultSchema = z.object({ plans: z.array(PlanSummarySchema), total: z.number().int() });
export type ListPlansResult = z.output<typeof ListPlansResultSchema>;

/** Plans the caller may see with their phases and progress figures; counts come from one grouped query per page. */
export async function listPlans(
  ctx: Context,
  input: { status?: PlanStatus | undefined; limit: number; offset: number },
): Promise<ListPlansResult> {
  const filter = { status: input.status, projects: visibleProjects(ctx.caller) };
  const { plans, total } = await queryPlans(ctx.db, filter, input);
  const phases = await phasesWithCounts(
    ctx.db,
    plans.map((p) => p.id),
  );
  const byPlan = groupBy(phases, (ph) => ph.plan_id);
  return { plans: plans.map((p) => summarize(p, byPlan.get(p.id) ?? [])), total };
}

/** Plan ids are 12 lowercase hex characters (ids.ts). */
const PLAN_ID = /^[0-9a-f]{12}$/;

/**
 * One plan as devstream_list_plans lists it (its phases with their task counts, not the tasks):
 * the `devstream://plan/{id}` resource. Null when there is none, the caller may not see it, or the
 * id cannot be one.
 */
export async function findPlanSummary(ctx: Pick<Context, 'db' | 'caller'>, id: string): Promise<PlanSummary | null> {
  if (!PLAN_ID.test(id)) return null;
  const plan = await queryPlan(ctx.db, id, visibleProjects(ctx.caller));
  return plan ? summarize(plan, await phasesWithCounts(ctx.db, [id])) : null;
}

/** What `devstream_get_plan` returns (GET /api/v1/plans/{id}). */
export const GetPlanResultSchema = z.object({ plan: PlanDetailSchema });
export type GetPlanResult = z.output<typeof GetPlanResultSchema>;

/** One plan with its phases and every task in them; NOT_FOUND for one the caller may not see. */
export async function getPlan(ctx: Context, input: { id: string }): Promise<GetPlanResult> {
  const id = input.id.toLowerCase();
  const plan = await queryPlan(ctx.db, id, visibleProjects(ctx.caller));
  if (!plan) throw notFound(`id: no plan with id "${id}"`, { id });
  const [phases, tasks] = await Promise.all([phasesWithCounts(ctx.db, [id]), tasksOfPlan(ctx.db, id)]);
  const summary = summarize(plan, phases);
  const byPhase = groupBy(tasks, (t) => t.phase_id);
  return {
    plan: {
      ...summary,
      phases: summary.phases.map((ph) => ({ ...ph, tasks: (byPhase.get(ph.id) ?? []).map(toTask) })),
    },
  };
}
