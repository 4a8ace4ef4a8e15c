import { sql, type Kysely } from 'kysely';
import type { Database, PhaseStatus, PlanStatus, TaskStatus, TaskType } from '../../src/db/schema.js';

/**
 * A realistic, deterministic data set: projects → phases → tasks, generated in JS from a seeded
 * PRNG and written with one `insert … select from unnest(…)` per table (three round trips), then
 * VACUUM ANALYZE, as a database that has been running for a while would be.
 */

export interface SeedSizes {
  projects: number;
  phasesPerProject: number;
  tasksPerPhase: number;
}

export interface SeededPlan {
  id: string;
  title: string;
  phases: { id: string; name: string }[];
}

export interface SeededData {
  plans: SeededPlan[];
  /** Every task id with its seeded status, in insertion order. */
  tasks: { id: string; status: TaskStatus }[];
  counts: { plans: number; phases: number; tasks: number };
  /** Tasks per status and per priority, as seeded (for reading the list figures). */
  distribution: { status: Record<string, number>; priority: Record<string, number>; task_type: Record<string, number> };
}

/** mulberry32: small, fast, good enough for test data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rand {
  constructor(readonly next: () => number) {}
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** Picks by weight: `[[value, weight], …]`. */
  weighted<T>(pairs: readonly (readonly [T, number])[]): T {
    const total = pairs.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [value, w] of pairs) {
      x -= w;
      if (x < 0) return value;
    }
    return pairs[pairs.length - 1]![0];
  }
  /** 12 lowercase hex characters, unique within this generator's run. */
  id(seen: Set<string>): string {
    for (;;) {
      let s = '';
      for (let i = 0; i < 12; i++) s += Math.floor(this.next() * 16).toString(16);
      if (!seen.has(s)) {
        seen.add(s);
        return s;
      }
    }
  }
}

const AREAS = [
  'Payments',
  'Search',
  'Identity',
  'Billing',
  'Notifications',
  'Analytics',
  'Onboarding',
  'Checkout',
  'Inventory',
  'Reporting',
];
const KINDS = [
  'Service',
  'Platform',
  'Revamp',
  'Migration',
  'Gateway',
  'Dashboard',
  'Pipeline',
  'API',
  'SDK',
  'Portal',
];

/** Per slot (sequence order 1..5), the names a phase in that slot may have, and its typical task types. */
const PHASE_SLOTS: { names: string[]; types: readonly (readonly [TaskType, number])[] }[] = [
  {
    names: ['Discovery & Analysis', 'Research & Design', 'Requirements & Scoping'],
    types: [
      ['analysis', 5],
      ['research', 4],
      ['documentation', 1],
      ['review', 1],
    ],
  },
  {
    names: ['Core Engine & Infrastructure', 'Data Model & Storage', 'Foundation'],
    types: [
      ['coding', 7],
      ['testing', 1],
      ['review', 1],
      ['analysis', 1],
    ],
  },
  {
    names: ['API & Integration', 'Features & UI', 'Integration Layer'],
    types: [
      ['coding', 6],
      ['testing', 2],
      ['review', 1],
      ['documentation', 1],
    ],
  },
  {
    names: ['Testing & QA', 'Hardening & Performance', 'Verification'],
    types: [
      ['testing', 6],
      ['coding', 2],
      ['review', 2],
    ],
  },
  {
    names: ['Documentation & Release', 'Rollout & Handover', 'Launch'],
    types: [
      ['documentation', 5],
      ['review', 2],
      ['coding', 1],
      ['testing', 1],
    ],
  },
];

