import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { ConfigError, loadConfig } from '../src/config.js';
import { backends, type TestDb } from './helpers/backends.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';

/**
 * Issue 21, item 5 — DevLens's packet, whole: the `meta:` segment (DEVLENS_PACKET_META, on), the
 * CODE section (DEVLENS_PACKET_CODE, off, and the `code` argument), DEVLENS_PACKET_ANSWER=0,
 * snippet lines for the task's plain words, and a WHAT line that does not call a graph with
 * summaries "structure only". Over the real service (REST, and MCP once), the toggles set from
 * environment values through loadConfig.
 */

const CLIENT_CODE = [
  'export async function fetchWithRetry(url: string, options?: Options): Promise<Response> {',
  '  const network = createNetwork(options);',
  '  let retryCount = 0;',
  ...Array.from({ length: 56 }, (_, i) => `  step${i}(network, retryCount); // line ${i + 4} of the body`),
  '  return transport.final();',
  '}',
].join('\n');

/** A structure-only graph: TypeScript and Python, no summaries anywhere. */
const plain = {
  commitHash: 'ab12cd34ef',
  analyzedAt: '2026-11-01T00:00:00Z',
  nodes: [
    {
      id: 'src/client.ts::fetchWithRetry',
      name: 'fetchWithRetry',
      type: 'FUNCTION',
      filePath: 'src/client.ts',
      startLine: 10,
      endLine: 70,
      rawCode: CLIENT_CODE,
    },
    {
      id: 'src/util.ts::trimValue',
      name: 'trimValue',
      type: 'FUNCTION',
      filePath: 'src/util.ts',
      startLine: 3,
      endLine: 3,
      rawCode: 'trimValue = (value: string): string => value.trim();',
    },
    {
      id: 'httpx/transport.py::Transport._send',
      name: 'Transport._send',
      type: 'METHOD',
      filePath: 'httpx/transport.py',
      startLine: 40,
      endLine: 42,
      rawCode: '@traced\ndef _send(self, request: Request) -> Response:\n    return self.pool.send(request)',
    },
    {
      id: 'file::src/client.ts',
      name: 'client.ts',
      type: 'FILE',
      filePath: 'src/client.ts',
      startLine: 1,
      endLine: 70,
    },
  ],
  edges: [
    { from: 'src/client.ts::fetchWithRetry', to: 'src/util.ts::trimValue', type: 'CALLS' },
    { from: 'src/client.ts::fetchWithRetry', to: 'httpx/transport.py::Transport._send', type: 'CALLS' },
  ],
};

/** A graph where one node has a summary and the one asked for has none. */
const partly = {
  commitHash: 'fe98dc76ba',
  analyzedAt: '2026-11-01T00:00:00Z',
  nodes: [
    {
      id: 'src/retry.ts::parseRetryAfter',
      name: 'parseRetryAfter',
      type: 'FUNCTION',
      filePath: 'src/retry.ts',
      startLine: 1,
      endLine: 3,
      rawCode: 'export function parseRetryAfter(header: string): number {\n  return Number(header);\n}',
    },
    {
      id: 'src/retry.ts::delayFor',
      name: 'delayFor',
      type: 'FUNCTION',
      filePath: 'src/retry.ts',
      startLine: 5,
      endLine: 7,
      businessSummary: 'Waits longer after each failure.',
      rawCode: 'export function delayFor(attempt: number): number {\n  return 2 ** attempt;\n}',
    },
  ],
  edges: [{ from: 'src/retry.ts::delayFor', to: 'src/retry.ts::parseRetryAfter', type: 'CALLS' }],
};

const NO_SUMMARY_ANYWHERE =
  'WHAT no summary in this graph (structure only): read the code with get_node include=["code"]';
const NO_SUMMARY_HERE =
  'WHAT this node has no summary (other nodes of this graph have one): read the code with get_node include=["code"]';

const lines = (packet: string) => packet.split('\n');
/** The lines of one section: its header line up to the next section's header. */
function section(packet: string, name: string): string[] {
  const all = lines(packet);
  const start = all.findIndex((l) => l.startsWith(`${name} `));
  if (start === -1) return [];
  const end = all.findIndex((l, i) => i > start && /^[A-Z]+ /.test(l));
  return all.slice(start, end === -1 ? undefined : end);
}
const nodeLine = (packet: string, name: string) =>
  lines(packet).find((l) => /^N\d+ /.test(l) && l.split(' ')[1] === name);

