import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { operations } from '../src/operations/index.js';
import type { AnyOperation, HttpRoute } from '../src/operations/operation.js';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { WREN_COMMIT, wren } from './helpers/graph-fixture.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';
import { tempDirs } from './helpers/temp-dirs.js';

type Json = Record<string, any>;

/**
 * `value` is what `schema` describes, field for field. Zod objects strip the keys they do not
 * declare (and their JSON Schema, the MCP outputSchema and OpenAPI response, says
 * `additionalProperties: false`), so the parse must also give back the value unchanged: a field
 * the schema does not declare fails here, as a wrong type or a missing field does.
 */
function assertMatches(schema: z.ZodType, value: unknown, where: string): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    assert.fail(`${where}: not its output schema:\n${z.prettifyError(parsed.error)}\n${JSON.stringify(value)}`);
  }
  assert.deepEqual(parsed.data, value, `${where}: fields its output schema does not declare`);
}

/** The second wren commit: one node's code changed, one removed, one added (for impact over a range). */
const WREN_V2 = 'b'.repeat(40);
function wrenV2() {
  const nodes = structuredClone(wren.nodes) as Json[];
  const changed = nodes.find((n) => n.id === 'source/utils/combine.ts::mergeDeep')!;
  changed.rawCode = 'export function mergeDeep() { return {}; }';
  delete changed.codeHash;
  const kept = nodes.filter((n) => n.id !== 'source/utils/combine.ts::isRecord');
  kept.push({
    id: 'source/utils/fresh.ts::fresh',
    name: 'fresh',
    type: 'FUNCTION',
    filePath: 'source/utils/fresh.ts',
    startLine: 1,
    endLine: 3,
    score: 0,
  });
  const edges = wren.edges.filter((e) => e.from !== 'source/utils/combine.ts::isRecord');
  return { commitHash: WREN_V2, analyzedAt: '2026-06-01T00:00:00Z', nodes: kept, edges };
}

/** A REST request for `route` carrying `input`: path parameters, then the query string (GET, DELETE) or the body. */
function request(route: HttpRoute, input: Json): { method: string; path: string; body?: Json } {
  const rest_ = { ...input };
  const path = `/api/v1${route.path}`.replace(/:(\w+)/g, (_, param: string) => {
    const field = route.params?.[param] ?? param;
    const value = String(rest_[field]);
    delete rest_[field];
    return encodeURIComponent(value);
  });
  if (route.method !== 'GET' && route.method !== 'DELETE') return { method: route.method, path, body: rest_ };
  const names = Object.fromEntries(Object.entries(route.query ?? {}).map(([http, field]) => [field, http]));
  const query = new URLSearchParams();
  for (const [field, value] of Object.entries(rest_)) {
    for (const v of Array.isArray(value) ? value : [value]) query.append(names[field] ?? field, String(v));
  }
  return { method: route.method, path: `${path}${query.size ? `?${query}` : ''}` };
}