const VERBS: Record<TaskType, string[]> = {
  analysis: ['Analyse', 'Assess', 'Map', 'Profile', 'Audit'],
  coding: ['Implement', 'Refactor', 'Add', 'Wire up', 'Fix', 'Extract', 'Port'],
  documentation: ['Document', 'Write guide for', 'Describe', 'Update README for'],
  testing: ['Test', 'Add integration tests for', 'Add property tests for', 'Load-test', 'Fuzz'],
  review: ['Review', 'Security-review', 'Code-review', 'Sign off'],
  research: ['Evaluate', 'Prototype', 'Compare options for', 'Spike on'],
};
const OBJECTS = [
  'retry logic for webhook delivery',
  'idempotency keys on POST endpoints',
  'the pagination cursor',
  'rate limiting per API key',
  'the audit log writer',
  'schema migration for invoices',
  'connection pool sizing',
  'the search ranking function',
  'OAuth token refresh',
  'session expiry handling',
  'CSV export of reports',
  'the event outbox',
  'soft deletes on accounts',
  'the currency conversion cache',
  'email template rendering',
  'the background job scheduler',
  'feature flag evaluation',
  'multi-tenant row filtering',
  'the metrics exporter',
  'error budget alerts',
  'the upload virus scan hook',
  'locale fallbacks',
  'the dead-letter queue',
  'SLA dashboards',
  'the checkout state machine',
  'stock reservation timeouts',
  'PDF invoice layout',
  'the GraphQL gateway schema',
  'SSO with SAML',
  'push notification batching',
  'the data retention job',
  'index usage on orders',
];
const SENTENCES = [
  'Follow the existing module layout and keep the public interface unchanged.',
  'The current behaviour drops events under load; reproduce it first with a failing test.',
  'Coordinate with the platform team before touching shared configuration.',
  'Acceptance: p95 latency stays under budget and no new warnings appear in the logs.',
  'Keep the change behind a feature flag until the rollout review.',
  'Record the decision and its alternatives in the design notes.',
  'Edge cases: empty input, unicode names, very large payloads and concurrent writers.',
  'The previous attempt stalled on flaky CI; split the work into smaller pull requests.',
  'Metrics must be exported with the standard labels so existing dashboards keep working.',
  'Make sure the migration is reversible and safe to run while the service is live.',
  'Customers reported confusing error messages here; make them name the offending field.',
  'Pair with the reviewer on the tricky parts instead of leaving long review threads.',
];
const AGENTS: readonly (readonly [string | null, number])[] = [
  ['developer', 6],
  ['architect', 1],
  ['tester', 2],
  ['reviewer', 1],
  ['researcher', 1],
  ['documenter', 1],
  [null, 1],
];
const PRIORITY_WEIGHTS: readonly (readonly [number, number])[] = [
  [1, 2],
  [2, 3],
  [3, 5],
  [4, 7],
  [5, 12],
  [6, 12],
  [7, 11],
  [8, 9],
  [9, 5],
  [10, 3],
];

const DAY = 86_400_000;

