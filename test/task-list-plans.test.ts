import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { findOrCreatePhase, findOrCreatePlan } from '../src/db/queries/plans.js';
import { insertTaskIntoNamedPhase, listTasks } from '../src/db/queries/tasks.js';
import { backends } from './helpers/backends.js';

for (const backend of backends) {
  test(`[${backend.name}] the task list keeps one generic plan: its filters and page do not make every call plan again`, async (t) => {
    const store = await backend.open({ poolSize: 1 }); // one connection: its prepared statements are visible
    t.after(() => store.dispose());
    const db = store.db;
    const plan = await findOrCreatePlan(db.kysely, { id: 'a00000000001', title: 'Alpha', createdBy: null });
    await findOrCreatePhase(db.kysely, { id: 'b00000000001', planId: plan.id, name: 'P', createdBy: null });
    for (let i = 0; i < 12; i++)
      await insertTaskIntoNamedPhase(db.kysely, {
        id: `c0000000000${i.toString(16)}`,
        project: 'alpha',
        phaseName: 'p',
        title: `task ${i}`,
        description: 'd',
        task_type: 'coding',
        priority: (i % 10) + 1,
        assigned_agent: 'developer',
        created_by: null,
      });

    for (let run = 0; run < 8; run++) {
      const first = await listTasks(db.kysely, { status: 'pending', minPriority: 3 }, { limit: 4, offset: 0 });
      assert.deepEqual(
        first.rows.map((r) => r.priority),
        [10, 9, 8, 7],
        `run ${run}: most important first`,
      );
      assert.equal(first.total, 8, 'priorities 3-10 (1 and 2, twice each, left out)');
      const next = await listTasks(
        db.kysely,
        { status: 'pending', minPriority: 3, project: 'ALPHA' },
        { limit: 4, offset: 4 },
      );
      assert.deepEqual(
        next.rows.map((r) => r.priority),
        [6, 5, 4, 3],
      );
      assert.equal((await listTasks(db.kysely, { status: 'completed' }, { limit: 4, offset: 0 })).total, 0);
      assert.equal((await listTasks(db.kysely, {}, { limit: 50, offset: 0 })).rows.length, 12);
    }

    const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans::int, custom_plans::int from pg_prepared_statements
       where statement like ${'select "t"."id", "t"."title"%'}`.execute(db.kysely);
    for (const r of rows)
      assert.ok(
        r.generic_plans >= 1 && r.custom_plans <= 5,
        `planned once for all (generic), not each call: ${r.generic_plans} generic, ${r.custom_plans} custom — ${r.statement.slice(-160)}`,
      );
    // Four shapes: three filtered, and the list without a filter, which has no parameter left (its
    // page size is in the text) and is prepared all the same (isPreparableQuery).
    assert.equal(rows.length, 4, `the lists' four shapes are prepared: ${JSON.stringify(rows)}`);
  });
}