for (const backend of backends) {
  describe(`every operation answers its output schema, over MCP and REST (${backend.name})`, () => {
    const scratch = tempDirs('output-schemas');
    let ollama: FakeOllama;
    let database: TestDb;
    let server: TestServer;
    let client: Client;
    let checkout: string;

    before(async () => {
      ollama = await new FakeOllama().start();
      const root = await scratch();
      checkout = join(root, 'shop');
      await mkdir(join(checkout, 'src'), { recursive: true });
      await writeFile(
        join(checkout, 'src', 'prices.ts'),
        '/** The total after a discount. */\nexport function discount(total: number) {\n  return total * 0.9;\n}\n',
      );
      database = await backend.open();
      server = await startServer(database, {
        embedding: { provider: 'ollama', ollamaHost: ollama.url, model: 'nomic-embed-text', timeoutMs: 5_000 },
        graphs: { retention: 20, uploadLimit: 64 * 1024 * 1024, analyzeRoots: [root] },
      });
      ({ client } = await connectMcp(server.url));
      // Lists the tools first: the SDK client then checks every structuredContent against its outputSchema.
      await client.listTools();
      for (const file of [wren, wrenV2()]) {
        const r = await rest(server.url, 'POST', '/api/v1/graphs?repo=wren', file);
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }
    });
    after(async () => {
      await client?.close();
      await server?.close();
      await database?.dispose();
      await ollama?.stop();
    });

    const byName = new Map(operations.map((op) => [op.name, op]));
    const checked = new Map<string, Set<string>>();
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await rest(server.url, method, path, body);
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r;
    };
    const storeMemory = async (content: string) =>
      (await api('POST', '/api/v1/memories', { content, content_type: 'decision' })).body.memory_id as string;
    const createTask = async () =>
      (
        await api('POST', '/api/v1/tasks', {
          title: 'Contract',
          description: 'Checks outputs',
          task_type: 'testing',
          priority: 5,
          phase_name: 'Outputs',
        })
      ).body.task.id as string;
    let keys = 0;

    /**
     * Calls `name` with `input` (a function: a fresh input per call, for calls that consume what they
     * name) as an MCP tool, at its /api/v1/tools mirror and at each of its resource routes, and checks
     * every answer against the operation's output schema.
     */
    async function check(name: string, input: Json | (() => Promise<Json>)): Promise<Json[]> {
      const op = byName.get(name) as AnyOperation | undefined;
      assert.ok(op, name);
      const next = async () => (typeof input === 'function' ? await input() : input);
      const seen = checked.get(name) ?? new Set<string>();
      checked.set(name, seen);
      const outputs: Json[] = [];
      if (op.tool !== false) {
        const args = await next();
        const result = (await client.callTool({ name, arguments: args })) as Json;
        assert.ok(!result.isError, `${name} ${JSON.stringify(args)}: ${JSON.stringify(result.content)}`);
        assertMatches(op.output, result.structuredContent, `MCP ${name} ${JSON.stringify(args)}`);
        outputs.push(result.structuredContent);
        const mirror = await api('POST', `/api/v1/tools/${name}`, await next());
        assert.equal(mirror.status, 200);
        assertMatches(op.output, mirror.body, `POST /api/v1/tools/${name}`);
        outputs.push(mirror.body);
        seen.add('tool');
      }
      for (const route of op.routes) {
        const call = request(route, await next());
        const r = await api(call.method, call.path, call.body);
        assert.equal(r.status, route.status ?? 200, `${call.method} ${call.path}`);
        assertMatches(op.output, r.body, `${call.method} ${call.path}`);
        outputs.push(r.body);
        seen.add(`${route.method} ${route.path}`);
      }
      return outputs;
    }

    /** The one value of `field` in every output (the case checked is the case meant). */
    const every = (outputs: Json[], field: string) => [...new Set(outputs.map((o) => JSON.stringify(o[field])))];

    test('tasks and plans', async () => {
      await check('devstream_create_task', {
        title: 'Write the contract test',
        description: 'Every output against its schema',
        task_type: 'testing',
        priority: 7,
        phase_name: 'Contract',
        project: 'outputs',
      });
      const taskId = await createTask();
      await check('devstream_update_task', { task_id: taskId, status: 'active' });
      await check('devstream_update_task', {
        task_id: taskId,
        status: 'completed',
        notes: 'Checked over both transports',
      });
      await check('devstream_list_tasks', { project: 'outputs', limit: 10 });
      await check('devstream_list_tasks', {});
      await check('devstream_list_plans', {});
      const plans = await api('GET', '/api/v1/plans');
      await check('devstream_get_plan', { id: plans.body.plans[0].id });
    });

    test('memory, with the embedder up and down', async () => {
      let n = 0;
      const stored = await check('devstream_store_memory', () =>
        Promise.resolve({
          content: `Decision ${++n}: outputs are validated against their schemas`,
          content_type: 'decision',
          keywords: ['schema', 'contract'],
          project: 'outputs',
        }),
      );
      assert.deepEqual(every(stored, 'embedding_generated'), ['true']);
      // The same content again: the duplicate answer.
      const duplicate = await check('devstream_store_memory', {
        content: 'Decision 1: outputs are validated against their schemas',
        content_type: 'decision',
        project: 'outputs',
      });
      assert.deepEqual(every(duplicate, 'duplicate'), ['true']);
      const hybrid = await check('devstream_search_memory', {
        query: 'validated schemas',
        project: 'outputs',
        keywords: ['schema'],
      });
      assert.deepEqual(every(hybrid, 'method'), ['"hybrid"']);
      assert.ok(hybrid.every((o) => o.results.length > 0));
      const id = await storeMemory('Learning: a memory to read back');
      await check('devstream_get_memory', { memory_id: id });
      await check('devstream_delete_memory', async () => ({ memory_id: await storeMemory(`Doomed ${++n}`) }));

      await ollama.stop();
      const textOnly = await check('devstream_store_memory', () =>
        Promise.resolve({ content: `Stored text-only ${++n}`, content_type: 'learning' }),
      );
      assert.deepEqual(every(textOnly, 'embedding_generated'), ['false']);
      const keyword = await check('devstream_search_memory', { query: 'text-only' });
      assert.deepEqual(every(keyword, 'method'), ['"keyword"']);
      await ollama.start();
    });

    test('the DevLens tools over the wren graph, and its graph routes', async () => {
      const repo = 'wren';
      await check('find_symbols', { query: 'mergeDeep', repo });
      await check('find_symbols', { query: 'retry after header', limit: 5, repo });
      await check('find_symbols', { query: 'zzzz-nothing', repo });
      await check('get_node', { node: 'source/utils/combine.ts::combineHeaders', repo });
      await check('get_node', { node: 'mergeDeep', include: ['code', 'callers'], repo });
      await check('get_node', { node: 'source/index.ts::createClient', include: ['metadata', 'security'], repo });
      await check('resolve_context', { task: 'How are retries delayed?', repo, commitHash: WREN_COMMIT });
      await check('resolve_context', { task: 'headers', intent: 'pinpoint', focus: ['combineHeaders'], repo });
      await check('impact', { target: 'source/utils/combine.ts::combineHeaders', repo });
      await check('impact', { target: 'createClient', direction: 'both', radius: 3, repo });
      const range = await check('impact', { from: WREN_COMMIT, to: WREN_V2, repo });
      assert.deepEqual(
        every(range, 'changes').map((c) => JSON.parse(c).map((x: Json) => x.change)),
        [['ADDED', 'CODECHANGED', 'REMOVED']],
      );
      await check('repo', { action: 'list' });
      await check('repo', { action: 'health', repo });
      await check('repo', { action: 'freshness', repo });
      await check('repo', { action: 'freshness', repo, commit: WREN_COMMIT });
      await check('repo', { action: 'analyze' });
      await check('devstream_list_graphs', {});
    });

    test('analysis jobs', async () => {
      const queued = await api('POST', '/api/v1/tools/repo', { action: 'analyze', path: checkout, repo: 'shop' });
      assertMatches(byName.get('repo')!.output, queued.body, 'repo analyze with a path');
      await check('repo', { action: 'analyze', path: checkout, repo: 'shop' });
      const jobId = queued.body.job.jobId as string;
      await check('devstream_get_job', { jobId });
      await eventually(async () => {
        const r = await api('GET', `/api/v1/jobs/${jobId}`);
        return ['succeeded', 'failed'].includes(r.body.job.status) ? r.body : undefined;
      });
      // Finished: with its result and times.
      const done = await check('devstream_get_job', { jobId });
      assert.deepEqual([...new Set(done.map((o) => o.job.status))], ['succeeded'], JSON.stringify(done[0]));
      await check('devstream_graph_summaries', { repo: 'shop', codeHashes: ['0123456789abcdef0123456789abcdef'] });
    });

    test('API keys, the caller, deleting a graph', async () => {
      await check('devstream_create_key', () => Promise.resolve({ name: `contract-${++keys}`, scopes: ['read'] }));
      await check('devstream_list_keys', {});
      await check('devstream_list_keys', { include_revoked: true });
      await check('devstream_revoke_key', async () => {
        const name = `revoked-${++keys}`;
        await api('POST', '/api/v1/keys', { name, scopes: ['read', 'write'] });
        return { name };
      });
      await check('devstream_whoami', {});
      const graphs = await api('GET', '/api/v1/graphs');
      const shop = graphs.body.graphs.find((g: Json) => g.repo === 'shop');
      assert.ok(shop, 'the analysis job stored the shop graph');
      await check('devstream_delete_graph', { graphId: shop.graphId });
    });

    test('every operation and every route was checked', () => {
      for (const op of operations) {
        const expected = [...(op.tool !== false ? ['tool'] : []), ...op.routes.map((r) => `${r.method} ${r.path}`)];
        assert.deepEqual([...(checked.get(op.name) ?? [])].sort(), expected.sort(), op.name);
      }
    });
  });
}
