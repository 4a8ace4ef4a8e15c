import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../src/config.js';
import { operations, tools } from '../src/operations/index.js';
import type { Scope } from '../src/auth/scopes.js';
import { TOOL_PROFILES } from '../src/mcp/server.js';
import { backends, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { createKey } from './helpers/keys.js';
import { rawInitialize, sessionHeaders } from './helpers/mcp-raw.js';
import { rowCounts } from './helpers/rows.js';
import { connectMcp, rest, startServer, type TestServer, MCP_HEADERS } from './helpers/server.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghijklmnop';

/** A value every path parameter accepts (a 12-hex id is also a valid graph id and key name). */
const PARAM = '0123456789ab';

interface Call {
  label: string;
  method: string;
  path: string;
  body?: unknown;
  /** The scope the call needs. */
  scope: Scope;
}

/** Every REST route and tool mirror of the registry, plus the graph upload: the whole API surface. */
const calls: Call[] = [
  ...operations.flatMap((op) =>
    op.routes.map((route) => ({
      label: `${route.method} ${route.path}`,
      method: route.method,
      path: `/api/v1${route.path.replace(/:\w+/g, PARAM)}`,
      ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
      scope: op.scope,
    })),
  ),
  ...tools.map((op) => ({
    label: `tool ${op.name}`,
    method: 'POST',
    path: `/api/v1/tools/${op.name}`,
    body: {},
    scope: op.scope,
  })),
  { label: 'POST /api/v1/graphs', method: 'POST', path: '/api/v1/graphs', body: {}, scope: 'write' },
];

/** Opens an MCP session with raw HTTP (as `token`, when given); returns its id. */
const openSession = (url: string, token?: string) =>
  rawInitialize(url, { headers: token ? bearer(token) : {}, initialized: false });

const pingSession = (url: string, sessionId: string, token?: string) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      ...MCP_HEADERS,
      ...sessionHeaders(sessionId),
      ...(token ? bearer(token) : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
  });

