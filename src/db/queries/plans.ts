import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, PlanStatus } from '../schema.js';
import { inProjects, type ProjectScope } from './project-scope.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Finds a project by exact title (case-insensitive) or creates it with DevStream's auto-creation
 * defaults (active, priority 7, objectives from its name), but no description and no estimate: an
 * auto-created project has none, and invented ones ("Auto-created project for …", 100 hours) showed
 * up in every plan list as if someone had planned them. Concurrent callers converge on one row: the
 * unique index on lower(title) makes every insert but one do nothing, and those then read the winner's row.
 */
export async function findOrCreatePlan(
  db: Db,
  plan: { id: string; title: string; createdBy: string | null },
): Promise<{ id: string; title: string; created: boolean }> {
  const inserted = await db
    .insertInto('intervention_plans')
    .values({
      id: plan.id,
      title: plan.title,
      description: null,
      objectives: JSON.stringify([
        `Complete development of ${plan.title}`,
        'Implement core functionality',
        'Ensure quality and testing',
      ]),
      expected_outcome: `${plan.title} delivered with its planned functionality`,
      status: 'active',
      priority: 7,
      estimated_hours: null,
      // No tool records time spent: "0 hours" would be as invented as the estimate.
      actual_hours: null,
      created_by: plan.createdBy,
    })
    .onConflict((oc) => oc.expression(sql`(lower(title))`).doNothing())
    .returning(['id', 'title'])
    .executeTakeFirst();
  if (inserted) return { ...inserted, created: true };
  const existing = await findPlanByTitle(db, plan.title);
  if (!existing) throw new Error(`project "${plan.title}" vanished during auto-creation`);
  return { ...existing, created: false };
}

export async function findPlanByTitle(db: Db, title: string) {
  return db
    .selectFrom('intervention_plans')
    .select(['id', 'title'])
    .where(sql`lower(title)`, '=', sql`lower(${title})`)
    .executeTakeFirst();
}

/**
 * Finds a phase of a plan by exact name (case-insensitive) or appends it after the plan's last phase
 * (active, with no description and no estimate: none is invented).
 */
export async function findOrCreatePhase(
  db: Db,
  phase: { id: string; planId: string; name: string; createdBy: string | null },
): Promise<{ id: string; name: string; created: boolean }> {
  const inserted = await db
    .insertInto('phases')
    .values((eb) => ({
      id: phase.id,
      plan_id: phase.planId,
      name: phase.name,
      description: null,
      sequence_order: eb
        .selectFrom('phases')
        .select(sql<number>`coalesce(max(sequence_order), 0) + 1`.as('next'))
        .where('plan_id', '=', phase.planId),
      status: 'active',
      estimated_minutes: null,
      created_by: phase.createdBy,
    }))
    .onConflict((oc) => oc.expression(sql`plan_id, (lower(name))`).doNothing())
    .returning(['id', 'name'])
    .executeTakeFirst();
  if (inserted) return { ...inserted, created: true };
  const existing = await db
    .selectFrom('phases')
    .select(['id', 'name'])
    .where('plan_id', '=', phase.planId)
    .where(sql`lower(name)`, '=', sql`lower(${phase.name})`)
    .executeTakeFirst();
  if (!existing) throw new Error(`phase "${phase.name}" vanished during auto-creation`);
  return { ...existing, created: false };
}

const planColumns = [
  'id',
  'title',
  'description',
  'status',
  'priority',
  'objectives',
  'estimated_hours',
  'actual_hours',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** One page of plans (of `projects`), highest priority first then newest, and the number of all matching plans. */
export async function listPlans(
  db: Db,
  filter: { status?: PlanStatus | undefined; projects?: ProjectScope },
  page: { limit: number; offset: number },
) {
  const visible = inProjects(sql.ref('id'), filter.projects);
  let rows = db.selectFrom('intervention_plans').select(planColumns).where(visible);
  let count = db
    .selectFrom('intervention_plans')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(visible);
  if (filter.status) {
    rows = rows.where('status', '=', filter.status);
    count = count.where('status', '=', filter.status);
  }
  const [plans, total] = await Promise.all([
    rows
      .orderBy('priority', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  return { plans, total: Number(total.n) };
}

/** One plan by id; undefined when there is none (in `projects`). */
export async function getPlan(db: Db, id: string, projects?: ProjectScope) {
  return db
    .selectFrom('intervention_plans')
    .select(planColumns)
    .where('id', '=', id)
    .where(inProjects(sql.ref('id'), projects))
    .executeTakeFirst();
}

/**
 * The phases of the given plans, in order, each with its task counts: one statement whose per-phase
 * counts are index-only scans of (phase_id, status), so the cost follows the page, not the table.
 */
export async function phasesWithCounts(db: Db, planIds: string[]) {
  if (planIds.length === 0) return [];
  // One parameter for the page's plans, not one each: one statement text for every page size.
  return db
    .selectFrom('phases as ph')
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('micro_tasks as t')
          .select((c) => [
            c.fn.countAll<number>().as('tasks_total'),
            c.fn.countAll<number>().filterWhere('t.status', '=', 'completed').as('tasks_completed'),
            c.fn.countAll<number>().filterWhere('t.status', '=', 'skipped').as('tasks_skipped'),
          ])
          .whereRef('t.phase_id', '=', 'ph.id')
          .as('c'),
      (join) => join.onTrue(),
    )
    .select([
      'ph.id',
      'ph.plan_id',
      'ph.name',
      'ph.status',
      'ph.sequence_order',
      'c.tasks_total',
      'c.tasks_completed',
      'c.tasks_skipped',
    ])
    .where(sql<boolean>`ph.plan_id = any (${planIds}::varchar[])`)
    .orderBy('ph.plan_id')
    .orderBy('ph.sequence_order')
    .orderBy('ph.created_at')
    .execute();
}
