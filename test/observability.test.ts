import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, type TestDb } from './helpers/backends.js';
import { initializeBody, rawMcp } from './helpers/mcp-raw.js';
import { rawRequest } from './helpers/raw-http.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';

/** One sample's value from Prometheus text: `name{a="x",b="y"} 3` → 3 (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return 0;
}

/** GET with a Host header of our choosing (fetch does not send one it is given). */
const getWithHost = async (url: string, path: string, host: string, headers: Record<string, string>) =>
  (await rawRequest(url, { path, headers: { ...headers, host } })).status;

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789abcdef';
const METRICS_TOKEN = 'metrics-token-for-tests-0123';

for (const backend of backends) {
  describe(`observability (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    const lines: string[] = [];

    before(async () => {
      database = await backend.open();
      server = await startServer(
        database,
        { logLevel: 'info' },
        { logStream: { write: (line) => void lines.push(line) } },
      );
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });
    const metricsText = async () => {
      const response = await rest(server.url, 'GET', '/metrics');
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      return response.body as string;
    };

    test('every answer carries x-request-id; a client id is kept, a malformed one replaced; log lines carry it', async () => {
      const fresh = await rest(server.url, 'GET', '/api/v1/plans');
      assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      const kept = await rest(server.url, 'GET', '/api/v1/tasks?project=nope', undefined, {
        'x-request-id': 'trace-abc.123',
      });
      assert.equal(kept.headers.get('x-request-id'), 'trace-abc.123');
      assert.ok(
        lines.some((l) => JSON.parse(l).reqId === 'trace-abc.123'),
        'the request is logged under the id the client sent',
      );
      const replaced = await rest(server.url, 'GET', '/api/v1/plans', undefined, {
        'x-request-id': 'bad id with spaces',
      });
      assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      // Errors and refusals too, MCP included.
      const refused = await rest(server.url, 'GET', '/api/v1/no-such-route');
      assert.equal(refused.status, 404);
      assert.ok(refused.headers.get('x-request-id'));
      const mcp = await rawMcp(server.url, initializeBody, { headers: { 'x-request-id': 'mcp-call-1' } });
      assert.equal(mcp.status, 200, mcp.text);
      assert.equal(mcp.headers.get('x-request-id'), 'mcp-call-1');
    });

    test('GET /metrics counts HTTP requests by route, MCP tool calls by outcome, sessions, pool and queues', async () => {
      const before = await metricsText();
      const route = { method: 'GET', route: '/api/v1/tasks', status: '200' };
      const n0 = sample(before, 'devstream_http_request_duration_seconds_count', route);
      await rest(server.url, 'GET', '/api/v1/tasks?project=Metrics');
      await rest(server.url, 'GET', '/api/v1/tasks?project=Metrics');
      const { client, transport } = await connectMcp(server.url);
      try {
        await client.callTool({ name: 'devstream_list_tasks', arguments: { project: 'Metrics' } });
        const failed = await client.callTool({
          name: 'devstream_update_task',
          arguments: { task_id: 'abcdef123456', status: 'completed' },
        });
        assert.equal(failed.isError, true);
        const after = await metricsText();
        assert.equal(
          sample(after, 'devstream_http_request_duration_seconds_count', route),
          n0 + 2,
          'by route pattern, not path',
        );
        assert.equal(
          sample(after, 'devstream_mcp_tool_call_duration_seconds_count', {
            tool: 'devstream_list_tasks',
            outcome: 'ok',
          }),
          1,
        );
        assert.equal(
          sample(after, 'devstream_mcp_tool_call_duration_seconds_count', {
            tool: 'devstream_update_task',
            outcome: 'NOT_FOUND',
          }),
          1,
        );
        assert.ok(
          sample(after, 'devstream_http_request_duration_seconds_count', {
            method: 'POST',
            route: '/mcp',
            status: '200',
          }) >= 2,
          'MCP posts are counted',
        );
        assert.equal(
          sample(after, 'devstream_mcp_sessions_active'),
          sample(before, 'devstream_mcp_sessions_active') + 1,
        );
        assert.equal(sample(after, 'devstream_embedding_queue_depth'), 0);
        assert.equal(sample(after, 'devstream_jobs', { status: 'queued' }), 0);
        assert.ok(sample(after, 'devstream_db_pool_connections', { state: 'idle' }) >= 1);
        assert.ok(sample(after, 'devstream_process_resident_memory_bytes') > 0, 'process metrics');
        assert.equal(sample(after, 'devstream_embedder_down'), 0);
      } finally {
        await transport.terminateSession();
        await client.close();
      }
      // DELETE /mcp ended the session.
      const closed = await metricsText();
      assert.equal(sample(closed, 'devstream_mcp_sessions_active'), sample(before, 'devstream_mcp_sessions_active'));
    });
  });
}

describe('who may read /metrics', () => {
  const backend = backends[0]!;
  let database: TestDb;
  const servers: TestServer[] = [];
  before(async () => {
    database = await backend.open();
  });
  after(async () => {
    for (const s of servers) await s.close();
    await database?.dispose();
  });
  const start = async (metricsToken: string | undefined, mode: 'required' | 'off') => {
    const s = await startServer(database, { metricsToken, auth: { mode, adminToken: ADMIN_TOKEN } });
    servers.push(s);
    return s;
  };
  const get = (s: TestServer, headers: Record<string, string>) => rest(s.url, 'GET', '/metrics', undefined, headers);

  test('with METRICS_TOKEN: that token (from any Host: Prometheus scrapes by IP) or an admin key; no one else', async () => {
    const s = await start(METRICS_TOKEN, 'required');
    const token = { authorization: `Bearer ${METRICS_TOKEN}` };
    assert.equal(await getWithHost(s.url, '/metrics', '10.1.2.3:7000', token), 200);
    assert.equal(
      await getWithHost(s.url, '/metrics', '10.1.2.3:7000', { authorization: `Bearer ${ADMIN_TOKEN}` }),
      403,
      'an admin key still meets the Host check',
    );
    assert.equal(
      await getWithHost(s.url, '/api/v1/plans', '10.1.2.3:7000', token),
      403,
      'the token lets nothing else past the Host check',
    );
    assert.equal(await getWithHost(s.url, '/metrics/', '10.1.2.3:7000', token), 403);
    assert.equal((await get(s, token)).status, 200);
    assert.equal((await get(s, { authorization: `Bearer ${ADMIN_TOKEN}` })).status, 200);
    const none = await get(s, {});
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'UNAUTHORIZED');
    assert.equal((await get(s, { authorization: 'Bearer metrics-token-for-tests-0124' })).status, 401);
    // The token opens /metrics only.
    assert.equal(
      (await rest(s.url, 'GET', '/api/v1/plans', undefined, { authorization: `Bearer ${METRICS_TOKEN}` })).status,
      401,
    );
    const key = await rest(
      s.url,
      'POST',
      '/api/v1/keys',
      { name: 'reader', scopes: ['read'] },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    assert.equal(key.status, 201);
    const forbidden = await get(s, { authorization: `Bearer ${key.body.token}` });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 'FORBIDDEN');
  });

  test('with AUTH=off: open without METRICS_TOKEN, the token wanted with it', async () => {
    const open = await start(undefined, 'off');
    assert.equal((await get(open, {})).status, 200);
    const guarded = await start(METRICS_TOKEN, 'off');
    assert.equal((await get(guarded, {})).status, 401);
    assert.equal((await get(guarded, { authorization: `Bearer ${METRICS_TOKEN}` })).status, 200);
  });
});

describe('embedder faults', () => {
  const backend = backends[0]!;
  let database: TestDb;
  let fake: FakeOllama;
  let server: TestServer;
  before(async () => {
    database = await backend.open();
    fake = await new FakeOllama().start();
    server = await startServer(database, {
      embedding: { provider: 'ollama', ollamaHost: fake.url, model: 'nomic-embed-text', timeoutMs: 300 },
    });
  });
  after(async () => {
    await server?.close();
    await fake?.stop();
    await database?.dispose();
  });

  test('a hanging Ollama: after the cooldown one request probes it while the others skip it', async () => {
    const metric = async (name: string, labels: Record<string, string> = {}) =>
      sample((await rest(server.url, 'GET', '/metrics')).body as string, name, labels);
    // Searches, not stores: a store queues its memory, and the worker's retries would move the cooldown.
    const search = () =>
      rest(server.url, 'POST', '/api/v1/memories/search', { query: 'ollama hangs', project: 'Breaker' });
    fake.delayMs = 3_000;
    try {
      const first = await search();
      assert.equal(first.status, 200);
      assert.equal(first.body.method, 'keyword');
      assert.match(first.body.method_note, /did not answer within 300 ms/);
      const retryAt = (await rest(server.url, 'GET', '/readyz')).body.embeddings.retry_at;
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(retryAt) - Date.now()) + 20));
      const probes = () =>
        metric('devstream_embedding_duration_seconds_count', { kind: 'query', caller: 'request', outcome: 'failed' });
      const [calls, skipped] = [await probes(), await metric('devstream_embedding_skipped_total')];
      const burst = await Promise.all(Array.from({ length: 6 }, search));
      assert.deepEqual(
        burst.map((s) => s.body.method),
        Array(6).fill('keyword'),
      );
      assert.equal((await probes()) - calls, 1, 'one probe, not one hanging call per request');
      assert.equal((await metric('devstream_embedding_skipped_total')) - skipped, 5);
      assert.equal(await metric('devstream_embedder_down'), 1);
    } finally {
      fake.delayMs = 0;
    }
  });

  test('MCP clients that ask get warnings: a store without a vector, a keyword-only search', async () => {
    fake.failWith = 500;
    const { client } = await connectMcp(server.url);
    const messages: Array<{ level: string; data: any }> = [];
    client.setNotificationHandler('notifications/message', (n) => void messages.push(n.params));
    try {
      await client.setLoggingLevel('warning');
      // Let the breaker's cooldown pass so this call reaches Ollama (and fails) or skips: either way a warning.
      const stored = await client.callTool({
        name: 'devstream_store_memory',
        arguments: { content: 'Stored while Ollama errors.', content_type: 'context', project: 'Warn' },
      });
      assert.notEqual(stored.isError, true);
      await client.callTool({
        name: 'devstream_search_memory',
        arguments: { query: 'ollama errors', project: 'Warn' },
      });
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(
        messages.some((m) => m.level === 'warning' && /Stored without a vector/.test(m.data.message)),
        JSON.stringify(messages),
      );
      assert.ok(messages.some((m) => m.level === 'warning' && /Searched by keyword only/.test(m.data.message)));
      assert.ok(
        messages.every((m) => m.level !== 'info' && m.level !== 'debug'),
        'nothing below the level asked for',
      );

      await client.setLoggingLevel('error');
      const seen = messages.length;
      await client.callTool({
        name: 'devstream_search_memory',
        arguments: { query: 'ollama errors', project: 'Warn' },
      });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(messages.length, seen, 'warnings are not sent at level error');
    } finally {
      fake.failWith = null;
      await client.close();
    }
  });
});