for (const backend of backends) {
  describe(`API keys and scopes (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    const tokens: Record<string, string> = {};

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
      for (const [name, scopes] of [
        ['reader', ['read']],
        ['writer', ['read', 'write']],
        ['keeper', ['admin']],
        ['revoked', ['read', 'write', 'admin']],
      ] as const) {
        const created = await rest(server.url, 'POST', '/api/v1/keys', { name, scopes }, bearer(ADMIN_TOKEN));
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.match(created.body.token, /^dsh_[A-Za-z0-9_-]{43}$/);
        assert.deepEqual(created.body.scopes, scopes);
        tokens[name] = created.body.token;
      }
      const revoked = await rest(server.url, 'DELETE', '/api/v1/keys/revoked', undefined, bearer(tokens.keeper!));
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assert.ok(revoked.body.key.revoked_at);
    });
    after(async () => {
      await server.close();
      await database.dispose();
    });

    test('the database holds only a hash of each token; listing shows no tokens', async () => {
      const { rows } = await sql<{ token_hash: string }>`select token_hash from api_keys`.execute(database.db.kysely);
      assert.equal(rows.length, 4);
      for (const row of rows) assert.match(row.token_hash, /^[0-9a-f]{64}$/);
      const stored = JSON.stringify(rows);
      for (const token of Object.values(tokens)) assert.ok(!stored.includes(token));
      const listed = await rest(server.url, 'GET', '/api/v1/keys', undefined, bearer(tokens.keeper!));
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body.keys.map((k: { name: string }) => k.name).sort(), ['keeper', 'reader', 'writer']);
      for (const token of Object.values(tokens)) assert.ok(!JSON.stringify(listed.body).includes(token));
      const all = await rest(server.url, 'GET', '/api/v1/keys?include_revoked=true', undefined, bearer(tokens.keeper!));
      assert.equal(all.body.keys.length, 4);
    });

    test('GET /api/v1/me names the key and its scopes (what the dashboard adapts to)', async () => {
      const reader = await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(tokens.reader!));
      assert.equal(reader.status, 200, JSON.stringify(reader.body));
      assert.deepEqual(reader.body, { name: 'reader', scopes: ['read'], projects: null, repos: null });
      assert.deepEqual((await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(tokens.writer!))).body, {
        name: 'writer',
        scopes: ['read', 'write'],
        projects: null,
        repos: null,
      });
      assert.deepEqual((await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(ADMIN_TOKEN))).body, {
        name: 'ADMIN_TOKEN',
        scopes: ['read', 'write', 'admin'],
        projects: null,
        repos: null,
      });
      // An admin-only key may not read, so it is told which scope it lacks.
      const keeper = await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(tokens.keeper!));
      assert.equal(keeper.status, 403);
      assert.equal(keeper.body.error.code, 'FORBIDDEN');
      assert.equal((await rest(server.url, 'GET', '/api/v1/me', undefined, bearer(tokens.revoked!))).status, 401);
    });

    test('key creation: duplicate names → 409, bad names and scopes → 400 naming the field', async () => {
      const dup = await rest(
        server.url,
        'POST',
        '/api/v1/keys',
        { name: 'READER', scopes: ['read'] },
        bearer(ADMIN_TOKEN),
      );
      assert.equal(dup.status, 409);
      assert.equal(dup.body.error.code, 'CONFLICT');
      const revokedName = await rest(
        server.url,
        'POST',
        '/api/v1/keys',
        { name: 'revoked', scopes: ['read'] },
        bearer(ADMIN_TOKEN),
      );
      assert.equal(revokedName.status, 409, 'a revoked key keeps its name');
      for (const [body, field] of [
        [{ name: 'x', scopes: ['root'] }, 'scopes.0'],
        [{ name: 'x', scopes: [] }, 'scopes'],
        [{ name: '../etc', scopes: ['read'] }, 'name'],
        [{ name: 'admin_token', scopes: ['read'] }, 'name'],
        [{ name: 'x', scopes: ['read'], token: 'dsh_mine' }, 'token'],
      ] as const) {
        const response = await rest(server.url, 'POST', '/api/v1/keys', body, bearer(ADMIN_TOKEN));
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal(response.body.error.code, 'VALIDATION_ERROR');
        assert.ok(
          response.body.error.details.issues.some((i: { field: string }) => i.field === field),
          `${JSON.stringify(body)} → ${JSON.stringify(response.body)}`,
        );
      }
    });

    test('no token, a wrong token, a revoked token: 401 with WWW-Authenticate: Bearer on every route, /mcp and /openapi.json', async () => {
      const before_ = await rowCounts(database);
      const credentials: Array<[string, Record<string, string>]> = [
        ['no token', {}],
        ['wrong token', bearer(`dsh_${'x'.repeat(43)}`)],
        ['revoked token', bearer(tokens.revoked!)],
        ['not a bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ];
      const surface = [
        ...calls,
        { label: 'POST /mcp', method: 'POST', path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'ping' } },
        { label: 'GET /openapi.json', method: 'GET', path: '/openapi.json' },
      ];
      for (const [what, headers] of credentials) {
        for (const call of surface) {
          const response = await rest(server.url, call.method, call.path, call.body, headers);
          assert.equal(
            response.status,
            401,
            `${what}: ${call.label} → ${response.status} ${JSON.stringify(response.body)}`,
          );
          assert.equal(response.body.error.code, 'UNAUTHORIZED');
          assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
        }
      }
      assert.deepEqual(await rowCounts(database), before_, 'refused requests wrote nothing');
      for (const path of ['/healthz', '/readyz'])
        assert.equal((await rest(server.url, 'GET', path)).status, 200, `${path} stays open`);
    });

    test('each scope: a key without the scope gets 403 FORBIDDEN and writes nothing; a key with it gets past auth', async () => {
      const holders: Array<[string, Scope[]]> = [
        ['reader', ['read']],
        ['writer', ['read', 'write']],
        ['keeper', ['admin']],
      ];
      const before_ = await rowCounts(database);
      for (const [name, scopes] of holders) {
        for (const call of calls.filter((c) => !scopes.includes(c.scope))) {
          const response = await rest(server.url, call.method, call.path, call.body, bearer(tokens[name]!));
          assert.equal(
            response.status,
            403,
            `${name}: ${call.label} → ${response.status} ${JSON.stringify(response.body)}`,
          );
          assert.equal(response.body.error.code, 'FORBIDDEN');
          assert.match(response.body.error.message, new RegExp(`"${call.scope}" scope`));
        }
      }
      assert.deepEqual(await rowCounts(database), before_, 'forbidden requests wrote nothing');
      for (const [name, scopes] of holders) {
        for (const call of calls.filter((c) => scopes.includes(c.scope))) {
          const response = await rest(server.url, call.method, call.path, call.body, bearer(tokens[name]!));
          assert.ok(
            ![401, 403].includes(response.status) && response.status < 500,
            `${name}: ${call.label} → ${response.status} ${JSON.stringify(response.body)}`,
          );
        }
      }
      // repo's scope depends on the action: analysing a folder queues a write.
      const analyze = await rest(
        server.url,
        'POST',
        '/api/v1/tools/repo',
        { action: 'analyze', path: '/tmp' },
        bearer(tokens.reader!),
      );
      assert.equal(analyze.status, 403);
      const list = await rest(server.url, 'POST', '/api/v1/tools/repo', { action: 'list' }, bearer(tokens.reader!));
      assert.equal(list.status, 200);
    });

    test('rows record the key that wrote them (created_by)', async () => {
      const stored = await rest(
        server.url,
        'POST',
        '/api/v1/memories',
        { content: 'written by the writer key', content_type: 'decision', project: 'auth-test' },
        bearer(tokens.writer!),
      );
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      const got = await rest(
        server.url,
        'GET',
        `/api/v1/memories/${stored.body.memory_id}`,
        undefined,
        bearer(tokens.reader!),
      );
      assert.equal(got.body.memory.created_by, 'writer');
      const task = await rest(
        server.url,
        'POST',
        '/api/v1/tasks',
        {
          title: 'Auth task',
          description: 'made by the admin token',
          task_type: 'coding',
          priority: 5,
          phase_name: 'P',
          project: 'auth-test',
        },
        bearer(ADMIN_TOKEN),
      );
      assert.equal(task.status, 201, JSON.stringify(task.body));
      assert.equal(task.body.task.created_by, 'ADMIN_TOKEN');
    });

    test('MCP: tools/list shows a key only the tools it may call; a write tool with a read key is a FORBIDDEN tool error', async () => {
      const reader = await connectMcp(server.url, '/mcp', bearer(tokens.reader!));
      const writer = await connectMcp(server.url, '/mcp', bearer(tokens.writer!));
      try {
        const readerTools = (await reader.client.listTools()).tools.map((t) => t.name).sort();
        const writerTools = (await writer.client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(
          readerTools,
          tools
            .filter((op) => op.scope === 'read')
            .map((op) => op.name)
            .sort(),
        );
        assert.deepEqual(writerTools, tools.map((op) => op.name).sort());
        assert.ok(!readerTools.includes('devstream_store_memory') && readerTools.includes('devstream_search_memory'));
        const refused = await reader.client.callTool({
          name: 'devstream_store_memory',
          arguments: { content: 'x', content_type: 'context' },
        });
        assert.equal(refused.isError, true);
        assert.match(
          (refused.content as Array<{ text: string }>)[0]!.text,
          /FORBIDDEN: devstream_store_memory needs the "write" scope/,
        );
        const analyze = await reader.client.callTool({ name: 'repo', arguments: { action: 'analyze', path: '/tmp' } });
        assert.equal(analyze.isError, true);
        assert.match((analyze.content as Array<{ text: string }>)[0]!.text, /FORBIDDEN/);
        const searched = await reader.client.callTool({
          name: 'devstream_search_memory',
          arguments: { query: 'writer key' },
        });
        assert.equal(searched.isError, undefined);
      } finally {
        await reader.client.close();
        await writer.client.close();
      }
    });

    test('a session is bound to its key: another key gets 404, no key 401, the owner carries on', async () => {
      const sessionId = await openSession(server.url, tokens.writer!);
      assert.equal((await pingSession(server.url, sessionId, tokens.reader!)).status, 404);
      assert.equal((await pingSession(server.url, sessionId, ADMIN_TOKEN)).status, 404);
      assert.equal((await pingSession(server.url, sessionId)).status, 401);
      const stream = await fetch(`${server.url}/mcp`, {
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, ...bearer(tokens.reader!) },
      });
      assert.equal(stream.status, 404);
      await stream.text();
      const del = await fetch(`${server.url}/mcp`, {
        method: 'DELETE',
        headers: { 'mcp-session-id': sessionId, ...bearer(tokens.reader!) },
      });
      assert.equal(del.status, 404, 'another key cannot end the session');
      const own = await pingSession(server.url, sessionId, tokens.writer!);
      assert.equal(own.status, 200);
      await own.text();
    });

    test('revoking a key refuses it at once, open sessions included', async () => {
      const created = await rest(
        server.url,
        'POST',
        '/api/v1/keys',
        { name: 'shortlived', scopes: ['read'] },
        bearer(ADMIN_TOKEN),
      );
      const token = created.body.token as string;
      const sessionId = await openSession(server.url, token);
      assert.equal((await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(token))).status, 200);
      assert.equal(
        (await rest(server.url, 'DELETE', '/api/v1/keys/ShortLived', undefined, bearer(ADMIN_TOKEN))).status,
        200,
      );
      assert.equal((await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(token))).status, 401);
      assert.equal((await pingSession(server.url, sessionId, token)).status, 401);
      assert.equal(
        (await rest(server.url, 'DELETE', '/api/v1/keys/shortlived', undefined, bearer(ADMIN_TOKEN))).status,
        404,
        'already revoked',
      );
    });

    test("a key's default tool profile: core keys see the core tools in both eras unless ?tools= says otherwise; list shows it; a bad one is 400 naming profile", async () => {
      const created = await rest(
        server.url,
        'POST',
        '/api/v1/keys',
        { name: 'core-agent', scopes: ['read', 'write'], profile: 'core' },
        bearer(ADMIN_TOKEN),
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.profile, 'core');
      const token = created.body.token as string;
      const listed = await rest(server.url, 'GET', '/api/v1/keys', undefined, bearer(ADMIN_TOKEN));
      const profiles = Object.fromEntries(listed.body.keys.map((k: any) => [k.name, k.profile]));
      assert.equal(profiles['core-agent'], 'core');
      assert.equal(profiles.writer, null, 'a key made without one has none (all)');

      const core = [...TOOL_PROFILES.core].sort();
      const every = tools.map((op) => op.name).sort();
      const names = async (path: string, key: string, era: 'legacy' | 'modern') => {
        const { client } = await connectMcp(server.url, path, bearer(key), { era });
        try {
          return (await client.listTools()).tools.map((t) => t.name).sort();
        } finally {
          await client.close();
        }
      };
      for (const era of ['legacy', 'modern'] as const) {
        assert.deepEqual(await names('/mcp', token, era), core, `${era}: the key's default`);
        assert.deepEqual(await names('/mcp?tools=all', token, era), every, `${era}: ?tools=all wins`);
        assert.deepEqual(await names('/mcp', tokens.writer!, era), every, `${era}: no default, no ?tools=: all`);
        assert.deepEqual(await names('/mcp?tools=core', tokens.writer!, era), core, `${era}: ?tools=core`);
        const { client } = await connectMcp(server.url, '/mcp', bearer(token), { era });
        try {
          await assert.rejects(
            client.callTool({ name: 'devstream_create_task', arguments: {} }),
            /not in the core profile/,
            era,
          );
        } finally {
          await client.close();
        }
      }

      // A stateless server (MCP_STATELESS=1) answers each legacy POST with the key's default too.
      const stateless = await startServer(database, {
        auth: { mode: 'required', adminToken: ADMIN_TOKEN },
        mcpStateless: true,
      });
      try {
        const { client } = await connectMcp(stateless.url, '/mcp', bearer(token));
        try {
          assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), core, 'stateless');
        } finally {
          await client.close();
        }
      } finally {
        await stateless.close();
      }

      for (const profile of ['most', '', null, 3]) {
        const body = { name: 'odd-agent', scopes: ['read'], profile };
        const refused = await rest(server.url, 'POST', '/api/v1/keys', body, bearer(ADMIN_TOKEN));
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.error.code, 'VALIDATION_ERROR');
        assert.ok(
          refused.body.error.details.issues.some((i: { field: string }) => i.field === 'profile'),
          JSON.stringify(refused.body),
        );
      }
    });
  });
}

