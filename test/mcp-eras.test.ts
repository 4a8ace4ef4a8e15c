import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { createKey } from './helpers/keys.js';
import { rawMcp } from './helpers/mcp-raw.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';
import type { TestDb } from './helpers/backends.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghijklmnop';
const MODERN = '2026-07-28';

/** A v2 SDK client pinned to the 2026-07-28 era (no initialize, a `_meta` envelope on every request). */
const connectModern = async (url: string, token: string) =>
  (await connectMcp(url, '/mcp', bearer(token), { era: 'modern' })).client;

/** The headers and `_meta` envelope of a raw 2026-07-28 request. */
function modernRequest(method: string, params: Record<string, unknown>, meta: Record<string, unknown> = {}) {
  return {
    body: {
      jsonrpc: '2.0',
      id: 7,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
          ...meta,
        },
      },
    },
    headers: (token: string): Record<string, string> => ({
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      // SEP-2243: the arguments the tools mirror into headers (x-mcp-header), as a 2026 client sends them.
      ...Object.fromEntries(
        ['project', 'repo']
          .filter((p) => typeof (params.arguments as Record<string, unknown> | undefined)?.[p] === 'string')
          .map((p) => [`mcp-param-${p}`, (params.arguments as Record<string, string>)[p]!]),
      ),
    }),
  };
}

const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n');

