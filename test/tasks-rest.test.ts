import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { tools as toolOperations } from '../src/operations/index.js';
import { assertError, assertNoInternals, assertValidation, type Answer } from './helpers/assertions.js';
import { backends, type TestDb } from './helpers/backends.js';
import { wrenText } from './helpers/graph-fixture.js';
import { rawRequest } from './helpers/raw-http.js';
import { assertCountingPlan, countingTasks, filterTasks } from './helpers/plans.js';
import { rest, startServer, withServer, type TestServer } from './helpers/server.js';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };
type Reply = Answer;

/** The structure of a JSON value: the same keys and value types all the way down. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, shapeOf((value as Record<string, unknown>)[k])]),
    );
  }
  return typeof value;
}

/** A copy with the named keys (at any depth) replaced by a marker: for fields that differ per call. */
function mask(value: unknown, keys: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => mask(v, keys));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        keys.includes(k) ? '<varies>' : mask(v, keys),
      ]),
    );
  }
  return value;
}

for (const backend of backends) {
  describe(`DevStream REST mirror under /api/v1 (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let client: Client;

    const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      rest(server.url, method, path, body, headers);
    const mcp = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult;
    const mcpText = (r: ToolResult) => r.content.map((c) => c.text).join('\n');
    const createBody = (fields: Record<string, unknown>) => ({
      description: 'd',
      task_type: 'coding',
      priority: 5,
      ...fields,
    });
    const create = async (fields: Record<string, unknown>) => {
      const r = await api('POST', '/api/v1/tasks', createBody(fields));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    };
    const setStatus = async (id: string, status: string, notes?: string) => {
      const r = await api('PATCH', `/api/v1/tasks/${id}`, notes === undefined ? { status } : { status, notes });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };
    const planByTitle = async (title: string) => {
      const r = await api('GET', '/api/v1/plans?limit=500');
      assert.equal(r.status, 200);
      return r.body.plans.find((p: any) => p.title === title);
    };

    withServer(backend, (s) => ({ database, server, client } = s));

    test('POST /api/v1/tasks → 201 {success, task, auto_created}; auto-creation only the first time', async () => {
      const first = await api(
        'POST',
        '/api/v1/tasks',
        createBody({ title: 'First', project: 'Rest Alpha', phase_name: 'Core Engine' }),
      );
      assert.equal(first.status, 201);
      assert.match(first.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(Object.keys(first.body).sort(), ['auto_created', 'success', 'task']);
      assert.equal(first.body.success, true);
      assert.deepEqual(first.body.auto_created, { project: true, phase: true });
      const task = first.body.task;
      assert.match(task.id, /^[0-9a-f]{12}$/);
      assert.equal(task.title, 'First');
      assert.equal(task.description, 'd');
      assert.equal(task.task_type, 'coding');
      assert.equal(task.priority, 5);
      assert.equal(task.status, 'pending');
      assert.equal(task.project, 'Rest Alpha');
      assert.equal(task.phase_name, 'Core Engine');
      assert.equal(task.assigned_agent, 'developer');
      assert.equal(task.started_at, null);
      assert.equal(task.completed_at, null);
      assert.ok(!Number.isNaN(Date.parse(task.created_at)));

      const second = await create({
        title: 'Second',
        project: 'Rest Alpha',
        phase_name: 'Core Engine',
        assigned_agent: 'tester',
      });
      assert.deepEqual(second.auto_created, { project: false, phase: false });
      assert.equal(second.task.phase_id, task.phase_id);
      assert.equal(second.task.assigned_agent, 'tester');

      const newPhase = await create({ title: 'Third', project: 'Rest Alpha', phase_name: 'Testing' });
      assert.deepEqual(newPhase.auto_created, { project: false, phase: true });

      const noProject = await create({ title: 'Defaulted', phase_name: 'Inbox' });
      assert.equal(noProject.task.project, 'default', 'DEFAULT_PROJECT when no project is given');
    });

    test('project and phase names match exactly and case-insensitively, never by substring', async () => {
      const base = await create({ title: 'Base', project: 'Rest Matching', phase_name: 'Core Engine' });
      const upper = await create({ title: 'Upper', project: 'REST MATCHING', phase_name: 'core engine' });
      assert.deepEqual(upper.auto_created, { project: false, phase: false });
      assert.equal(upper.task.phase_id, base.task.phase_id);
      assert.equal(upper.task.project, 'Rest Matching', 'keeps the stored spelling');

      const sub = await create({ title: 'Sub', project: 'Rest Matching', phase_name: 'Core' });
      assert.deepEqual(sub.auto_created, { project: false, phase: true }, '"Core" is not "Core Engine"');
      assert.notEqual(sub.task.phase_id, base.task.phase_id);
      const longer = await create({ title: 'Longer', project: 'Rest Matching', phase_name: 'Core Engine 2' });
      assert.deepEqual(longer.auto_created, { project: false, phase: true }, '"Core Engine 2" is not "Core Engine"');

      const subProject = await create({ title: 'SubP', project: 'Rest Match', phase_name: 'Core' });
      assert.deepEqual(subProject.auto_created, { project: true, phase: true }, '"Rest Match" is not "Rest Matching"');

      const listed = await api('GET', `/api/v1/tasks?project=${encodeURIComponent('rest matching')}`);
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body.tasks.map((t: any) => t.title).sort(), ['Base', 'Longer', 'Sub', 'Upper']);
      const none = await api('GET', '/api/v1/tasks?project=Rest%20Matc');
      assert.deepEqual(none.body, { tasks: [], total: 0 }, 'a project filter is not a substring match');
    });

    test('GET /api/v1/tasks filters by status, project and minimum priority from the query string; limit/offset page', async () => {
      const a = await filterTasks(create, 'Rest Filters');
      await create({ title: 'f-d', priority: 6, project: 'Rest Filters Two', phase_name: 'F' });
      await setStatus(a.task.id, 'active');

      const titles = (r: Reply) => r.body.tasks.map((t: any) => t.title);
      const byProject = await api('GET', '/api/v1/tasks?project=Rest%20Filters%20One');
      assert.equal(byProject.status, 200);
      assert.deepEqual(Object.keys(byProject.body).sort(), ['tasks', 'total']);
      assert.deepEqual(titles(byProject), ['f-a', 'f-b'], 'most important first');
      assert.equal(byProject.body.total, 2);

      const byPriority = await api('GET', '/api/v1/tasks?project=Rest%20Filters%20One&priority=5');
      assert.deepEqual(titles(byPriority), ['f-a'], 'priority=5 is coerced to a number and is a minimum');
      const byStatus = await api('GET', '/api/v1/tasks?status=active&project=Rest%20Filters%20One');
      assert.deepEqual(titles(byStatus), ['f-a']);
      const all3 = await api('GET', '/api/v1/tasks?status=pending&priority=7&project=Rest%20Filters%20Two');
      assert.deepEqual(titles(all3), ['f-c']);
      assert.equal(all3.body.total, 1);
      const exactBound = await api('GET', '/api/v1/tasks?priority=7&project=rest%20filters%20two');
      assert.deepEqual(titles(exactBound), ['f-c'], 'priority=7 includes 7 and excludes 6');

      const same = await mcp('devstream_list_tasks', { status: 'pending', priority: 7, project: 'Rest Filters Two' });
      assert.deepEqual(all3.body, same.structuredContent, 'the same answer as the MCP tool');

      const everything = await api('GET', '/api/v1/tasks');
      assert.equal(everything.body.total, everything.body.tasks.length);
      const priorities = everything.body.tasks.map((t: any) => t.priority);
      assert.deepEqual(
        priorities,
        [...priorities].sort((x: number, y: number) => y - x),
        'most important first',
      );

      const paged = await api('GET', '/api/v1/tasks?limit=2&offset=1');
      assert.equal(paged.status, 200);
      assert.equal(paged.body.tasks.length, 2);
      assert.equal(paged.body.total, everything.body.total, 'total counts every match, not the page');
      assert.deepEqual(
        paged.body.tasks.map((t: any) => t.id),
        everything.body.tasks.slice(1, 3).map((t: any) => t.id),
      );
      const pastEnd = await api('GET', `/api/v1/tasks?offset=${everything.body.total}`);
      assert.deepEqual(pastEnd.body, { tasks: [], total: everything.body.total });
      // The last page, not full (its total is not counted again, but must be the same).
      const last = await api('GET', `/api/v1/tasks?limit=3&offset=${everything.body.total - 1}`);
      assert.equal(last.body.tasks.length, 1);
      assert.equal(last.body.total, everything.body.total);
      const fullToTheEnd = await api('GET', `/api/v1/tasks?limit=2&offset=${everything.body.total - 2}`);
      assert.equal(fullToTheEnd.body.tasks.length, 2);
      assert.equal(fullToTheEnd.body.total, everything.body.total);
      const noneSkipped = await api('GET', '/api/v1/tasks?status=skipped&project=rest%20filters%20two');
      assert.deepEqual(noneSkipped.body, { tasks: [], total: 0 });
    });

    test('PATCH /api/v1/tasks/{id} → 200 {success, task, previous_status, memory_id}; started_at/completed_at first time only', async () => {
      const created = await create({ title: 'Lifecycle', project: 'Rest Timestamps', phase_name: 'P' });
      const id = created.task.id;

      const active = await api('PATCH', `/api/v1/tasks/${id}`, { status: 'active' });
      assert.equal(active.status, 200);
      assert.deepEqual(Object.keys(active.body).sort(), ['memory_id', 'previous_status', 'success', 'task']);
      assert.equal(active.body.success, true);
      assert.equal(active.body.previous_status, 'pending');
      assert.equal(active.body.memory_id, null);
      assert.equal(active.body.task.id, id);
      assert.equal(active.body.task.status, 'active');
      const startedAt = active.body.task.started_at;
      assert.ok(startedAt && !Number.isNaN(Date.parse(startedAt)));
      assert.equal(active.body.task.completed_at, null);

      await setStatus(id, 'pending');
      const again = await setStatus(id, 'active');
      assert.equal(again.task.started_at, startedAt, 'started_at is set the first time only');

      const done = await setStatus(id.toUpperCase(), 'completed', 'All green');
      assert.equal(done.task.id, id, 'ids are case-insensitive');
      assert.equal(done.previous_status, 'active');
      assert.match(done.memory_id, /^[0-9a-f]{12}$/, 'notes are stored as a memory');
      const note = await api('GET', `/api/v1/memories/${done.memory_id}`);
      assert.equal(note.status, 200);
      assert.equal(note.body.memory.content, 'Task status update: completed. Notes: All green');
      assert.equal(note.body.memory.content_type, 'decision');
      assert.equal(note.body.memory.task_id, id);
      assert.deepEqual(note.body.memory.keywords, ['task', 'update', 'completed']);
      const completedAt = done.task.completed_at;
      assert.ok(completedAt);
      assert.ok(Date.parse(completedAt) >= Date.parse(startedAt));

      const failed = await setStatus(id, 'failed');
      assert.equal(failed.previous_status, 'completed');
      assert.equal(failed.task.completed_at, completedAt, 'completed_at is set the first time only');

      for (const status of ['failed', 'skipped', 'completed'] as const) {
        const t = await create({ title: `Closing ${status}`, project: 'Rest Timestamps', phase_name: 'P' });
        const r = await setStatus(t.task.id, status);
        assert.ok(r.task.completed_at, `${status} sets completed_at`);
        assert.equal(r.task.started_at, null, `${status} straight from pending does not set started_at`);
      }
      const stays = await create({ title: 'Not closing', project: 'Rest Timestamps', phase_name: 'P' });
      const back = await setStatus(stays.task.id, 'pending');
      assert.equal(back.previous_status, 'pending');
      assert.equal(back.task.completed_at, null);
      assert.equal(back.task.started_at, null);

      const listed = await api('GET', '/api/v1/tasks?project=Rest%20Timestamps&status=failed');
      assert.ok(
        listed.body.tasks.some((t: any) => t.id === id),
        'the new status is what GET lists',
      );
    });

    test('GET /api/v1/plans → {plans, total} with correct phase and task counts; ?status= filters', async () => {
      const mk = (title: string, phase: string) => create({ title, project: 'Rest Counting', phase_name: phase });
      const { t1, t4, t5 } = await countingTasks(mk);
      await setStatus(t1.task.id, 'completed');
      await setStatus(t4.task.id, 'completed');
      await setStatus(t5.task.id, 'failed');

      const r = await api('GET', '/api/v1/plans');
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body).sort(), ['plans', 'total']);
      assert.equal(r.body.total, r.body.plans.length);
      const plan = r.body.plans.find((p: any) => p.title === 'Rest Counting');
      assertCountingPlan(plan); // c5 failed: failed is not completed

      const active = await api('GET', '/api/v1/plans?status=active');
      assert.equal(active.status, 200);
      assert.ok(active.body.plans.some((p: any) => p.title === 'Rest Counting'));
      assert.ok(active.body.plans.every((p: any) => p.status === 'active'));
      assert.equal(active.body.total, active.body.plans.length);
      const paused = await api('GET', '/api/v1/plans?status=paused');
      assert.deepEqual(paused.body, { plans: [], total: 0 });

      const page = await api('GET', '/api/v1/plans?limit=1&offset=1');
      assert.equal(page.body.plans.length, 1);
      assert.equal(page.body.total, r.body.total);
      assert.equal(page.body.plans[0].id, r.body.plans[1].id);

      const viaMcp = await mcp('devstream_list_plans', {});
      assert.deepEqual(r.body, viaMcp.structuredContent, 'the same answer as the MCP tool');

      // A phase whose tasks are all completed counts as completed (no tool sets a phase's status).
      const one = (await api('GET', '/api/v1/tasks?project=Rest%20Counting&limit=50')).body.tasks.filter(
        (t: any) => t.phase_name === 'One',
      );
      for (const t of one) await setStatus(t.id, 'completed');
      const after = (await api('GET', '/api/v1/plans')).body.plans.find((p: any) => p.title === 'Rest Counting');
      assert.equal(after.phases_completed, 1);
      assert.deepEqual(
        after.phases.map((p: any) => [p.name, p.status]),
        [
          ['One', 'completed'],
          ['Two', 'active'],
        ],
        'Two has a failed task: not completed',
      );
      const failed = (await api('GET', '/api/v1/tasks?project=Rest%20Counting&status=failed')).body.tasks[0];
      await setStatus(failed.id, 'skipped');
      const skipped = (await api('GET', '/api/v1/plans')).body.plans.find((p: any) => p.title === 'Rest Counting');
      assert.equal(skipped.phases_completed, 2, 'a skipped task does not hold its phase open');
      await mk('c6', 'One');
      const reopened = (await api('GET', '/api/v1/plans')).body.plans.find((p: any) => p.title === 'Rest Counting');
      assert.equal(reopened.phases_completed, 1, 'a new task reopens its phase');
      assert.equal(reopened.phases[0].status, 'active');
    });

    test('GET /api/v1/plans/{id} → {plan} with its phases and their tasks', async () => {
      const a = await create({ title: 'd1', project: 'Rest Detail', phase_name: 'Design' });
      const b = await create({ title: 'd2', project: 'Rest Detail', phase_name: 'Design', priority: 9 });
      const c = await create({ title: 'b1', project: 'Rest Detail', phase_name: 'Build' });
      await create({ title: 'elsewhere', project: 'Rest Detail Other', phase_name: 'Design' });
      await setStatus(b.task.id, 'completed');
      const summary = await planByTitle('Rest Detail');
      assert.ok(summary);

      const r = await api('GET', `/api/v1/plans/${summary.id}`);
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body), ['plan']);
      const plan = r.body.plan;
      assert.equal(plan.id, summary.id);
      assert.equal(plan.title, 'Rest Detail');
      assert.equal(plan.tasks_total, 3);
      assert.equal(plan.tasks_completed, 1);
      assert.deepEqual(
        plan.phases.map((p: any) => p.name),
        ['Design', 'Build'],
      );
      const [design, build] = plan.phases;
      assert.deepEqual(design.tasks.map((t: any) => t.id).sort(), [a.task.id, b.task.id].sort());
      assert.deepEqual(
        build.tasks.map((t: any) => t.id),
        [c.task.id],
      );
      assert.equal(design.tasks_total, 2);
      assert.equal(design.tasks_completed, 1);
      assert.equal(design.tasks.find((t: any) => t.id === b.task.id).status, 'completed');
      for (const phase of plan.phases) {
        for (const t of phase.tasks) {
          assert.equal(t.phase_id, phase.id);
          assert.equal(t.project, 'Rest Detail');
        }
      }
      const { phases: _detailPhases, ...detailRest } = plan;
      const { phases: _summaryPhases, ...summaryRest } = summary;
      assert.deepEqual(detailRest, summaryRest, 'the plan fields agree with the list');

      const upper = await api('GET', `/api/v1/plans/${summary.id.toUpperCase()}`);
      assert.equal(upper.status, 200);
      assert.equal(upper.body.plan.id, summary.id);
    });

    test('an unknown task or plan id → 404 {error: {code: NOT_FOUND, message, details}}', async () => {
      const plan = await api('GET', '/api/v1/plans/0123456789ab');
      assertError(plan, 404, 'NOT_FOUND', 'unknown plan');
      assert.match(plan.body.error.message, /0123456789ab/);
      assert.deepEqual(plan.body.error.details, { id: '0123456789ab' });

      const task = await api('PATCH', '/api/v1/tasks/0123456789ab', { status: 'active' });
      assertError(task, 404, 'NOT_FOUND', 'unknown task');
      assert.match(task.body.error.message, /0123456789ab/);
      assert.deepEqual(task.body.error.details, { task_id: '0123456789ab' });
    });

    test('POST /api/v1/tools/{name} mirrors every MCP tool 1:1', async () => {
      const { tools } = await client.listTools();
      // Setup so that a REST call and an MCP call with the same arguments can give the same answer.
      const seeded = await create({
        title: 'Mirror seed',
        project: 'Rest Mirror',
        phase_name: 'Mirror Phase',
        priority: 4,
      });
      await setStatus(seeded.task.id, 'active');

      const memoryToDelete = async () => {
        const stored = await api('POST', '/api/v1/memories', {
          content: `to delete ${Math.random()}`,
          content_type: 'output',
        });
        return { memory_id: stored.body.memory_id };
      };
      // A code graph for the DevLens tools to answer from.
      const graph = await fetch(`${server.url}/api/v1/graphs?repo=wren-mirror`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: wrenText,
      });
      assert.equal(graph.status, 201);
      // A finished job (the runner leaves it alone) for devstream_get_job.
      const jobId = 'ab12cd34ef56';
      await database.db.kysely
        .insertInto('jobs')
        .values({
          id: jobId,
          kind: 'analyze',
          status: 'failed',
          params: JSON.stringify({ path: '/nowhere', repo: 'x' }),
          error: 'mirror',
          finished_at: new Date(),
        })
        .execute();
      type Args = Record<string, unknown>;
      const cases: Record<
        string,
        { args: Args | (() => Promise<Args>); varies: string[]; invalid: Args; field: string }
      > = {
        devstream_store_memory: {
          // Idempotent: the second store of the same content returns the first memory, flagged.
          args: {
            content: 'Mirrored memory about retries',
            content_type: 'learning',
            keywords: ['Retry'],
            project: 'Rest Mirror',
          },
          varies: ['duplicate'],
          invalid: { content: 'x', content_type: 'note' },
          field: 'content_type',
        },
        devstream_search_memory: {
          args: { query: 'mirrored retries', project: 'rest mirror', limit: 5 },
          varies: [],
          invalid: { query: 'q', limit: 51 },
          field: 'limit',
        },
        devstream_delete_memory: {
          args: memoryToDelete,
          varies: ['memory_id'],
          invalid: { memory_id: 'nope' },
          field: 'memory_id',
        },
        devstream_list_tasks: {
          args: { project: 'Rest Mirror', priority: 3, limit: 10 },
          varies: [],
          invalid: { priority: 11 },
          field: 'priority',
        },
        devstream_list_plans: {
          args: { status: 'active', limit: 50 },
          varies: [],
          invalid: { status: 'open' },
          field: 'status',
        },
        devstream_create_task: {
          args: {
            title: 'Mirrored',
            description: 'same args',
            task_type: 'review',
            priority: 4,
            project: 'rest mirror',
            phase_name: 'MIRROR PHASE',
          },
          varies: ['id', 'created_at', 'updated_at'],
          invalid: { title: '', description: 'd', task_type: 'review', priority: 4, phase_name: 'P' },
          field: 'title',
        },
        find_symbols: {
          args: { query: 'combine headers', limit: 3 },
          varies: [],
          invalid: { query: 'x', limit: 26 },
          field: 'limit',
        },
        get_node: {
          args: { node: 'source/utils/combine.ts::mergeDeep', include: ['callers', 'code'] },
          varies: [],
          invalid: { node: '' },
          field: 'node',
        },
        repo: { args: { action: 'health' }, varies: [], invalid: { action: 'explode' }, field: 'action' },
        devstream_get_job: { args: { jobId }, varies: [], invalid: { jobId: '../etc' }, field: 'jobId' },
        resolve_context: {
          args: { task: 'combine headers', intent: 'pinpoint' },
          varies: [],
          invalid: { task: 'x', tokenBudget: 10 },
          field: 'tokenBudget',
        },
        impact: {
          args: { target: 'mergeDeep', direction: 'both' },
          varies: [],
          invalid: { target: 'x', radius: 9 },
          field: 'radius',
        },
        devstream_update_task: {
          // Idempotent: active → active twice gives the same previous_status and started_at.
          args: { task_id: seeded.task.id, status: 'active', notes: 'mirror' },
          varies: ['updated_at'],
          invalid: { task_id: seeded.task.id, status: 'finished' },
          field: 'status',
        },
      };
      assert.deepEqual(
        tools.map((t) => t.name).sort(),
        Object.keys(cases).sort(),
        'every MCP tool has a mirror case here (add one for a new tool)',
      );

      for (const tool of tools) {
        const c = cases[tool.name]!;
        const op = toolOperations.find((o) => o.name === tool.name);
        assert.ok(op, `${tool.name} is an operation`);

        const argsOf = async () => (typeof c.args === 'function' ? c.args() : c.args);
        const viaRest = await api('POST', `/api/v1/tools/${tool.name}`, await argsOf());
        const viaMcp = await mcp(tool.name, await argsOf());
        assert.equal(viaRest.status, 200, `${tool.name} over REST: ${JSON.stringify(viaRest.body)}`);
        assert.equal(viaMcp.isError, undefined, `${tool.name} over MCP: ${mcpText(viaMcp)}`);
        assert.deepEqual(
          shapeOf(viaRest.body),
          shapeOf(viaMcp.structuredContent),
          `${tool.name}: REST body has the structuredContent shape`,
        );
        assert.doesNotThrow(() => op.output.parse(viaRest.body), `${tool.name}: REST body satisfies the output schema`);
        if (tool.annotations?.readOnlyHint) {
          assert.deepEqual(viaRest.body, viaMcp.structuredContent, `${tool.name} (read-only): equal values`);
        } else {
          assert.deepEqual(
            mask(viaRest.body, c.varies),
            mask(viaMcp.structuredContent, c.varies),
            `${tool.name}: equal values but ${c.varies}`,
          );
        }

        // Failures are the same error too: REST's code and message are in MCP's isError text.
        const badRest = await api('POST', `/api/v1/tools/${tool.name}`, c.invalid);
        assertValidation(badRest, c.field, `${tool.name} invalid over REST`);
        const badMcp = await mcp(tool.name, c.invalid);
        assert.equal(badMcp.isError, true);
        assert.equal(mcpText(badMcp), `❌ Error ${op.action}: VALIDATION_ERROR: ${badRest.body.error.message}`);
      }

      // The create mirror answered 200 (a tool call), the resource route 201; both created a task.
      const mirrored = await api('GET', '/api/v1/tasks?project=Rest%20Mirror');
      assert.deepEqual(mirrored.body.tasks.map((t: any) => t.title).sort(), ['Mirror seed', 'Mirrored', 'Mirrored']);

      const notFoundRest = await api('POST', '/api/v1/tools/devstream_update_task', {
        task_id: 'abcdefabcdef',
        status: 'active',
      });
      assertError(notFoundRest, 404, 'NOT_FOUND', 'update of an unknown task via the tool route');
      const notFoundMcp = await mcp('devstream_update_task', { task_id: 'abcdefabcdef', status: 'active' });
      assert.equal(mcpText(notFoundMcp), `❌ Error updating task: NOT_FOUND: ${notFoundRest.body.error.message}`);
    });

    test('an unknown tool → 404 NOT_FOUND (also one that is an operation but not a tool)', async () => {
      for (const name of ['devstream_nope', 'devstream_get_plan', 'list_tasks']) {
        const r = await api('POST', `/api/v1/tools/${name}`, {});
        assertError(r, 404, 'NOT_FOUND', `tool ${name}`);
        assert.ok(r.body.error.message.includes(name), r.body.error.message);
      }
    });

    test('malformed and non-object JSON bodies → 400 VALIDATION_ERROR', async () => {
      const bodies: Array<[string, string]> = [
        ['malformed JSON', '{"title": '],
        ['trailing garbage', '{"title": "x"} x'],
        ['a JSON array', '[{"title": "x"}]'],
        ['a JSON string', '"a task"'],
        ['a JSON number', '42'],
        ['an empty JSON body', ''],
      ];
      for (const path of ['/api/v1/tasks', '/api/v1/tools/devstream_create_task']) {
        for (const [label, body] of bodies) {
          const r = await api('POST', path, body, { 'content-type': 'application/json' });
          assertError(r, 400, 'VALIDATION_ERROR', `${label} to ${path}`);
          assert.ok(Array.isArray(r.body.error.details?.issues), `${label}: details.issues`);
          assert.equal(r.body.error.details.issues[0].field, '(body)', label);
        }
      }
      const patch = await api('PATCH', '/api/v1/tasks/0123456789ab', '["active"]', {
        'content-type': 'application/json',
      });
      assertError(patch, 400, 'VALIDATION_ERROR', 'an array to PATCH');
    });

    test('a body that is not JSON → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const json = JSON.stringify(createBody({ title: 'Not JSON typed', project: 'Rest Media', phase_name: 'P' }));
      const types = [
        'text/plain',
        'text/plain; charset=utf-8',
        'application/x-www-form-urlencoded',
        'application/xml',
        'multipart/form-data; boundary=x',
      ];
      for (const type of types) {
        for (const path of ['/api/v1/tasks', '/api/v1/tools/devstream_create_task']) {
          const r = await api('POST', path, json, { 'content-type': type });
          assertError(r, 415, 'UNSUPPORTED_MEDIA_TYPE', `${type} to ${path}`);
        }
      }
      assert.equal(await planByTitle('Rest Media'), undefined, 'nothing was created');
    });

    test('every validation error → 400 VALIDATION_ERROR naming the field, with details.issues; a rejected create writes nothing', async () => {
      const beforeTasks = await api('GET', '/api/v1/tasks?limit=500');
      const valid = createBody({ title: 't', phase_name: 'Rejected Phase', project: 'Rest Rejected' });
      const without = (field: string) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== field));
      const cases: Array<[string, string, string, unknown, string]> = [];
      for (const field of ['title', 'description', 'task_type', 'priority', 'phase_name']) {
        cases.push([`create without ${field}`, 'POST', '/api/v1/tasks', without(field), field]);
      }
      cases.push(
        ['create with an empty body', 'POST', '/api/v1/tasks', {}, 'title'],
        ['create with task_type painting', 'POST', '/api/v1/tasks', { ...valid, task_type: 'painting' }, 'task_type'],
        ['create with priority 0', 'POST', '/api/v1/tasks', { ...valid, priority: 0 }, 'priority'],
        ['create with priority 11', 'POST', '/api/v1/tasks', { ...valid, priority: 11 }, 'priority'],
        ['create with priority 5.5', 'POST', '/api/v1/tasks', { ...valid, priority: 5.5 }, 'priority'],
        ['create with priority "5"', 'POST', '/api/v1/tasks', { ...valid, priority: '5' }, 'priority'],
        ['create with priority null', 'POST', '/api/v1/tasks', { ...valid, priority: null }, 'priority'],
        ['create with an empty title', 'POST', '/api/v1/tasks', { ...valid, title: '' }, 'title'],
        ['create with a blank title', 'POST', '/api/v1/tasks', { ...valid, title: '   ' }, 'title'],
        ['create with a 201-character title', 'POST', '/api/v1/tasks', { ...valid, title: 'x'.repeat(201) }, 'title'],
        ['create with an empty phase_name', 'POST', '/api/v1/tasks', { ...valid, phase_name: ' ' }, 'phase_name'],
        ['create with an empty project', 'POST', '/api/v1/tasks', { ...valid, project: '' }, 'project'],
        [
          'create with a 51-character assigned_agent',
          'POST',
          '/api/v1/tasks',
          { ...valid, assigned_agent: 'a'.repeat(51) },
          'assigned_agent',
        ],
        ['create with an unknown field', 'POST', '/api/v1/tasks', { ...valid, prority: 5 }, 'prority'],
        ['create with status (not an input)', 'POST', '/api/v1/tasks', { ...valid, status: 'active' }, 'status'],
        ['update with a bad id', 'PATCH', '/api/v1/tasks/xyz', { status: 'active' }, 'task_id'],
        ['update with an 11-character id', 'PATCH', '/api/v1/tasks/0123456789a', { status: 'active' }, 'task_id'],
        ['update with a 13-character id', 'PATCH', '/api/v1/tasks/0123456789abc', { status: 'active' }, 'task_id'],
        ['update with a non-hex id', 'PATCH', '/api/v1/tasks/0123456789ag', { status: 'active' }, 'task_id'],
        ['update without status', 'PATCH', '/api/v1/tasks/0123456789ab', {}, 'status'],
        ['update with status finished', 'PATCH', '/api/v1/tasks/0123456789ab', { status: 'finished' }, 'status'],
        ['update with numeric notes', 'PATCH', '/api/v1/tasks/0123456789ab', { status: 'active', notes: 5 }, 'notes'],
        [
          'update with an unknown field',
          'PATCH',
          '/api/v1/tasks/0123456789ab',
          { status: 'active', note: 'x' },
          'note',
        ],
        ['list with priority=abc', 'GET', '/api/v1/tasks?priority=abc', undefined, 'priority'],
        ['list with priority=0', 'GET', '/api/v1/tasks?priority=0', undefined, 'priority'],
        ['list with priority=11', 'GET', '/api/v1/tasks?priority=11', undefined, 'priority'],
        ['list with priority=7.5', 'GET', '/api/v1/tasks?priority=7.5', undefined, 'priority'],
        ['list with priority= (empty)', 'GET', '/api/v1/tasks?priority=', undefined, 'priority'],
        ['list with status=zz', 'GET', '/api/v1/tasks?status=zz', undefined, 'status'],
        ['list with status given twice', 'GET', '/api/v1/tasks?status=active&status=pending', undefined, 'status'],
        ['list with project= (empty)', 'GET', '/api/v1/tasks?project=', undefined, 'project'],
        ['list with limit=0', 'GET', '/api/v1/tasks?limit=0', undefined, 'limit'],
        ['list with limit=501', 'GET', '/api/v1/tasks?limit=501', undefined, 'limit'],
        ['list with limit=ten', 'GET', '/api/v1/tasks?limit=ten', undefined, 'limit'],
        ['list with offset=-1', 'GET', '/api/v1/tasks?offset=-1', undefined, 'offset'],
        ['list with an unknown parameter', 'GET', '/api/v1/tasks?prio=5', undefined, 'prio'],
        ['plans with status=zz', 'GET', '/api/v1/plans?status=zz', undefined, 'status'],
        ['plans with status=pending (a task status)', 'GET', '/api/v1/plans?status=pending', undefined, 'status'],
        ['plans with limit=abc', 'GET', '/api/v1/plans?limit=abc', undefined, 'limit'],
        ['plans with an unknown parameter', 'GET', '/api/v1/plans?project=x', undefined, 'project'],
        ['plan with a bad id', 'GET', '/api/v1/plans/not-an-id', undefined, 'id'],
      );
      for (const [label, method, path, body, field] of cases) {
        const r = await api(method, path, body);
        assertValidation(r, field, label);
      }

      const everyMissing = await api('POST', '/api/v1/tasks', {});
      const fields = everyMissing.body.error.details.issues.map((i: { field: string }) => i.field).sort();
      assert.deepEqual(
        fields,
        ['description', 'phase_name', 'priority', 'task_type', 'title'],
        'one issue per missing field',
      );
      for (const f of fields) assert.ok(everyMissing.body.error.message.includes(f), `the message names ${f}`);

      const afterTasks = await api('GET', '/api/v1/tasks?limit=500');
      assert.equal(afterTasks.body.total, beforeTasks.body.total, 'no task was written');
      assert.deepEqual(afterTasks.body, beforeTasks.body);
      assert.equal(await planByTitle('Rest Rejected'), undefined, 'no project was auto-created');
    });

    test('an unknown route → 404 JSON NOT_FOUND', async () => {
      for (const [method, path] of [
        ['GET', '/api/v1/nope'],
        ['GET', '/api/v2/tasks'],
        ['DELETE', '/api/v1/tasks'],
        ['PUT', '/api/v1/tasks/0123456789ab'],
        ['GET', '/api/v1/tasks/0123456789ab/extra'],
        ['GET', '/nope.html'],
      ] as const) {
        const r = await api(method, path);
        assertError(r, 404, 'NOT_FOUND', `${method} ${path}`);
        assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      }
    });

    test('a foreign Host header → 403 FORBIDDEN; loopback names with the listening port pass', async () => {
      const port = new URL(server.url).port;
      for (const host of [
        'evil.example',
        `evil.example:${port}`,
        `127.0.0.1:${Number(port) + 1}`,
        `localhost.evil.example:${port}`,
      ]) {
        const r = await rawRequest(server.url, { path: '/api/v1/tasks', headers: { host } });
        assertError(r, 403, 'FORBIDDEN', `Host ${host}`);
        assert.match(r.body.error.message, /Host/);
      }
      const post = await rawRequest(server.url, {
        method: 'POST',
        path: '/api/v1/tasks',
        headers: { host: 'evil.example', 'content-type': 'application/json' },
        body: JSON.stringify(createBody({ title: 'rebound', project: 'Rest Rebinding', phase_name: 'P' })),
      });
      assertError(post, 403, 'FORBIDDEN', 'POST with a foreign Host');
      const mcpPost = await rawRequest(server.url, {
        method: 'POST',
        path: '/mcp',
        headers: { host: 'evil.example', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(mcpPost.status, 403, '/mcp is checked too');

      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
        const r = await rawRequest(server.url, { path: '/api/v1/tasks', headers: { host } });
        assert.equal(r.status, 200, `Host ${host} passes: ${JSON.stringify(r.body)}`);
      }
      const probe = await rawRequest(server.url, { path: '/healthz', headers: { host: '10.1.2.3' } });
      assert.equal(probe.status, 200, 'health probes are not host-checked');
      assert.equal(await planByTitle('Rest Rebinding'), undefined, 'the refused POST wrote nothing');
    });

    test('a foreign Origin → 403 FORBIDDEN; an allowed Origin passes', async () => {
      const port = new URL(server.url).port;
      for (const origin of [
        'http://evil.example',
        `http://evil.example:${port}`,
        `http://127.0.0.1:${Number(port) + 1}`,
        'null',
      ]) {
        const r = await api('GET', '/api/v1/tasks', undefined, { origin });
        assertError(r, 403, 'FORBIDDEN', `Origin ${origin}`);
        assert.match(r.body.error.message, /Origin/);
      }
      const post = await api(
        'POST',
        '/api/v1/tasks',
        createBody({ title: 'csrf', project: 'Rest Cross Origin', phase_name: 'P' }),
        { origin: 'http://evil.example' },
      );
      assertError(post, 403, 'FORBIDDEN', 'POST with a foreign Origin');
      assert.equal(await planByTitle('Rest Cross Origin'), undefined, 'the refused POST wrote nothing');

      for (const origin of [server.url, `http://localhost:${port}`, `HTTP://LOCALHOST:${port}`]) {
        const r = await api('GET', '/api/v1/tasks?limit=1', undefined, { origin });
        assert.equal(r.status, 200, `Origin ${origin} passes: ${JSON.stringify(r.body)}`);
      }
      const created = await api(
        'POST',
        '/api/v1/tasks',
        createBody({ title: 'same origin', project: 'Rest Same Origin', phase_name: 'P' }),
        {
          origin: server.url,
        },
      );
      assert.equal(created.status, 201);
    });

    test('/healthz → 200 {status: ok}; /readyz → 200 when migrated', async () => {
      const health = await api('GET', '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      const ready = await api('GET', '/readyz');
      assert.equal(ready.status, 200);
      assert.equal(ready.body.status, 'ok');
      assert.equal(ready.body.schema_version, database.schemaVersion);
    });

    test('/readyz → 503 when the schema is older than this build expects', async () => {
      const ahead = await startServer({ ...database, schemaVersion: database.schemaVersion + 1 });
      try {
        const ready = await rest(ahead.url, 'GET', '/readyz');
        assert.equal(ready.status, 503);
        assert.equal(ready.body.status, 'unavailable');
        assert.ok(ready.body.reason.includes(String(database.schemaVersion + 1)), ready.body.reason);
      } finally {
        await ahead.close();
      }
    });
  });

  describe(`REST over a database that was never migrated (${backend.name})`, () => {
    let unmigrated: TestDb;
    let server: TestServer;

    before(async () => {
      unmigrated = await backend.open({ migrate: false });
      server = await startServer(unmigrated);
    });
    after(async () => {
      await server?.close();
      await unmigrated?.dispose();
    });

    test('/readyz → 503; /healthz still 200', async () => {
      const ready = await rest(server.url, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'unavailable');
      assert.equal(typeof ready.body.reason, 'string');
      assertNoInternals(ready.body, '/readyz');
      const health = await rest(server.url, 'GET', '/healthz');
      assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);
    });

    test('a failing query → 500 with a catalogue code and no internals in the body', async () => {
      const create = { title: 't', description: 'd', task_type: 'coding', priority: 5, phase_name: 'P' };
      for (const [method, path, body, code] of [
        ['GET', '/api/v1/tasks', undefined, 'DATABASE_ERROR'],
        // The one-statement insert into an existing project/phase fails first: a database fault.
        ['POST', '/api/v1/tasks', create, 'DATABASE_ERROR'],
        ['POST', '/api/v1/tools/devstream_create_task', create, 'DATABASE_ERROR'],
        ['PATCH', '/api/v1/tasks/0123456789ab', { status: 'active' }, 'DATABASE_ERROR'],
        ['GET', '/api/v1/plans', undefined, 'DATABASE_ERROR'],
        ['GET', '/api/v1/plans/0123456789ab', undefined, 'DATABASE_ERROR'],
        ['POST', '/api/v1/tools/devstream_list_tasks', {}, 'DATABASE_ERROR'],
      ] as const) {
        const r = await rest(server.url, method, path, body);
        assertError(r, 500, code, `${method} ${path}`);
        // The driver's text (it can carry data) stays in the log; the SQLSTATE is enough for callers.
        assert.doesNotMatch(
          JSON.stringify(r.body),
          /relation|micro_tasks|intervention_plans|does not exist/i,
          `${method} ${path}`,
        );
      }
    });
  });
}