describe('rate limits, size limits and session limits', () => {
  const backend = backends[0]!;
  let database: TestDb;
  before(async () => {
    database = await backend.open();
  });
  after(async () => {
    await database.dispose();
  });

  test('per key: the request past RATE_LIMIT_MAX gets 429 RATE_LIMITED with Retry-After and x-ratelimit-*; other keys and /healthz carry on; MCP too', async () => {
    const server = await startServer(database, {
      auth: { mode: 'required', adminToken: ADMIN_TOKEN },
      limits: {
        rateLimitMax: 4,
        rateLimitWindowMs: 60_000,
        bodyLimit: 2 * 1024 * 1024,
        requestTimeoutMs: 60_000,
        maxSessions: 10,
        maxSessionsPerKey: 10,
      },
    });
    try {
      const first = await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(ADMIN_TOKEN));
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('x-ratelimit-limit'), '4');
      assert.equal(first.headers.get('x-ratelimit-remaining'), '3');
      const key = await rest(
        server.url,
        'POST',
        '/api/v1/keys',
        { name: 'other', scopes: ['read'] },
        bearer(ADMIN_TOKEN),
      );
      assert.equal(key.status, 201);
      await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(ADMIN_TOKEN));
      await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(ADMIN_TOKEN));
      const limited = await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(ADMIN_TOKEN));
      assert.equal(limited.status, 429);
      assert.equal(limited.body.error.code, 'RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
      const mcp = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...bearer(ADMIN_TOKEN) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(mcp.status, 429, 'MCP requests count too');
      await mcp.text();
      assert.equal(
        (await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(key.body.token))).status,
        200,
        'another key has its own budget',
      );
      for (let i = 0; i < 6; i++) assert.equal((await rest(server.url, 'GET', '/healthz')).status, 200);
      // Guessing tokens is limited by address.
      let last = 0;
      for (let i = 0; i < 5; i++)
        last = (await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(`dsh_guess${i}`))).status;
      assert.equal(last, 429);
    } finally {
      await server.close();
    }
  });

  test('bodies over BODY_LIMIT → 413 PAYLOAD_TOO_LARGE on REST and /mcp, nothing stored', async () => {
    const server = await startServer(database, {
      limits: {
        rateLimitMax: 1000,
        rateLimitWindowMs: 60_000,
        bodyLimit: 4096,
        requestTimeoutMs: 60_000,
        maxSessions: 10,
        maxSessionsPerKey: 10,
      },
    });
    try {
      const before_ = await rowCounts(database);
      const big = await rest(server.url, 'POST', '/api/v1/memories', {
        content: 'x'.repeat(5000),
        content_type: 'context',
      });
      assert.equal(big.status, 413);
      assert.equal(big.body.error.code, 'PAYLOAD_TOO_LARGE');
      const mcp = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5000) } }),
      });
      assert.equal(mcp.status, 413);
      await mcp.text();
      assert.deepEqual(await rowCounts(database), before_);
      const small = await rest(server.url, 'POST', '/api/v1/memories', {
        content: 'x'.repeat(3000),
        content_type: 'context',
      });
      assert.equal(small.status, 201);
    } finally {
      await server.close();
    }
  });

  test('a URL past 16 KB → 431 with the error body; a 5 KB node id in a path is routed; a bad path encoding → 400 naming (path)', async () => {
    const server = await startServer(database);
    try {
      const huge = await rest(server.url, 'GET', `/api/v1/tasks?project=${'x'.repeat(20_000)}`);
      assert.equal(huge.status, 431);
      assert.equal(huge.body.error.code, 'PAYLOAD_TOO_LARGE');
      const longId = await rest(
        server.url,
        'GET',
        `/api/v1/nodes/${encodeURIComponent(`src/${'a'.repeat(1500)}.ts::F`)}`,
      );
      assert.equal(longId.status, 404, JSON.stringify(longId.body));
      assert.equal(longId.body.error.code, 'NOT_FOUND');
      const badPath = await rest(server.url, 'GET', '/api/v1/nodes/%ED%A0%80');
      assert.equal(badPath.status, 400);
      assert.equal(badPath.body.error.details.issues[0].field, '(path)');
      assert.equal((await rest(server.url, 'GET', '/healthz')).status, 200);
    } finally {
      await server.close();
    }
  });

  test('MAX_SESSIONS: opening one more closes the least recently used session', async () => {
    const server = await startServer(database, {
      limits: {
        rateLimitMax: 1000,
        rateLimitWindowMs: 60_000,
        bodyLimit: 1024 * 1024,
        requestTimeoutMs: 60_000,
        maxSessions: 2,
        maxSessionsPerKey: 2,
      },
    });
    try {
      const a = await openSession(server.url);
      const b = await openSession(server.url);
      const touched = await pingSession(server.url, a);
      assert.equal(touched.status, 200);
      await touched.text();
      const c = await openSession(server.url);
      assert.equal((await pingSession(server.url, b)).status, 404, 'b was least recently used');
      for (const id of [a, c]) {
        const response = await pingSession(server.url, id);
        assert.equal(response.status, 200);
        await response.text();
      }
    } finally {
      await server.close();
    }
  });
});

