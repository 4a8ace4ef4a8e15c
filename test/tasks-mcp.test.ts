import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { backends, type TestDb } from './helpers/backends.js';
import { connectMcp, withServer, type TestServer } from './helpers/server.js';
import { assertCountingPlan, countingTasks, filterTasks } from './helpers/plans.js';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

for (const backend of backends) {
  describe(`DevStream task and plan tools over MCP (${backend.name})`, () => {
    let server: TestServer;
    let client: Client;
    let database: TestDb;

    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult;
    const text = (r: ToolResult) => r.content.map((c) => c.text).join('\n');
    const create = (args: Record<string, unknown>) =>
      call('devstream_create_task', { description: 'd', task_type: 'coding', priority: 5, ...args });

    withServer(backend, (s) => ({ server, client, database } = s));

    test('lists the task and memory tools with schemas and annotations', async () => {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      assert.deepEqual([...byName.keys()].sort(), [
        'devstream_create_task',
        'devstream_delete_memory',
        'devstream_get_job',
        'devstream_list_plans',
        'devstream_list_tasks',
        'devstream_search_memory',
        'devstream_store_memory',
        'devstream_update_task',
        'find_symbols',
        'get_node',
        'impact',
        'repo',
        'resolve_context',
      ]);
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object');
        assert.equal(t.outputSchema?.type, 'object', `${t.name} declares an outputSchema`);
      }
      assert.equal(byName.get('devstream_list_tasks')?.annotations?.readOnlyHint, true);
      assert.equal(byName.get('devstream_list_plans')?.annotations?.readOnlyHint, true);
      assert.equal(byName.get('devstream_create_task')?.annotations?.readOnlyHint, false);
      assert.equal(
        byName.get('devstream_update_task')?.annotations?.idempotentHint,
        false,
        'each call adds a history row',
      );
      assert.equal(byName.get('devstream_list_tasks')?.annotations?.idempotentHint, true);
      assert.equal(byName.get('devstream_delete_memory')?.annotations?.destructiveHint, true);
      assert.equal(byName.get('devstream_search_memory')?.annotations?.readOnlyHint, false, 'search counts accesses');
      const version = client.getServerVersion();
      assert.equal(version?.name, 'devstream-hub');
      assert.match(version?.version ?? '', /^\d+\.\d+\.\d+/);
    });

    test('create auto-creates project and phase once, and says so only then', async () => {
      const first = await create({ title: 'First', project: 'Alpha Project', phase_name: 'Core Engine' });
      assert.equal(first.isError, undefined);
      assert.deepEqual(first.structuredContent.auto_created, { project: true, phase: true });
      assert.match(text(first), /Auto-Creation Protocol Activated/);
      assert.match(text(first), /Created project: "Alpha Project"/);
      assert.match(first.structuredContent.task.id, /^[0-9a-f]{12}$/);
      assert.equal(first.structuredContent.task.status, 'pending');
      assert.equal(first.structuredContent.task.project, 'Alpha Project');

      const second = await create({ title: 'Second', project: 'Alpha Project', phase_name: 'Core Engine' });
      assert.deepEqual(second.structuredContent.auto_created, { project: false, phase: false });
      assert.doesNotMatch(text(second), /Auto-Creation/);
      assert.equal(second.structuredContent.task.phase_id, first.structuredContent.task.phase_id);

      const newPhase = await create({ title: 'Third', project: 'Alpha Project', phase_name: 'Testing' });
      assert.deepEqual(newPhase.structuredContent.auto_created, { project: false, phase: true });
      assert.match(text(newPhase), /Created phase: "Testing"/);
      assert.doesNotMatch(text(newPhase), /Created project/);
    });

    test('auto-created projects and phases get no invented description or estimate, and none is shown', async () => {
      const created = await create({
        title: 'Unplanned',
        project: 'Nobody Planned This',
        phase_name: 'Whatever Comes',
      });
      assert.deepEqual(created.structuredContent.auto_created, { project: true, phase: true });
      const r = await call('devstream_list_plans', {});
      const plan = r.structuredContent.plans.find((p: any) => p.title === 'Nobody Planned This');
      assert.deepEqual(
        { description: plan.description, estimated_hours: plan.estimated_hours, actual_hours: plan.actual_hours },
        { description: null, estimated_hours: null, actual_hours: null },
      );
      // The plan's block in the text: from its title to its id line.
      const block = /🔄 \*\*Nobody Planned This\*\*[\s\S]*?🆔 ID: `[0-9a-f]{12}`/.exec(text(r))?.[0];
      assert.ok(block, text(r));
      assert.doesNotMatch(block!, /⏱️|hours|Auto-created|📝/, 'no time line, no description line');
      const phase = await database.db.kysely
        .selectFrom('phases')
        .select(['description', 'estimated_minutes'])
        .where('id', '=', created.structuredContent.task.phase_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(phase, { description: null, estimated_minutes: null });
    });

    test('project and phase names match exactly and case-insensitively, never by substring', async () => {
      const base = await create({ title: 'Base', project: 'Matching', phase_name: 'Core Engine' });
      const upper = await create({ title: 'Upper', project: 'MATCHING', phase_name: 'core engine' });
      assert.deepEqual(upper.structuredContent.auto_created, { project: false, phase: false });
      assert.equal(upper.structuredContent.task.phase_id, base.structuredContent.task.phase_id);
      assert.equal(upper.structuredContent.task.project, 'Matching', 'keeps the stored spelling');

      const sub = await create({ title: 'Sub', project: 'Matching', phase_name: 'Core' });
      assert.deepEqual(
        sub.structuredContent.auto_created,
        { project: false, phase: true },
        '"Core" is not "Core Engine"',
      );
      assert.notEqual(sub.structuredContent.task.phase_id, base.structuredContent.task.phase_id);

      const accented = await create({ title: 'Accent', project: 'École Numérique', phase_name: 'Étape' });
      const shouted = await create({ title: 'ACCENT', project: 'ÉCOLE NUMÉRIQUE', phase_name: 'ÉTAPE' });
      assert.deepEqual(
        shouted.structuredContent.auto_created,
        { project: false, phase: false },
        'non-ASCII names fold too',
      );
      assert.equal(shouted.structuredContent.task.phase_id, accented.structuredContent.task.phase_id);

      const subProject = await create({ title: 'SubP', project: 'Match', phase_name: 'Core' });
      assert.equal(subProject.structuredContent.auto_created.project, true, '"Match" is not "Matching"');

      const listed = await call('devstream_list_tasks', { project: 'matching' });
      assert.deepEqual(listed.structuredContent.tasks.map((t: any) => t.title).sort(), ['Base', 'Sub', 'Upper']);
      const none = await call('devstream_list_tasks', { project: 'Matc' });
      assert.equal(none.structuredContent.total, 0);
    });

    test('text blocks preview long descriptions; structuredContent keeps them whole', async () => {
      const long = `${'word '.repeat(80)}TAILMARK`;
      await create({ title: 'Long one', description: long, project: 'Previews', phase_name: 'P' });
      const listed = await call('devstream_list_tasks', { project: 'Previews' });
      assert.equal(listed.structuredContent.tasks[0].description, long);
      assert.match(text(listed), /word…/);
      assert.doesNotMatch(text(listed), /TAILMARK/);
      // One line (issue 20: the task preview kept newlines, the memory preview did not): a
      // description's newlines would break the list's indented layout.
      await create({ title: 'Lines', description: 'first line\n\n- second', project: 'Previews 2', phase_name: 'P' });
      const lines = text(await call('devstream_list_tasks', { project: 'Previews 2' }));
      assert.match(lines, /^ {3}📝 first line - second$/m);
    });

    test('the default project comes from DEFAULT_PROJECT', async () => {
      const r = await create({ title: 'No project', phase_name: 'Inbox' });
      assert.equal(r.structuredContent.task.project, 'default');
    });

    test('update sets started_at once and completed_at on completed/failed/skipped', async () => {
      const created = await create({ title: 'Lifecycle', project: 'Timestamps', phase_name: 'P' });
      const id = created.structuredContent.task.id;
      assert.equal(created.structuredContent.task.started_at, null);

      const active = await call('devstream_update_task', { task_id: id, status: 'active' });
      assert.equal(active.structuredContent.previous_status, 'pending');
      const startedAt = active.structuredContent.task.started_at;
      assert.ok(startedAt);
      assert.equal(active.structuredContent.task.completed_at, null);
      assert.equal(active.structuredContent.memory_id, null);

      await call('devstream_update_task', { task_id: id, status: 'pending' });
      const again = await call('devstream_update_task', { task_id: id, status: 'active' });
      assert.equal(again.structuredContent.task.started_at, startedAt, 'started_at is set the first time only');

      const done = await call('devstream_update_task', { task_id: id, status: 'completed', notes: 'All green' });
      assert.equal(done.structuredContent.previous_status, 'active');
      const completedAt = done.structuredContent.task.completed_at;
      assert.ok(completedAt);
      assert.match(text(done), /active → \*\*COMPLETED\*\*/);
      assert.match(text(done), /All green/);
      assert.ok(
        Date.parse(done.structuredContent.task.updated_at) >= Date.parse(created.structuredContent.task.updated_at),
      );

      const failed = await call('devstream_update_task', { task_id: id, status: 'failed' });
      assert.equal(failed.structuredContent.task.completed_at, completedAt, 'completed_at is set the first time only');

      for (const status of ['failed', 'skipped'] as const) {
        const t = await create({ title: `Closing ${status}`, project: 'Timestamps', phase_name: 'P' });
        const r = await call('devstream_update_task', { task_id: t.structuredContent.task.id, status });
        assert.ok(r.structuredContent.task.completed_at, `${status} sets completed_at`);
        assert.equal(r.structuredContent.task.started_at, null);
      }
      const stillPending = await create({ title: 'Not closing', project: 'Timestamps', phase_name: 'P' });
      const back = await call('devstream_update_task', {
        task_id: stillPending.structuredContent.task.id,
        status: 'pending',
      });
      assert.equal(back.structuredContent.task.completed_at, null);
    });

    test('list_tasks filters by status, project and minimum priority, together', async () => {
      const a = await filterTasks(create, 'Filters');
      await call('devstream_update_task', { task_id: a.structuredContent.task.id, status: 'active' });

      const byProject = await call('devstream_list_tasks', { project: 'Filters One' });
      assert.equal(byProject.structuredContent.total, 2);
      const byPriority = await call('devstream_list_tasks', { project: 'Filters One', priority: 5 });
      assert.deepEqual(
        byPriority.structuredContent.tasks.map((t: any) => t.title),
        ['f-a'],
      );
      const byStatus = await call('devstream_list_tasks', { status: 'active', project: 'Filters One' });
      assert.deepEqual(
        byStatus.structuredContent.tasks.map((t: any) => t.title),
        ['f-a'],
      );
      const all3 = await call('devstream_list_tasks', { status: 'pending', priority: 7, project: 'Filters Two' });
      assert.deepEqual(
        all3.structuredContent.tasks.map((t: any) => t.title),
        ['f-c'],
      );
      assert.match(text(all3), /1 task found/);
      assert.match(text(all3), /Priority ≥ 7/);

      const everything = await call('devstream_list_tasks', {});
      const priorities = everything.structuredContent.tasks.map((t: any) => t.priority);
      assert.deepEqual(
        priorities,
        [...priorities].sort((x: number, y: number) => y - x),
        'most important first',
      );
      assert.equal(everything.structuredContent.total, everything.structuredContent.tasks.length);

      const paged = await call('devstream_list_tasks', { limit: 2, offset: 1 });
      assert.equal(paged.structuredContent.tasks.length, 2);
      assert.equal(paged.structuredContent.total, everything.structuredContent.total);
      assert.equal(paged.structuredContent.tasks[0].id, everything.structuredContent.tasks[1].id);
    });

    test('list_plans counts phases and tasks correctly', async () => {
      const mk = (title: string, phase: string) => create({ title, project: 'Counting', phase_name: phase });
      const { t1, t4 } = await countingTasks(mk);
      await call('devstream_update_task', { task_id: t1.structuredContent.task.id, status: 'completed' });
      await call('devstream_update_task', { task_id: t4.structuredContent.task.id, status: 'completed' });

      const r = await call('devstream_list_plans', {});
      const plan = r.structuredContent.plans.find((p: any) => p.title === 'Counting');
      assertCountingPlan(plan);
      assert.equal(plan.priority, 7);
      assert.equal(plan.estimated_hours, null, 'an auto-created project has no estimate');
      assert.match(text(r), /Progress: 0% phases \(0\/2\) • 40% tasks \(2\/5\)/);

      const active = await call('devstream_list_plans', { status: 'active' });
      assert.ok(active.structuredContent.plans.some((p: any) => p.title === 'Counting'));
      const paused = await call('devstream_list_plans', { status: 'paused' });
      assert.equal(paused.structuredContent.total, 0);
      const cancelled = await call('devstream_list_plans', { status: 'cancelled' });
      assert.equal(cancelled.isError, undefined, "the schema's statuses are the tool's");
    });

    test('errors carry the spec codes and name the field', async () => {
      const cases: Array<[string, Record<string, unknown>, RegExp]> = [
        ['devstream_list_tasks', { status: 'done' }, /❌ Error listing tasks: VALIDATION_ERROR: status:/],
        ['devstream_list_tasks', { priority: 11 }, /VALIDATION_ERROR: priority:/],
        ['devstream_list_tasks', { priority: 0 }, /VALIDATION_ERROR: priority:/],
        ['devstream_list_tasks', { prority: 5 }, /VALIDATION_ERROR: prority: Unknown field/],
        [
          'devstream_create_task',
          { title: '', description: 'd', task_type: 'coding', priority: 5, phase_name: 'P' },
          /❌ Error creating task: VALIDATION_ERROR: title:/,
        ],
        [
          'devstream_create_task',
          { title: 't', description: 'd', task_type: 'painting', priority: 5, phase_name: 'P' },
          /VALIDATION_ERROR: task_type:/,
        ],
        [
          'devstream_create_task',
          { title: 'a\u0000b', description: 'd', task_type: 'coding', priority: 5, phase_name: 'P' },
          /VALIDATION_ERROR: title: must not contain NUL/,
        ],
        [
          'devstream_update_task',
          { task_id: '0123456789ab', status: 'active', notes: 'x\u0000' },
          /VALIDATION_ERROR: notes: must not contain NUL/,
        ],
        [
          'devstream_create_task',
          { title: 't', description: 'd', task_type: 'coding', priority: 5.5, phase_name: 'P' },
          /VALIDATION_ERROR: priority:/,
        ],
        [
          'devstream_create_task',
          { title: 't', task_type: 'coding', priority: 5, phase_name: 'P' },
          /VALIDATION_ERROR: description:/,
        ],
        [
          'devstream_create_task',
          { title: 't', description: 'd', task_type: 'coding', priority: 5 },
          /VALIDATION_ERROR: phase_name:/,
        ],
        [
          'devstream_update_task',
          { task_id: 'abc', status: 'active' },
          /❌ Error updating task: VALIDATION_ERROR: task_id:/,
        ],
        ['devstream_update_task', { task_id: '0123456789ab', status: 'finished' }, /VALIDATION_ERROR: status:/],
        [
          'devstream_update_task',
          { task_id: '0123456789ab', status: 'active' },
          /❌ Error updating task: NOT_FOUND: task_id:/,
        ],
        ['devstream_list_plans', { status: 'open' }, /❌ Error listing plans: VALIDATION_ERROR: status:/],
      ];
      for (const [tool, args, pattern] of cases) {
        const r = await call(tool, args);
        assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)} is an error`);
        assert.match(text(r), pattern);
        assert.equal(r.structuredContent, undefined);
      }
      const before = await call('devstream_list_tasks', {});
      await call('devstream_create_task', {
        title: 't',
        description: 'd',
        task_type: 'coding',
        priority: 99,
        phase_name: 'Nope',
        project: 'Never Made',
      });
      const plans = await call('devstream_list_plans', {});
      assert.ok(
        !plans.structuredContent.plans.some((p: any) => p.title === 'Never Made'),
        'a rejected create writes nothing',
      );
      const afterList = await call('devstream_list_tasks', {});
      assert.equal(afterList.structuredContent.total, before.structuredContent.total);
    });

    test('20 concurrent creates into a new project and phase leave exactly one of each', async () => {
      const clients = await Promise.all(Array.from({ length: 4 }, () => connectMcp(server.url)));
      try {
        const results = (await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            clients[i % clients.length]!.client.callTool({
              name: 'devstream_create_task',
              arguments: {
                title: `race ${i}`,
                description: 'd',
                task_type: 'testing',
                priority: 5,
                project: 'Race Project',
                phase_name: 'Race Phase',
              },
            }),
          ),
        )) as ToolResult[];
        assert.ok(
          results.every((r) => !r.isError),
          results
            .filter((r) => r.isError)
            .map(text)
            .join('\n'),
        );
        assert.equal(results.filter((r) => r.structuredContent.auto_created.project).length, 1);
        assert.equal(results.filter((r) => r.structuredContent.auto_created.phase).length, 1);
        assert.equal(new Set(results.map((r) => r.structuredContent.task.phase_id)).size, 1);
        const plans = await call('devstream_list_plans', {});
        const race = plans.structuredContent.plans.filter((p: any) => p.title.toLowerCase() === 'race project');
        assert.equal(race.length, 1);
        assert.equal(race[0].phases_total, 1);
        assert.equal(race[0].tasks_total, 20);
      } finally {
        await Promise.all(clients.map((c) => c.client.close()));
      }
    });
  });
}
