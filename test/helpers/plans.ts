import assert from 'node:assert/strict';

/**
 * The tasks of the counting fixture, made with `mk(title, phase)`: c1, c2, c3 in phase One, c4, c5 in
 * phase Two; the ones the tests change the status of (c1, c4, c5).
 */
export async function countingTasks<T>(
  mk: (title: string, phase: string) => Promise<T>,
): Promise<{ t1: T; t4: T; t5: T }> {
  const t1 = await mk('c1', 'One');
  await mk('c2', 'One');
  await mk('c3', 'One');
  const t4 = await mk('c4', 'Two');
  const t5 = await mk('c5', 'Two');
  return { t1, t4, t5 };
}

/** The plan of the counting fixture once c1 and c4 are completed (c5 anything but completed): its counts. */
export function assertCountingPlan(plan: any): void {
  assert.ok(plan);
  assert.equal(plan.phases_total, 2, 'phases, not phase×task rows');
  assert.equal(plan.tasks_total, 5);
  assert.equal(plan.tasks_completed, 2, 'c1 and c4 are completed, nothing else');
  assert.equal(plan.phases_completed, 0);
  assert.deepEqual(
    plan.phases.map((p: any) => [p.name, p.sequence_order, p.tasks_total, p.tasks_completed]),
    [
      ['One', 1, 3, 1],
      ['Two', 2, 2, 1],
    ],
  );
  assert.equal(plan.status, 'active');
}

/**
 * The tasks of the filters fixture, made with `create(fields)` in phase "F": f-a (priority 9) and f-b (3)
 * in project `${prefix} One`, f-c (7) in `${prefix} Two`; f-a, the one the tests make active.
 */
export async function filterTasks<T>(
  create: (fields: { title: string; priority: number; project: string; phase_name: string }) => Promise<T>,
  prefix: string,
): Promise<T> {
  const mk = (title: string, priority: number, project: string) =>
    create({ title, priority, project, phase_name: 'F' });
  const a = await mk('f-a', 9, `${prefix} One`);
  await mk('f-b', 3, `${prefix} One`);
  await mk('f-c', 7, `${prefix} Two`);
  return a;
}
