import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProtocolError, ResourceNotFoundError, type Client } from '@modelcontextprotocol/client';
import { listPlansOp, listTasksOp } from '../src/operations/tasks.js';
import { searchMemoryOp } from '../src/operations/memory.js';
import { parseInput, type AnyOperation } from '../src/operations/operation.js';
import { backends, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { createKey } from './helpers/keys.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';
import { taskInput } from './helpers/task-input.js';

const ADMIN = 'test-admin-token-0123456789abcdefghijklmnop';

type Content = { type: string; text?: string; uri?: string; name?: string; mimeType?: string };
type ToolResult = { isError?: boolean; content: Content[]; structuredContent?: any };

/** The JSON a resource holds (one application/json text content). */
async function readJson(client: Client, uri: string): Promise<any> {
  const read = await client.readResource({ uri });
  assert.equal(read.contents.length, 1);
  const [content] = read.contents as Array<{ uri: string; mimeType?: string; text: string }>;
  assert.equal(content!.uri, uri);
  assert.equal(content!.mimeType, 'application/json');
  return JSON.parse(content!.text);
}

/** The error a read of `uri` fails with (a failure of the test when it does not fail). */
async function readError(client: Client, uri: string): Promise<ProtocolError> {
  try {
    await client.readResource({ uri });
  } catch (error) {
    assert.ok(error instanceof ProtocolError, `${uri}: ${String(error)}`);
    return error;
  }
  assert.fail(`${uri} was read`);
}

for (const backend of backends) {
  describe(`MCP resources devstream://plan|task|memory/{id} and resource links in tool results (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let reader: string;
    let writer: string;
    let writeOnly: string;
    let planId: string;
    let memoryIds: string[];
    let deletedMemory: string;

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN } });
      writer = await createKey(server.url, ADMIN, 'writer', ['read', 'write']);
      reader = await createKey(server.url, ADMIN, 'reader', ['read']);
      writeOnly = await createKey(server.url, ADMIN, 'write-only', ['write']);
      const post = async (path: string, body: unknown) => {
        const answer = await rest(server.url, 'POST', path, body, bearer(writer));
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        return answer.body;
      };
      // 25 tasks in Orion (more than a result links), over two phases; one task in Vega.
      for (let i = 1; i <= 25; i += 1)
        await post(
          '/api/v1/tasks',
          taskInput({ title: `orion task ${i}`, project: 'Orion', phase_name: `Phase ${i % 2}` }),
        );
      await post('/api/v1/tasks', taskInput({ title: 'vega task', project: 'Vega' }));
      const plans = await rest(server.url, 'GET', '/api/v1/plans', undefined, bearer(reader));
      planId = plans.body.plans.find((p: { title: string }) => p.title === 'Orion').id;
      memoryIds = [];
      for (const content of [
        'The telescope mount drifts west under load; recalibrate the telescope after each slew.',
        'Telescope firmware 2.1 fixed the drift only for the small mount.',
      ])
        memoryIds.push(
          (await post('/api/v1/memories', { content, content_type: 'learning', project: 'Orion' })).memory_id,
        );
      deletedMemory = (
        await post('/api/v1/memories', { content: 'A telescope memory deleted later.', content_type: 'context' })
      ).memory_id;
      const deleted = await rest(server.url, 'DELETE', `/api/v1/memories/${deletedMemory}`, undefined, bearer(writer));
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    for (const era of ['legacy', 'modern'] as const) {
      const connect = async () => (await connectMcp(server.url, '/mcp', bearer(reader), { era })).client;

      it(`${era}: resources/templates/list names the task, plan and memory templates next to the graph one`, async () => {
        const client = await connect();
        try {
          const { resourceTemplates } = await client.listResourceTemplates();
          assert.deepEqual(
            resourceTemplates.map((t) => [t.uriTemplate, t.name, t.mimeType]),
            [
              ['devstream://task/{id}', 'task', 'application/json'],
              ['devstream://plan/{id}', 'plan', 'application/json'],
              ['devstream://memory/{id}', 'memory', 'application/json'],
              ['devlens://graph/{graphId}/meta', 'graph meta', 'application/json'],
            ],
          );
        } finally {
          await client.close();
        }
      });

      it(`${era}: a plan reads as devstream_list_plans lists it; a memory as devstream_get_memory gives it`, async () => {
        const client = await connect();
        try {
          const listed = await rest(server.url, 'GET', '/api/v1/plans', undefined, bearer(reader));
          const plan = await readJson(client, `devstream://plan/${planId}`);
          assert.deepEqual(
            plan,
            listed.body.plans.find((p: { id: string }) => p.id === planId),
          );
          assert.equal(plan.tasks_total, 25);
          assert.deepEqual(
            plan.phases.map((p: any) => [p.name, p.tasks_total]),
            [
              ['Phase 1', 13],
              ['Phase 0', 12],
            ],
          );
          const got = await rest(server.url, 'GET', `/api/v1/memories/${memoryIds[0]}`, undefined, bearer(reader));
          assert.equal(got.status, 200, JSON.stringify(got.body));
          assert.deepEqual(await readJson(client, `devstream://memory/${memoryIds[0]}`), got.body.memory);
        } finally {
          await client.close();
        }
      });

      it(`${era}: a key without the read scope reads no resource, prompt or completion and lists none`, async () => {
        const client = (await connectMcp(server.url, '/mcp', bearer(writeOnly), { era })).client;
        try {
          for (const uri of [`devstream://memory/${memoryIds[0]}`, `devstream://plan/${planId}`, 'devlens://repos'])
            await assert.rejects(
              client.readResource({ uri }),
              /FORBIDDEN: reading resources needs the "read" scope/,
              uri,
            );
          await assert.rejects(client.listResources(), /FORBIDDEN/);
          // Prompts and completions read the same data: refused too (a write-only key once read tasks through them).
          await assert.rejects(
            client.getPrompt({ name: 'resume', arguments: { project: 'Resources' } }),
            /FORBIDDEN: getting a prompt needs the "read" scope; this API key has: write/,
          );
          await assert.rejects(
            client.complete({ ref: { type: 'ref/prompt', name: 'resume' }, argument: { name: 'project', value: '' } }),
            /FORBIDDEN: completing a prompt argument needs the "read" scope/,
          );
        } finally {
          await client.close();
        }
      });

      it(`${era}: a missing plan or memory is ResourceNotFoundError (SEP-2164), as a missing task is`, async () => {
        const client = await connect();
        try {
          const task = await readError(client, 'devstream://task/000000000000');
          assert.ok(task instanceof ResourceNotFoundError, String(task));
          for (const uri of [
            'devstream://plan/000000000000',
            'devstream://plan/NOT-AN-ID',
            // Ids are lower-case hex; an upper-cased one is another id (unless it has no letter to change).
            ...(planId.toUpperCase() === planId ? [] : [`devstream://plan/${planId.toUpperCase()}`]),
            'devstream://memory/000000000000',
            `devstream://memory/${deletedMemory}`,
            'devstream://memory/x',
          ]) {
            const error = await readError(client, uri);
            assert.ok(error instanceof ResourceNotFoundError, `${uri}: ${String(error)}`);
            assert.equal(error.code, task.code, uri);
            assert.equal(error.uri, uri);
            assert.equal(error.message, task.message.replace('devstream://task/000000000000', uri));
          }
        } finally {
          await client.close();
        }
      });

      it(`${era}: list and search results carry a resource_link per item shown (at most 20) after their text; each link reads`, async () => {
        const client = await connect();
        try {
          const call = async (op: AnyOperation, args: Record<string, unknown>) => {
            const name = op.name;
            const result = (await client.callTool({ name, arguments: args })) as ToolResult;
            assert.ok(!result.isError, JSON.stringify(result.content));
            const [text, ...links] = result.content;
            assert.equal(text!.type, 'text');
            // The text is the operation's rendering of structuredContent, as before links.
            assert.equal(text!.text, op.render(result.structuredContent, parseInput(op, args)), name);
            for (const link of links) {
              assert.deepEqual(Object.keys(link).sort(), ['mimeType', 'name', 'type', 'uri'], name);
              assert.equal(link.type, 'resource_link');
              assert.equal(link.mimeType, 'application/json');
            }
            return { text: text!.text!, links, structured: result.structuredContent };
          };

          const tasks = await call(listTasksOp, { project: 'Orion' });
          assert.equal(tasks.structured.tasks.length, 25);
          assert.equal(tasks.links.length, 20, 'capped at 20');
          assert.deepEqual(
            tasks.links.map((l) => [l.uri, l.name]),
            tasks.structured.tasks.slice(0, 20).map((t: any) => [`devstream://task/${t.id}`, t.title]),
          );
          assert.deepEqual(await readJson(client, tasks.links[0]!.uri!), tasks.structured.tasks[0]);
          const few = await call(listTasksOp, { project: 'Orion', limit: 3 });
          assert.equal(few.links.length, 3, 'one link per task shown');
          const none = await call(listTasksOp, { project: 'Nowhere' });
          assert.equal(none.links.length, 0);

          const plans = await call(listPlansOp, {});
          assert.deepEqual(
            plans.links.map((l) => [l.uri, l.name]),
            plans.structured.plans.map((p: any) => [`devstream://plan/${p.id}`, p.title]),
          );
          assert.deepEqual(
            await readJson(client, `devstream://plan/${planId}`),
            plans.structured.plans.find((p: any) => p.id === planId),
          );

          const found = await call(searchMemoryOp, { query: 'telescope drift', project: 'Orion' });
          assert.equal(found.structured.results.length, 2);
          assert.deepEqual(
            found.links.map((l) => [l.uri, l.name]),
            found.structured.results.map((h: any) => [
              `devstream://memory/${h.memory_id}`,
              `learning memory ${h.memory_id}`,
            ]),
          );
          assert.equal((await readJson(client, found.links[0]!.uri!)).content, found.structured.results[0].content);

          // The REST mirror's body is the tool's structuredContent, without links.
          const mirrored = await rest(server.url, 'POST', '/api/v1/tools/devstream_list_plans', {}, bearer(reader));
          assert.equal(mirrored.status, 200, JSON.stringify(mirrored.body));
          assert.ok(!JSON.stringify(mirrored.body).includes('resource_link'));
        } finally {
          await client.close();
        }
      });

      it(`${era}: a tool without links (devstream_store_memory) answers its text alone`, async () => {
        const client = (await connectMcp(server.url, '/mcp', bearer(writer), { era })).client;
        try {
          const stored = (await client.callTool({
            name: 'devstream_store_memory',
            arguments: { content: `A note stored in the ${era} era.`, content_type: 'context', project: 'Elsewhere' },
          })) as ToolResult;
          assert.ok(!stored.isError, JSON.stringify(stored.content));
          assert.deepEqual(
            stored.content.map((c) => c.type),
            ['text'],
          );
        } finally {
          await client.close();
        }
      });
    }
  });
}
