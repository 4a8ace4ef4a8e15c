import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { tools } from '../../src/operations/index.js';
import { pglite, type TestDb } from '../helpers/pglite.js';
import { connectInMemory } from '../helpers/in-memory-mcp.js';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

/**
 * The MCP tools over the SDK's in-memory transports on PGlite: what a tool call does, without HTTP.
 * The Streamable HTTP transport (sessions, hosts, streams) is tested in test/mcp-sessions.test.ts.
 */
describe('MCP tools over in-memory transports (pglite)', () => {
  let database: TestDb;
  let client: Client;
  let close: () => Promise<void>;
  before(async () => {
    database = await pglite.open();
    ({ client, close } = await connectInMemory(database));
  });
  after(async () => {
    await close?.();
    await database?.dispose();
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;

  test('tools/list is the operation registry: every tool, an object input and output schema each', async () => {
    const listed = (await client.listTools()).tools;
    assert.deepEqual(listed.map((t) => t.name).sort(), tools.map((op) => op.name).sort());
    for (const t of listed) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.outputSchema?.type, 'object', t.name);
    }
  });

  test('a created task is listed, as text and as structured content', async () => {
    const created = await call('devstream_create_task', {
      title: 'Write the unit tier',
      description: 'd',
      task_type: 'coding',
      priority: 5,
      project: 'Unit',
      phase_name: 'Tiers',
    });
    assert.notEqual(created.isError, true, created.content[0]?.text);
    const listed = await call('devstream_list_tasks', { project: 'Unit' });
    assert.notEqual(listed.isError, true, listed.content[0]?.text);
    assert.deepEqual(
      listed.structuredContent.tasks.map((t: { title: string }) => t.title),
      ['Write the unit tier'],
    );
    assert.match(listed.content[0]!.text, /Write the unit tier/);
  });

  test('bad arguments are a tool error naming the field, with the catalogue code', async () => {
    const result = await call('devstream_create_task', {
      title: 'Bad priority',
      description: 'd',
      task_type: 'coding',
      priority: 'high',
    });
    assert.equal(result.isError, true);
    assert.match(result.content[0]!.text, /VALIDATION_ERROR/);
    assert.match(result.content[0]!.text, /priority/);
  });
});