describe('AUTH configuration', () => {
  test('AUTH defaults to off on loopback and required elsewhere; AUTH=off beyond loopback is refused; ADMIN_TOKEN must be long', () => {
    assert.equal(loadConfig({}).auth.mode, 'off');
    assert.equal(loadConfig({ HOST: '::1' }).auth.mode, 'off');
    assert.equal(loadConfig({ HOST: '0.0.0.0' }).auth.mode, 'required');
    assert.equal(loadConfig({ HOST: '127.0.0.1', AUTH: 'required' }).auth.mode, 'required');
    assert.equal(loadConfig({ ALLOWED_HOSTS: 'localhost:7000,127.0.0.1' }).auth.mode, 'off');
    assert.equal(
      loadConfig({ ALLOWED_HOSTS: 'hub.example.com' }).auth.mode,
      'required',
      'a proxy on this machine serves other names',
    );
    assert.throws(
      () => loadConfig({ HOST: '0.0.0.0', AUTH: 'off' }),
      (e: Error) => e instanceof ConfigError && /AUTH: off is refused when HOST \(0\.0\.0\.0\)/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ ADMIN_TOKEN: 'short-secret' }),
      (e: Error) =>
        e instanceof ConfigError &&
        /ADMIN_TOKEN: must be at least 32/.test(e.message) &&
        !e.message.includes('short-secret'),
    );
    const limits = loadConfig({ RATE_LIMIT_WINDOW: '30 seconds', BODY_LIMIT: '512KB' }).limits;
    assert.equal(limits.rateLimitWindowMs, 30_000);
    assert.equal(limits.bodyLimit, 512 * 1024);
    assert.throws(() => loadConfig({ RATE_LIMIT_WINDOW: 'soon' }), /RATE_LIMIT_WINDOW/);
  });
});