for (const backend of backends) {
  describe(`resolve_context packet toggles (${backend.name})`, () => {
    let database: TestDb;
    /** The defaults, and services started with the environment values the toggles are read from. */
    let plainServer: TestServer;
    let noMeta: TestServer;
    let withCode: TestServer;
    let noAnswer: TestServer;
    let client: Client;
    const context = async (server: TestServer, args: Record<string, unknown>) => {
      const r = await rest(server.url, 'POST', '/api/v1/tools/resolve_context', args);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(r.body.approxTokens <= r.body.budget, `${r.body.approxTokens} tokens over ${r.body.budget}`);
      assert.equal(r.body.approxTokens, Math.ceil(r.body.packet.length / 4));
      return r.body as { packet: string; approxTokens: number; budget: number };
    };
    const serveWith = (env: Record<string, string>) => startServer(database, { packet: loadConfig(env).packet });

    before(async () => {
      database = await backend.open();
      plainServer = await serveWith({});
      noMeta = await serveWith({ DEVLENS_PACKET_META: '0' });
      withCode = await serveWith({ DEVLENS_PACKET_CODE: '1' });
      noAnswer = await serveWith({ DEVLENS_PACKET_ANSWER: 'false' });
      client = (await connectMcp(plainServer.url)).client;
      for (const [repo, graph] of [
        ['toggles', plain],
        ['partly', partly],
      ] as const) {
        const up = await rest(plainServer.url, 'POST', `/api/v1/graphs?repo=${repo}`, graph);
        assert.equal(up.status, 201, JSON.stringify(up.body));
      }
    });
    after(async () => {
      await client?.close();
      for (const s of [plainServer, noMeta, withCode, noAnswer]) await s?.close();
      await database?.dispose();
    });

    test('META by default: visibility, kind, parameters and return type on each NODES line, over REST and MCP', async () => {
      const args = { task: 'fetchWithRetry', intent: 'pinpoint', repo: 'toggles' };
      const { packet } = await context(plainServer, args);
      assert.match(
        nodeLine(packet, 'fetchWithRetry')!,
        /^N1 fetchWithRetry function src\/client\.ts:10-70 {2}meta:export async function \(url: string, options\?: Options\) -> Promise<Response>$/,
      );
      assert.match(
        nodeLine(packet, 'Transport._send')!,
        / {2}meta:private def \(self, request: Request\) -> Response$/,
        'Python: a leading underscore is private, `->` the return type, decorators passed over',
      );
      assert.match(nodeLine(packet, 'trimValue')!, / {2}meta:arrow \(value: string\) -> string$/);

      const viaMcp = await client.callTool({ name: 'resolve_context', arguments: args });
      assert.equal(viaMcp.isError, undefined);
      assert.equal((viaMcp.content as Array<{ text: string }>)[0]!.text, packet, 'MCP answers the same packet');
    });

    test('DEVLENS_PACKET_META=0: the same packet without the meta: segments', async () => {
      const args = { task: 'fetchWithRetry', intent: 'pinpoint', repo: 'toggles' };
      const withMeta = (await context(plainServer, args)).packet;
      const without = (await context(noMeta, args)).packet;
      assert.doesNotMatch(without, /meta:/);
      assert.equal(without, withMeta.replace(/ {2}meta:[^\n]*/g, ''));
    });

    test('CODE: off by default, on per call with code: true, cut at a line to fit the budget', async () => {
      const args = { task: 'fetchWithRetry', intent: 'pinpoint', repo: 'toggles' };
      const none = (await context(plainServer, args)).packet;
      assert.deepEqual(section(none, 'CODE'), [], 'no CODE section by default');

      const whole = (await context(plainServer, { ...args, code: true })).packet;
      const code = section(whole, 'CODE');
      assert.equal(code[0], 'CODE 3', 'the three nodes with code (the file node is passed over)');
      assert.equal(code[1], 'N1 src/client.ts:10-70');
      assert.deepEqual(
        code.slice(2, 63),
        CLIENT_CODE.split('\n').map((l) => `  ${l}`),
        'indented by two spaces',
      );
      assert.ok(code.includes('    return transport.final();'), 'the whole body fits the default budget');
      assert.deepEqual(
        lines(whole)
          .filter((l) => /^[A-Z]+ /.test(l))
          .map((l) => l.split(' ')[0])
          .filter((w, i, all) => all.indexOf(w) === i),
        ['GRAPH', 'ANSWER', 'WHAT', 'CONFIDENCE', 'NODES', 'FLOW', 'FILES', 'CODE', 'SEC', 'IDMAP', 'NEXT'],
        'CODE between FILES and SEC',
      );
      assert.equal(
        whole.replace(/\nCODE [^]*?(?=\nSEC )/, ''),
        none,
        'otherwise the packet is the one without code: no node gave way for it',
      );

      const cut = await context(plainServer, { ...args, code: true, tokenBudget: 500 });
      const cutCode = section(cut.packet, 'CODE');
      assert.equal(cutCode[1], 'N1 src/client.ts:10-70');
      assert.match(cutCode.at(-1)!, /^ {2}… \d+ more lines$/, 'the cut body says how much it lost');
      assert.ok(!cutCode.includes('    return transport.final();'));
      assert.ok(cut.approxTokens <= 500);
    });

    test('DEVLENS_PACKET_CODE=1: CODE without the argument; code: false turns it off for the call', async () => {
      const args = { task: 'fetchWithRetry', intent: 'pinpoint', repo: 'toggles' };
      const byEnv = (await context(withCode, args)).packet;
      assert.equal(section(byEnv, 'CODE')[1], 'N1 src/client.ts:10-70');
      assert.equal(byEnv, (await context(plainServer, { ...args, code: true })).packet);
      const off = (await context(withCode, { ...args, code: false })).packet;
      assert.deepEqual(section(off, 'CODE'), []);

      const bad = await rest(withCode.url, 'POST', '/api/v1/tools/resolve_context', { ...args, code: 'yes' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
      assert.match(bad.body.error.message, /code/);
    });

    test('DEVLENS_PACKET_ANSWER=0: no ANSWER, WHAT or CONFIDENCE, the rest unchanged', async () => {
      const args = { task: 'fetchWithRetry', intent: 'pinpoint', repo: 'toggles' };
      const full = (await context(plainServer, args)).packet;
      const bare = (await context(noAnswer, args)).packet;
      assert.doesNotMatch(bare, /^(ANSWER|WHAT|CONFIDENCE) /m);
      assert.equal(
        bare,
        lines(full)
          .filter((l) => !/^(ANSWER|WHAT|CONFIDENCE) /.test(l))
          .join('\n'),
      );
    });

    test("snippets for the task's plain words: stems where a word starts, not inside other words", async () => {
      // "retried" finds fetchWithRetry and retryCount (a camelCase capital, a word's start); "work"
      // is not a word of `network`, which the old substring match took as the first snippet line.
      const { packet } = await context(plainServer, {
        task: 'where is work retried',
        focus: ['src/client.ts::fetchWithRetry'],
        repo: 'toggles',
      });
      const files = section(packet, 'FILES');
      const client = files.indexOf(files.find((l) => l.startsWith('src/client.ts '))!);
      assert.ok(client > 0, packet);
      assert.deepEqual(files.slice(client + 1, client + 3), [
        `  L10: ${CLIENT_CODE.split('\n')[0]}`,
        '  L12: let retryCount = 0;',
      ]);
      assert.doesNotMatch(packet, /L11: const network/);
    });

    test('WHAT: "structure only" only when no node of the graph has a summary; else the node has none', async () => {
      const structureOnly = (await context(plainServer, { task: 'fetchWithRetry', repo: 'toggles' })).packet;
      assert.equal(lines(structureOnly)[3], NO_SUMMARY_ANYWHERE);
      const some = (await context(plainServer, { task: 'parseRetryAfter', intent: 'pinpoint', repo: 'partly' })).packet;
      assert.equal(lines(some)[2], 'ANSWER parseRetryAfter (symbol) — src/retry.ts:1');
      assert.equal(lines(some)[3], NO_SUMMARY_HERE);
      assert.match(some, /\nN\d+ delayFor function .* {2}m:Waits longer after each failure\.\n/);
      const summarised = (await context(plainServer, { task: 'delayFor', intent: 'pinpoint', repo: 'partly' })).packet;
      assert.equal(lines(summarised)[3], 'WHAT Waits longer after each failure.');
    });
  });
}

describe('packet toggles in the configuration', () => {
  test('defaults, accepted values, and a clear error naming the variable', () => {
    assert.deepEqual(loadConfig({}).packet, { meta: true, code: false, answer: true, ranker: 'rrf' });
    assert.deepEqual(
      loadConfig({
        DEVLENS_PACKET_META: 'false',
        DEVLENS_PACKET_CODE: 'true',
        DEVLENS_PACKET_ANSWER: '0',
        DEVLENS_PACKET_RANKER: 'legacy',
      }).packet,
      { meta: false, code: true, answer: false, ranker: 'legacy' },
    );
    assert.throws(
      () => loadConfig({ DEVLENS_PACKET_RANKER: 'bm25', DEVLENS_PACKET_META: 'yes' }),
      (e: unknown) =>
        e instanceof ConfigError &&
        /DEVLENS_PACKET_META: must be 0, 1, true or false \(got "yes"\)/.test(e.message) &&
        /DEVLENS_PACKET_RANKER: must be rrf or legacy \(got "bm25"\)/.test(e.message),
    );
  });
});
