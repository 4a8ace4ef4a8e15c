import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/server';
import { tools as toolOperations } from '../src/operations/index.js';
import { backends, type TestDb } from './helpers/backends.js';
import { initializeBody, rawInitialize } from './helpers/mcp-raw.js';
import { rawRequest } from './helpers/raw-http.js';
import { connectMcp, startServer, type TestServer, MCP_HEADERS } from './helpers/server.js';

const listTools = (url: string, sessionId: string) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });

/** A raw initialize with a Host header of our choosing (fetch does not allow setting Host). */
const withHost = (url: string, host: string) =>
  rawRequest(url, {
    method: 'POST',
    path: '/mcp',
    headers: { ...MCP_HEADERS, host },
    body: JSON.stringify(initializeBody),
  });

// Transport behaviour does not depend on the database: one PGlite database serves the whole file.
let database: TestDb;
before(async () => {
  database = await backends[0]!.open();
});
after(async () => {
  await database?.dispose();
});

describe('MCP Streamable HTTP sessions', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(database);
  });
  after(async () => {
    await server?.close();
  });

  test('initialize → call → DELETE → 404', async () => {
    const { client, transport } = await connectMcp(server.url);
    const sessionId = transport.sessionId;
    assert.match(sessionId ?? '', /^[0-9a-f-]{36}$/);
    const listed = await client.callTool({ name: 'devstream_list_tasks', arguments: {} });
    assert.equal(listed.isError, undefined);

    await transport.terminateSession();
    const after = await listTools(server.url, sessionId!);
    assert.equal(after.status, 404);
    const body = (await after.json()) as any;
    assert.equal(body.error.code, -32001);
    await client.close();
  });

  test("GET opens the server's SSE stream for a session", async () => {
    const sessionId = await rawInitialize(server.url);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      },
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    controller.abort();
    const del = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
    assert.equal(del.status, 200);
  });

  test('unknown session id → 404 on POST, GET and DELETE; no id and not initialize → 400', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    assert.equal((await listTools(server.url, unknown)).status, 404);
    assert.equal(
      (await fetch(`${server.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': unknown } }))
        .status,
      404,
    );
    assert.equal(
      (await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': unknown } })).status,
      404,
    );
    const noId = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    assert.equal(noId.status, 400);
  });

  test('malformed JSON on /mcp is a JSON-RPC parse error', async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: '{"jsonrpc": "2.0",',
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as any;
    assert.equal(body.error.code, -32700);
  });

  test('a Host header is parsed strictly: one name and at most one port (issue 19)', async () => {
    const port = new URL(server.url).port;
    // `127.0.0.1:<port>:<port>` used to pass: the check cut one `:port` and found 127.0.0.1:<port> allowed.
    for (const host of [
      `127.0.0.1:${port}:${port}`,
      `localhost:${port}:1`,
      `localhost:${port}x`,
      `local host:${port}`,
      `[::1:${port}`,
      `:${port}`,
      `localhost:`,
      `localhost:123456`,
      // Shaped right, but no URL's host: they passed until 2026-12-05 (then failed later, in the MCP adapter).
      `localhost:99999`,
      `1.2.3.999:${port}`,
      `[1:2]:${port}`,
    ]) {
      const r = await withHost(server.url, host);
      assert.equal(r.status, 400, `${host}: ${r.text}`);
      const error = r.body.error;
      assert.equal(error.code, 'VALIDATION_ERROR', host);
      assert.equal(error.details.issues[0].field, '(header) host', host);
    }
    for (const host of [`127.0.0.1:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      assert.equal((await withHost(server.url, host)).status, 200, host);
    }
  });

  test('a foreign Host or Origin gets 403; the allowed ones pass', async () => {
    const port = new URL(server.url).port;
    assert.equal((await withHost(server.url, 'evil.example:80')).status, 403);
    assert.equal((await withHost(server.url, `attacker.test:${port}`)).status, 403);
    assert.equal((await withHost(server.url, `localhost:${port}`)).status, 200);
    const foreign = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: 'https://evil.example' },
      body: JSON.stringify(initializeBody),
    });
    assert.equal(foreign.status, 403);
    const local = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, origin: `http://localhost:${port}` },
      body: JSON.stringify(initializeBody),
    });
    assert.equal(local.status, 200);
    await local.text();
  });

  test('logging/setLevel decides which log notifications the client gets', async () => {
    const { client } = await connectMcp(server.url);
    const messages: Array<{ level: string; data: any }> = [];
    client.setNotificationHandler(
      'notifications/message',
      (n) => void messages.push(n.params as { level: string; data: any }),
    );
    const create = (project: string) =>
      client.callTool({
        name: 'devstream_create_task',
        arguments: { title: 't', description: 'd', task_type: 'coding', priority: 5, phase_name: 'P', project },
      });

    await client.setLoggingLevel('error');
    await create('Quiet Project');
    assert.equal(messages.length, 0, 'nothing below error');

    await client.setLoggingLevel('info');
    await create('Told Project');
    assert.ok(messages.some((m) => m.level === 'info' && /Created project "Told Project"/.test(m.data.message)));
    assert.ok(!messages.some((m) => m.level === 'debug'));

    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'devstream_list_plans', arguments: {} });
    assert.ok(messages.some((m) => m.level === 'debug' && /devstream_list_plans took/.test(m.data.message)));
    await client.close();
  });
});

describe('MCP idle sessions expire', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(database, { sessionIdleMs: 300 });
  });
  after(async () => {
    await server?.close();
  });

  test('a session idle past SESSION_IDLE_MINUTES is gone (404)', async () => {
    const sessionId = await rawInitialize(server.url);
    assert.equal((await listTools(server.url, sessionId)).status, 200);
    await new Promise((r) => setTimeout(r, 900));
    assert.equal((await listTools(server.url, sessionId)).status, 404);
  });

  test('a session with an open SSE stream stays', async () => {
    const { client } = await connectMcp(server.url);
    await new Promise((r) => setTimeout(r, 900));
    const result = await client.callTool({ name: 'devstream_list_tasks', arguments: {} });
    assert.equal(result.isError, undefined);
    await client.close();
  });
});

describe('MCP stateless mode (MCP_STATELESS=1)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(database, { mcpStateless: true });
  });
  after(async () => {
    await server?.close();
  });

  test('every request stands alone: tools work, no session id, GET and DELETE are 405', async () => {
    const { client, transport } = await connectMcp(server.url);
    assert.equal(transport.sessionId, undefined);
    const { tools } = await client.listTools();
    assert.equal(tools.length, toolOperations.length);
    const created = await client.callTool({
      name: 'devstream_create_task',
      arguments: {
        title: 'stateless',
        description: 'd',
        task_type: 'coding',
        priority: 5,
        phase_name: 'P',
        project: 'Stateless',
      },
    });
    assert.equal(created.isError, undefined);
    const listed = (await client.callTool({
      name: 'devstream_list_tasks',
      arguments: { project: 'Stateless' },
    })) as any;
    assert.equal(listed.structuredContent.total, 1);
    await client.close();
    assert.equal((await fetch(`${server.url}/mcp`, { headers: { accept: 'text/event-stream' } })).status, 405);
    assert.equal((await fetch(`${server.url}/mcp`, { method: 'DELETE' })).status, 405);
  });
});
