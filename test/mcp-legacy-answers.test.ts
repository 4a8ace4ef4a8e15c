import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Server } from '@modelcontextprotocol/server';
import { LegacyTransport } from '../src/mcp/legacy-transport.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { backends, type TestDb } from './helpers/backends.js';
import { rawInitialize, rawMcp, sessionHeaders } from './helpers/mcp-raw.js';
import { rawRequest } from './helpers/raw-http.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * How a 2025-era POST is answered (src/mcp/legacy-transport.ts): one JSON body when the call sends
 * nothing before its result, an SSE stream, in order, as soon as it does.
 */

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

let database: TestDb;
before(async () => {
  database = await backends[0]!.open();
});
after(async () => {
  await database?.dispose();
});

describe('2025-era answers of the service: JSON unless the call notifies', () => {
  let server: TestServer;
  let sessionId: string;
  before(async () => {
    server = await startServer(database);
    sessionId = await rawInitialize(server.url);
  });
  after(async () => {
    await server?.close();
  });

  test('a call that sends nothing before its result is answered with one JSON body, in its session', async () => {
    const answer = await rawMcp(server.url, call(11, 'devstream_list_tasks'), { sessionId });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    assert.equal(answer.headers.get('mcp-session-id'), sessionId);
    assert.equal(answer.headers.get('cache-control'), null, 'no SSE headers on a JSON answer');
    assert.ok(answer.headers.get('x-request-id'), 'the headers set before the hand-off go out with the answer');
    assert.equal(answer.json.id, 11);
    assert.equal(answer.json.result.isError, undefined);
    assert.match(answer.json.result.content[0].text, /task/i);
  });

  test('a call with a notice is a stream: the notice first, then the result', async () => {
    const answer = await rawMcp(
      server.url,
      call(12, 'devstream_create_task', {
        title: 'Streamed notice',
        description: 'creates its project, which the call tells before its result',
        task_type: 'coding',
        priority: 5,
        phase_name: 'First',
        project: 'Lazy SSE project',
      }),
      { sessionId },
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'text/event-stream');
    assert.equal(answer.headers.get('mcp-session-id'), sessionId);
    const methods = answer.messages.map((m) => m.method ?? `result ${m.id}`);
    assert.deepEqual(methods, ['notifications/message', 'notifications/message', 'result 12']);
    assert.equal(answer.messages[0].params.data.message, 'Created project "Lazy SSE project"');
    assert.equal(answer.messages[2].result.isError, undefined);
  });

  test('a session that asks for debug logs gets every call as a stream (each reports its time)', async () => {
    const debugSession = await rawInitialize(server.url);
    const setLevel = await rawMcp(
      server.url,
      { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } },
      { sessionId: debugSession },
    );
    assert.equal(setLevel.headers.get('content-type'), 'application/json');
    assert.deepEqual(setLevel.json, { jsonrpc: '2.0', id: 2, result: {} });
    const answer = await rawMcp(server.url, call(3, 'devstream_list_tasks'), { sessionId: debugSession });
    assert.equal(answer.headers.get('content-type'), 'text/event-stream');
    assert.match(answer.messages[0].params.data.message, /^devstream_list_tasks took [\d.]+ ms$/);
    assert.equal(answer.messages.at(-1).id, 3);
  });

  test('a batch is answered with the array of its responses', async () => {
    const answer = await rawMcp(
      server.url,
      [
        { jsonrpc: '2.0', id: 21, method: 'ping' },
        { jsonrpc: '2.0', id: 22, method: 'tools/list' },
      ],
      { sessionId },
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    assert.ok(Array.isArray(answer.json), answer.text.slice(0, 200));
    assert.deepEqual(answer.json.map((m: any) => m.id).sort(), [21, 22]);
    assert.ok(answer.json.find((m: any) => m.id === 22).result.tools.length > 0);
  });

  test("a session's GET stream answers at once, before it has anything to send", async () => {
    const controller = new AbortController();
    const started = performance.now();
    // The first keep-alive comes after 15 s: until the status and headers are flushed, fetch waits.
    const timer = setTimeout(() => controller.abort(), 5_000);
    const stream = await fetch(`${server.url}/mcp`, {
      headers: { accept: 'text/event-stream', ...sessionHeaders(sessionId) },
      signal: controller.signal,
    });
    clearTimeout(timer);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    assert.ok(performance.now() - started < 5_000);
    controller.abort();
  });

  test('an error is a JSON answer too, and notifications alone get 202', async () => {
    const unknown = await rawMcp(server.url, call(31, 'no_such_tool'), { sessionId });
    assert.equal(unknown.headers.get('content-type'), 'application/json');
    assert.equal(unknown.json.id, 31);
    assert.match(unknown.json.error.message, /Unknown tool: no_such_tool/);
    const note = await rawMcp(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
    assert.equal(note.status, 202);
  });
});

/** The transport alone, on a server of its own: a slow tool, a chatty one, a quiet one. */
describe('2025-era calls in flight when their session ends', () => {
  let server: TestServer;
  let fake: FakeOllama;
  before(async () => {
    fake = await new FakeOllama().start();
    server = await startServer(database, {
      embedding: { provider: 'ollama', ollamaHost: fake.url, model: 'nomic-embed-text', timeoutMs: 5_000 },
      sessionIdleMs: 300,
    });
  });
  after(async () => {
    await server?.close();
    await fake?.stop();
  });

  test('a search under way when the client ends its session is answered with an error, not left hanging', async (t) => {
    const sessionId = await rawInitialize(server.url);
    // The query's embedding takes this long: the search is under way when the session ends.
    fake.delayMs = 1_500;
    t.after(() => (fake.delayMs = 0));
    const searching = rawMcp(server.url, call(21, 'devstream_search_memory', { query: 'session end' }), { sessionId });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ended = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: sessionHeaders(sessionId) });
    assert.equal(ended.status, 200);
    const answer = await searching;
    assert.equal(answer.status, 200);
    assert.equal(answer.json.id, 21);
    assert.equal(answer.json.error.code, -32000);
    assert.match(answer.json.error.message, /^Connection closed: the session ended before this call was answered/);
  });

  test('a call that outlasts the idle limit keeps its session: its result, then the next call', async (t) => {
    const sessionId = await rawInitialize(server.url);
    fake.delayMs = 1_000; // past the 300 ms idle limit
    t.after(() => (fake.delayMs = 0));
    const answer = await rawMcp(server.url, call(22, 'devstream_search_memory', { query: 'long call' }), { sessionId });
    assert.equal(answer.json.id, 22);
    assert.equal(answer.json.error, undefined, JSON.stringify(answer.json));
    assert.equal(answer.json.result.isError, undefined);
    fake.delayMs = 0;
    const next = await rawMcp(server.url, call(23, 'devstream_list_tasks'), { sessionId });
    assert.equal(next.status, 200);
    assert.equal(next.json.result.isError, undefined);
  });
});