/** Generates and inserts the data set; the database must be migrated and empty. */
export async function seed(db: Kysely<Database>, sizes: SeedSizes, seedValue = 20_240_601): Promise<SeededData> {
  const r = new Rand(prng(seedValue));
  const ids = new Set<string>();
  const now = Date.now();

  const plans: Record<string, unknown[]> = cols([
    'id',
    'title',
    'description',
    'objectives',
    'expected_outcome',
    'status',
    'priority',
    'estimated_hours',
    'actual_hours',
    'created_by',
    'created_at',
    'updated_at',
    'completed_at',
  ]);
  const phases: Record<string, unknown[]> = cols([
    'id',
    'plan_id',
    'name',
    'description',
    'sequence_order',
    'status',
    'estimated_minutes',
    'created_by',
    'created_at',
    'updated_at',
    'started_at',
    'completed_at',
  ]);
  const tasks: Record<string, unknown[]> = cols([
    'id',
    'phase_id',
    'title',
    'description',
    'max_duration_minutes',
    'max_context_tokens',
    'assigned_agent',
    'task_type',
    'status',
    'priority',
    'retry_count',
    'created_by',
    'created_at',
    'updated_at',
    'started_at',
    'completed_at',
  ]);

  const seededPlans: SeededPlan[] = [];
  const seededTasks: { id: string; status: TaskStatus }[] = [];
  const dist = {
    status: {} as Record<string, number>,
    priority: {} as Record<string, number>,
    task_type: {} as Record<string, number>,
  };
  const bump = (m: Record<string, number>, k: string | number) => (m[k] = (m[k] ?? 0) + 1);

  for (let p = 0; p < sizes.projects; p++) {
    const area = AREAS[p % AREAS.length]!;
    const kind = KINDS[Math.floor(p / AREAS.length) % KINDS.length]!;
    const round = Math.floor(p / (AREAS.length * KINDS.length));
    const title = round === 0 ? `${area} ${kind}` : `${area} ${kind} ${round + 1}`;
    const planStatus = r.weighted<PlanStatus>([
      ['active', 60],
      ['draft', 8],
      ['paused', 10],
      ['completed', 15],
      ['archived', 5],
      ['cancelled', 2],
    ]);
    // How far along the plan is: index of the active phase (phases before it are completed).
    const progress =
      planStatus === 'completed' || planStatus === 'archived'
        ? sizes.phasesPerProject
        : planStatus === 'draft'
          ? 0
          : r.int(0, sizes.phasesPerProject - 1);
    const planCreated = now - r.int(20, 365) * DAY - r.int(0, DAY);
    const planId = r.id(ids);
    const estimated = r.int(4, 40) * 10;
    push(plans, {
      id: planId,
      title,
      description: `${title}: ${r.pick(SENTENCES)} ${r.pick(SENTENCES)}`,
      objectives: JSON.stringify([
        `Ship the ${title.toLowerCase()}`,
        `Cut ${area.toLowerCase()} incidents by half`,
        'Keep p95 latency within budget',
      ]),
      expected_outcome: `${title} in production with its planned scope`,
      status: planStatus,
      priority: r.weighted(PRIORITY_WEIGHTS),
      estimated_hours: estimated,
      actual_hours: Math.round(estimated * (progress / sizes.phasesPerProject) * (0.7 + r.next() * 0.6) * 10) / 10,
      created_by: r.pick(['alice', 'bob', 'planner-agent', null]),
      created_at: iso(planCreated),
      updated_at: iso(planCreated + r.int(1, 15) * DAY),
      completed_at: planStatus === 'completed' ? iso(planCreated + r.int(15, 19) * DAY) : null,
    });
    const seededPlan: SeededPlan = { id: planId, title, phases: [] };
    seededPlans.push(seededPlan);

    for (let s = 0; s < sizes.phasesPerProject; s++) {
      const slot = PHASE_SLOTS[s % PHASE_SLOTS.length]!;
      const name =
        s < PHASE_SLOTS.length ? r.pick(slot.names) : `${r.pick(slot.names)} ${Math.floor(s / PHASE_SLOTS.length) + 1}`;
      let phaseStatus: PhaseStatus = s < progress ? 'completed' : s === progress ? 'active' : 'pending';
      if (phaseStatus === 'active' && planStatus === 'paused' && r.next() < 0.5) phaseStatus = 'blocked';
      if (phaseStatus === 'completed' && r.next() < 0.03) phaseStatus = 'skipped';
      const phaseCreated = planCreated + s * 60_000;
      const phaseStarted = phaseStatus === 'pending' ? null : planCreated + (s * 3 + 1) * DAY;
      const phaseId = r.id(ids);
      push(phases, {
        id: phaseId,
        plan_id: planId,
        name,
        description: `${name} for ${title}`,
        sequence_order: s + 1,
        status: phaseStatus,
        estimated_minutes: r.int(6, 40) * 60,
        created_by: null,
        created_at: iso(phaseCreated),
        updated_at: iso(phaseStarted ?? phaseCreated),
        started_at: phaseStarted === null ? null : iso(phaseStarted),
        completed_at:
          phaseStatus === 'completed' || phaseStatus === 'skipped' ? iso(planCreated + (s * 3 + 3) * DAY) : null,
      });
      seededPlan.phases.push({ id: phaseId, name });

      for (let t = 0; t < sizes.tasksPerPhase; t++) {
        const type = r.weighted(slot.types);
        const status: TaskStatus =
          phaseStatus === 'completed'
            ? r.weighted([
                ['completed', 88],
                ['skipped', 8],
                ['failed', 4],
              ])
            : phaseStatus === 'skipped'
              ? r.weighted([
                  ['skipped', 85],
                  ['completed', 15],
                ])
              : phaseStatus === 'active' || phaseStatus === 'blocked'
                ? r.weighted([
                    ['pending', 40],
                    ['active', 15],
                    ['completed', 35],
                    ['failed', 6],
                    ['skipped', 4],
                  ])
                : r.weighted([
                    ['pending', 95],
                    ['skipped', 3],
                    ['active', 2],
                  ]);
        const priority = r.weighted(PRIORITY_WEIGHTS);
        const created = phaseCreated + r.int(0, 3 * DAY);
        const started = status === 'pending' || status === 'skipped' ? null : created + r.int(1, 48) * 3_600_000;
        const completed =
          status === 'completed' || status === 'failed'
            ? (started ?? created) + r.int(5, 600) * 60_000
            : status === 'skipped'
              ? created + r.int(1, 10) * DAY
              : null;
        const description = Array.from({ length: r.int(1, 4) }, () => r.pick(SENTENCES)).join(' ');
        const taskId = r.id(ids);
        push(tasks, {
          id: taskId,
          phase_id: phaseId,
          title: `${r.pick(VERBS[type])} ${r.pick(OBJECTS)}`,
          description,
          max_duration_minutes: r.pick([5, 10, 10, 10]),
          max_context_tokens: 256_000,
          assigned_agent: r.weighted(AGENTS),
          task_type: type,
          status,
          priority,
          retry_count: status === 'failed' ? r.int(1, 3) : 0,
          created_by: r.pick(['planner-agent', 'alice', 'bob', null]),
          created_at: iso(created),
          updated_at: iso(Math.max(created, started ?? 0, completed ?? 0)),
          started_at: started === null ? null : iso(started),
          completed_at: completed === null ? null : iso(completed),
        });
        seededTasks.push({ id: taskId, status });
        bump(dist.status, status);
        bump(dist.priority, priority);
        bump(dist.task_type, type);
      }
    }
  }

  await sql`
    insert into intervention_plans
      (id, title, description, objectives, expected_outcome, status, priority, estimated_hours, actual_hours, created_by, created_at, updated_at, completed_at)
    select * from unnest(
      ${plans.id}::text[], ${plans.title}::text[], ${plans.description}::text[], ${plans.objectives}::jsonb[], ${plans.expected_outcome}::text[],
      ${plans.status}::text[], ${plans.priority}::int[], ${plans.estimated_hours}::float8[], ${plans.actual_hours}::float8[],
      ${plans.created_by}::text[], ${plans.created_at}::timestamptz[], ${plans.updated_at}::timestamptz[], ${plans.completed_at}::timestamptz[])`.execute(
    db,
  );
  await sql`
    insert into phases
      (id, plan_id, name, description, sequence_order, status, estimated_minutes, created_by, created_at, updated_at, started_at, completed_at)
    select * from unnest(
      ${phases.id}::text[], ${phases.plan_id}::text[], ${phases.name}::text[], ${phases.description}::text[], ${phases.sequence_order}::int[],
      ${phases.status}::text[], ${phases.estimated_minutes}::int[], ${phases.created_by}::text[], ${phases.created_at}::timestamptz[],
      ${phases.updated_at}::timestamptz[], ${phases.started_at}::timestamptz[], ${phases.completed_at}::timestamptz[])`.execute(
    db,
  );
  await sql`
    insert into micro_tasks
      (id, phase_id, title, description, max_duration_minutes, max_context_tokens, assigned_agent, task_type, status, priority,
       retry_count, created_by, created_at, updated_at, started_at, completed_at)
    select * from unnest(
      ${tasks.id}::text[], ${tasks.phase_id}::text[], ${tasks.title}::text[], ${tasks.description}::text[], ${tasks.max_duration_minutes}::int[],
      ${tasks.max_context_tokens}::int[], ${tasks.assigned_agent}::text[], ${tasks.task_type}::text[], ${tasks.status}::text[],
      ${tasks.priority}::int[], ${tasks.retry_count}::int[], ${tasks.created_by}::text[], ${tasks.created_at}::timestamptz[],
      ${tasks.updated_at}::timestamptz[], ${tasks.started_at}::timestamptz[], ${tasks.completed_at}::timestamptz[])`.execute(
    db,
  );
  // VACUUM too, not only ANALYZE: autovacuum would otherwise run on the fresh 10k rows a few seconds
  // into the measurement (setting the visibility map, changing plans and timings mid-run).
  await sql`vacuum analyze`.execute(db);

  return {
    plans: seededPlans,
    tasks: seededTasks,
    counts: { plans: plans.id!.length, phases: phases.id!.length, tasks: tasks.id!.length },
    distribution: dist,
  };
}

function cols(names: string[]): Record<string, unknown[]> {
  return Object.fromEntries(names.map((n) => [n, []]));
}

function push(table: Record<string, unknown[]>, row: Record<string, unknown>): void {
  for (const [key, column] of Object.entries(table)) {
    if (!(key in row)) throw new Error(`seed row lacks ${key}`);
    column.push(row[key]);
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