describe('logs', () => {
  test('tokens, Authorization headers and memory content never reach the log (debug level included)', async () => {
    const database = await backends[0]!.open();
    const lines: string[] = [];
    const server = await startServer(
      database,
      { logLevel: 'debug', auth: { mode: 'required', adminToken: ADMIN_TOKEN } },
      { logStream: { write: (line: string) => void lines.push(line) } },
    );
    try {
      const token = await createKey(server.url, ADMIN_TOKEN, 'logged', ['read', 'write']);
      const secretNote = 'the staging password is hunter2-correct-horse';
      assert.equal(
        (
          await rest(
            server.url,
            'POST',
            '/api/v1/memories',
            { content: secretNote, content_type: 'context' },
            bearer(token),
          )
        ).status,
        201,
      );
      await rest(server.url, 'POST', '/api/v1/memories/search', { query: 'staging password' }, bearer(token));
      await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer('dsh_wrong-token-should-not-be-logged'));
      const mcp = await connectMcp(server.url, '/mcp', bearer(token));
      await mcp.client.callTool({
        name: 'devstream_store_memory',
        arguments: { content: `${secretNote} (mcp)`, content_type: 'context' },
      });
      await mcp.client.close();
      const log = lines.join('');
      assert.ok(lines.length > 10, 'the log was captured');
      for (const secret of [ADMIN_TOKEN, token, 'dsh_wrong-token-should-not-be-logged', 'hunter2', 'Bearer ']) {
        assert.ok(!log.includes(secret), `the log contains ${secret.slice(0, 12)}…`);
      }
    } finally {
      await server.close();
      await database.dispose();
    }
  });
});