describe('2025-era answers of the transport: keep-alives, disconnects', () => {
  let http: HttpServer;
  let url: string;
  let transport: LegacyTransport;
  let sessionId: string;
  const slowMs = 120;
  before(async () => {
    transport = new LegacyTransport({ sessionIdGenerator: () => 'session-1', keepAliveMs: 25 });
    const mcp = new Server({ name: 'lazy', version: '1' }, { capabilities: { tools: {}, logging: {} } });
    mcp.setRequestHandler('tools/list', async () => ({ tools: [] }));
    mcp.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      if (name === 'slow') await new Promise((resolve) => setTimeout(resolve, slowMs));
      if (name === 'chatty')
        for (const n of [1, 2])
          await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: `step ${n}` } });
      return { content: [{ type: 'text', text: `${name} done` }] };
    });
    await mcp.connect(transport);
    http = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => void transport.serve(req, res, body ? JSON.parse(body) : undefined));
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    sessionId = await rawInitialize(url);
  });
  after(async () => {
    await transport?.close();
    await new Promise((resolve) => http?.close(resolve));
  });

  test('quiet: JSON; chatty: a stream with each message in order', async () => {
    const quiet = await rawMcp(url, call(1, 'quiet'), { sessionId });
    assert.equal(quiet.headers.get('content-type'), 'application/json');
    assert.equal(quiet.json.result.content[0].text, 'quiet done');
    const chatty = await rawMcp(url, call(2, 'chatty'), { sessionId });
    assert.equal(chatty.headers.get('content-type'), 'text/event-stream');
    assert.deepEqual(
      chatty.messages.map((m) => m.params?.data ?? m.result.content[0].text),
      ['step 1', 'step 2', 'chatty done'],
    );
  });

  test('a call that outlasts the keep-alive interval is a stream: the keep-alive, then the result', async () => {
    const slow = await rawMcp(url, call(3, 'slow'), { sessionId });
    assert.equal(slow.headers.get('content-type'), 'text/event-stream');
    assert.match(slow.text, /^: keepalive\n\n/);
    assert.equal(slow.messages.at(-1).result.content[0].text, 'slow done');
  });

  test("a Host that is no URL's (a port past 65535) is answered all the same", async () => {
    const answer = await rawRequest(url, {
      method: 'POST',
      path: '/mcp',
      headers: {
        host: `127.0.0.1:99999`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...sessionHeaders(sessionId),
      },
      body: JSON.stringify(call(6, 'quiet')),
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.id, 6);
  });

  test('closing the transport answers each call under way with an error: JSON, a batch, a stream', async () => {
    const closing = new LegacyTransport({ sessionIdGenerator: () => 'session-2' });
    const mcp = new Server({ name: 'closing', version: '1' }, { capabilities: { tools: {}, logging: {} } });
    mcp.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      if (name === 'chatty-slow')
        await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: 'begun' } });
      if (name !== 'quiet') await new Promise((resolve) => setTimeout(resolve, 2_000));
      return { content: [{ type: 'text', text: `${name} done` }] };
    });
    await mcp.connect(closing);
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => void closing.serve(req, res, body ? JSON.parse(body) : undefined));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const session = await rawInitialize(at);
      const single = rawMcp(at, call(31, 'slow'), { sessionId: session });
      const batch = rawMcp(at, [call(32, 'quiet'), call(33, 'slow')], { sessionId: session });
      const streamed = rawMcp(at, call(34, 'chatty-slow'), { sessionId: session });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await closing.close('the test closed it');
      const closedError = (id: number) => ({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32000,
          message: 'Connection closed: the test closed it before this call was answered; it may have taken effect',
        },
      });
      const one = await single;
      assert.equal(one.headers.get('content-type'), 'application/json');
      assert.deepEqual(one.json, closedError(31));
      const both = await batch;
      assert.equal(both.headers.get('content-type'), 'application/json');
      assert.deepEqual(
        both.json.map((m: { id: number }) => m.id),
        [32, 33],
      );
      assert.equal(both.json[0].result.content[0].text, 'quiet done');
      assert.deepEqual(both.json[1], closedError(33));
      const stream = await streamed;
      assert.equal(stream.headers.get('content-type'), 'text/event-stream');
      assert.deepEqual(stream.messages, [
        { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'begun' } },
        closedError(34),
      ]);
    } finally {
      await closing.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a client that goes away mid-call leaves the session working', async () => {
    const controller = new AbortController();
    const gone = fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify(call(4, 'slow')),
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 10);
    await assert.rejects(gone, { name: 'AbortError' });
    await new Promise((resolve) => setTimeout(resolve, slowMs + 30));
    const next = await rawMcp(url, call(5, 'quiet'), { sessionId });
    assert.equal(next.headers.get('content-type'), 'application/json');
    assert.equal(next.json.id, 5);
  });
});