for (const backend of backends) {
  describe(`MCP in both protocol eras on one /mcp (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    const tokens: Record<string, string> = {};

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
      tokens.reader = await createKey(server.url, ADMIN_TOKEN, 'reader', ['read']);
      tokens.writer = await createKey(server.url, ADMIN_TOKEN, 'writer', ['read', 'write']);
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    it('the same tools in the same order, the same results and the same errors in both eras; modern lists carry ttlMs', async () => {
      for (const key of ['reader', 'writer']) {
        const legacy = (await connectMcp(server.url, '/mcp', { authorization: `Bearer ${tokens[key]}` })).client;
        const modern = await connectModern(server.url, tokens[key]!);
        try {
          assert.equal(modern.getProtocolEra(), 'modern');
          assert.equal(legacy.getProtocolEra(), 'legacy');
          const [a, b] = [await legacy.listTools(), await modern.listTools()];
          assert.deepEqual(
            b.tools.map((t) => t.name),
            a.tools.map((t) => t.name),
            `${key}: the same tools, in the same order`,
          );
          // The same schemas, but for the 2026 era's x-mcp-header on `repo` and `project` (SEP-2243).
          const unmirrored = (tools: typeof b.tools) =>
            JSON.parse(JSON.stringify(tools).replace(/,"x-mcp-header":"(?:Repo|Project)"/g, ''));
          assert.deepEqual(unmirrored(b.tools), a.tools, `${key}: the same schemas`);
          const inputOf = (tools: typeof b.tools, name: string) =>
            tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, Record<string, unknown>>;
          assert.equal(inputOf(b.tools, 'find_symbols').repo!['x-mcp-header'], 'Repo');
          assert.equal(inputOf(b.tools, 'devstream_list_tasks').project!['x-mcp-header'], 'Project');
          assert.equal(inputOf(a.tools, 'find_symbols').repo!['x-mcp-header'], undefined, 'not in the 2025 era');
          assert.equal(
            typeof (b as { ttlMs?: unknown }).ttlMs,
            'number',
            'a modern tools/list says how long it may be kept',
          );
          // The read key is not shown the tools that need write, in either era.
          assert.equal(
            a.tools.some((t) => t.name === 'devstream_create_task'),
            key === 'writer',
          );

          const call = { name: 'devstream_list_tasks', arguments: { project: `eras-${key}` } };
          assert.equal(textOf(await modern.callTool(call)), textOf(await legacy.callTool(call)));
          const invalid = { name: 'devstream_list_tasks', arguments: { status: 'nope' } };
          const [badLegacy, badModern] = [await legacy.callTool(invalid), await modern.callTool(invalid)];
          assert.equal(badModern.isError, true);
          assert.match(textOf(badModern), /VALIDATION_ERROR: status/);
          assert.equal(textOf(badModern), textOf(badLegacy));
        } finally {
          await Promise.all([legacy.close(), modern.close()]);
        }
      }
    });

    it('a modern write is refused to a read key as in the legacy era, and a writer’s lands', async () => {
      const create = {
        name: 'devstream_create_task',
        arguments: {
          title: 'modern task',
          description: 'made in the 2026 era',
          task_type: 'coding',
          priority: 5,
          project: 'eras',
          phase_name: 'Now',
        },
      };
      const { body, headers } = modernRequest('tools/call', create);
      const refused = await rawMcp(server.url, body, { headers: headers(tokens.reader!) });
      assert.equal(refused.status, 200, refused.text);
      assert.equal(refused.json.result.isError, true);
      assert.match(refused.json.result.content[0].text, /FORBIDDEN/);
      assert.equal(refused.headers.get('mcp-session-id'), null, 'no session in the modern era');

      const writer = await connectModern(server.url, tokens.writer!);
      try {
        const made = await writer.callTool(create);
        assert.notEqual(made.isError, true, textOf(made));
      } finally {
        await writer.close();
      }
      const listed = await rest(server.url, 'GET', '/api/v1/tasks?project=eras', undefined, {
        authorization: `Bearer ${tokens.reader}`,
      });
      assert.equal(listed.status, 200);
      assert.ok(JSON.stringify(listed.body).includes('modern task'));
    });

    it('a modern call whose Mcp-Param-Project header disagrees with its arguments (or lacks it) is refused 400 -32020', async () => {
      const call = { name: 'devstream_list_tasks', arguments: { project: 'eras' } };
      const { body, headers } = modernRequest('tools/call', call);
      const right = await rawMcp(server.url, body, { headers: headers(tokens.reader!) });
      assert.equal(right.status, 200, right.text);
      const { 'mcp-param-project': _mirrored, ...without } = headers(tokens.reader!);
      for (const wrong of [{ ...without, 'mcp-param-project': 'other' }, without]) {
        const refused = await rawMcp(server.url, body, { headers: wrong });
        assert.equal(refused.status, 400, refused.text);
        assert.equal(refused.json.error.code, -32020);
      }
      // The SDK client mirrors the argument into the header by itself.
      const client = await connectModern(server.url, tokens.reader!);
      try {
        await client.listTools();
        assert.notEqual((await client.callTool(call)).isError, true);
      } finally {
        await client.close();
      }
    });

    it('server/discover answers with the server’s info, capabilities and instructions', async () => {
      const { body, headers } = modernRequest('server/discover', {});
      const answer = await rawMcp(server.url, body, { headers: headers(tokens.reader!) });
      assert.equal(answer.status, 200, answer.text);
      const result = answer.json.result;
      assert.ok(result.supportedVersions.includes(MODERN));
      assert.ok(result.capabilities.tools);
      assert.match(result.instructions, /DevStream Hub/);
      assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'devstream-hub');
    });

    it('log messages follow the request’s own _meta log level: none without one, debug lines with debug', async () => {
      const call = { name: 'devstream_list_tasks', arguments: { project: 'eras' } };
      const quiet = modernRequest('tools/call', call);
      const silent = await rawMcp(server.url, quiet.body, { headers: quiet.headers(tokens.reader!) });
      assert.equal(silent.status, 200, silent.text);
      assert.ok(!silent.messages.some((m) => m.method === 'notifications/message'), silent.text);
      assert.ok(
        silent.messages.some((m) => m.id === 7 && m.result),
        silent.text,
      );

      const loud = modernRequest('tools/call', call, { 'io.modelcontextprotocol/logLevel': 'debug' });
      const chatty = await rawMcp(server.url, loud.body, { headers: loud.headers(tokens.reader!) });
      assert.equal(chatty.status, 200, chatty.text);
      const notes = chatty.messages.filter((m) => m.method === 'notifications/message');
      assert.ok(
        notes.some((m) => m.params.level === 'debug' && /devstream_list_tasks took/.test(m.params.data.message)),
        chatty.text,
      );
    });

    it('MCP messages are counted by era and method (Mcp-Method in the modern era), unknown methods as other', async () => {
      const bogus = modernRequest('tools/list', {});
      await rawMcp(server.url, bogus.body, { headers: bogus.headers(tokens.reader!) });
      const metrics = await rest(server.url, 'GET', '/metrics', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` });
      assert.equal(metrics.status, 200);
      const count = (era: string, method: string) =>
        Number(
          new RegExp(
            `devstream_mcp_requests_total\\{era="${era}",method="${method.replace('/', '\\/')}"\\} (\\d+)`,
          ).exec(metrics.body)?.[1] ?? 0,
        );
      assert.ok(count('2026-07-28', 'tools/call') >= 3, String(metrics.body.match(/^devstream_mcp_requests.*$/gm)));
      assert.ok(count('2026-07-28', 'tools/list') >= 1);
      assert.ok(count('2026-07-28', 'server/discover') >= 1);
      assert.ok(count('2025', 'initialize') >= 2, 'the legacy clients of the first test');
      assert.ok(count('2025', 'tools/call') >= 4);
      const labels = [...metrics.body.matchAll(/^devstream_mcp_requests_total\{era="[^"]*",method="([^"]*)"\}/gm)].map(
        (m) => m[1],
      );
      assert.ok(labels.length >= 5);
      for (const method of labels) assert.match(method!, /^(?:[a-z]+(?:\/[a-zA-Z]+)*|other)$/);
    });

    it('?tools=core offers the six core tools in both eras; the others are unknown there; a bad profile is 400 naming tools', async () => {
      const core = [
        'devstream_list_tasks',
        'devstream_update_task',
        'devstream_store_memory',
        'devstream_search_memory',
        'resolve_context',
        'find_symbols',
      ];
      for (const era of ['legacy', 'modern'] as const) {
        const { client } = await connectMcp(server.url, '/mcp?tools=core', bearer(tokens.writer!), { era });
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(tools.map((t) => t.name).sort(), [...core].sort(), era);
          const outside = client.callTool({ name: 'devstream_create_task', arguments: {} });
          await assert.rejects(outside, /not in the core profile/, era);
        } finally {
          await client.close();
        }
        // The read key sees the core tools it may call.
        const { client: reader } = await connectMcp(server.url, '/mcp?tools=core', bearer(tokens.reader!), { era });
        try {
          const names = (await reader.listTools()).tools.map((t) => t.name);
          assert.ok(!names.includes('devstream_update_task') && names.includes('find_symbols'), `${era}: ${names}`);
        } finally {
          await reader.close();
        }
      }
      const { body, headers } = modernRequest('tools/list', {});
      const bad = await fetch(`${server.url}/mcp?tools=everything`, {
        method: 'POST',
        headers: {
          ...headers(tokens.reader!),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(body),
      });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /Invalid tools: must be one of all, core/);
    });

    it('a modern request without credentials is refused 401 like any other', async () => {
      const { body, headers } = modernRequest('tools/list', {});
      const { authorization: _dropped, ...anonymous } = headers('');
      const refused = await rawMcp(server.url, body, { headers: anonymous });
      assert.equal(refused.status, 401, refused.text);
    });
  });
}
