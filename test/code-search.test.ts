/**
 * Code search ranks (issue 21): what find_symbols and resolve_context answer for questions in
 * words, over the real service and both backends. Each test pins one behaviour the issue names:
 * a container does not answer a "how does X work" question that one of its methods answers;
 * question words never select candidates; storage order never changes a ranking; an identifier
 * inside prose is found by its name; a caller question is answered by the caller.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

interface FixtureNode {
  id: string;
  type: string;
  startLine: number;
  endLine: number;
  rawCode: string;
  technicalSummary?: string;
}

/** A small library: a long cache class with its methods, a parser, helpers, a test and a docs-site copy. */
const NODES: FixtureNode[] = [
  {
    id: 'src/cache.ts::cache.ts',
    type: 'FILE',
    startLine: 1,
    endLine: 320,
    rawCode: 'import { clock } from "./clock"\nexport class Cache { /* entries, eviction of expired entries */ }',
  },
  {
    id: 'src/cache.ts::Cache',
    type: 'CLASS',
    startLine: 10,
    endLine: 300,
    rawCode: [
      'export class Cache {',
      '  entries = new Map()',
      '  // expired entries are evicted on every read; the least recently used entry goes when full',
      '  get(key) { this.evictExpired(); return this.entries.get(key) }',
      '  set(key, value, ttl) { this.entries.set(key, { value, expires: clock() + ttl }); this.evictLeastRecentlyUsed() }',
      '  evictExpired() { for (const [key, entry] of this.entries) if (entry.expires < clock()) this.entries.delete(key) }',
      '  evictLeastRecentlyUsed() { while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value) }',
      ...Array.from({ length: 280 }, (_, i) => `  // line ${i}`),
      '}',
    ].join('\n'),
  },
  {
    id: 'src/cache.ts::Cache.evictExpired',
    type: 'METHOD',
    startLine: 40,
    endLine: 52,
    rawCode:
      'evictExpired() {\n  // drop every entry whose expiry time has passed\n  for (const [key, entry] of this.entries) if (entry.expires < clock()) this.entries.delete(key)\n}',
  },
  {
    id: 'src/cache.ts::Cache.get',
    type: 'METHOD',
    startLine: 20,
    endLine: 24,
    rawCode: 'get(key) {\n  this.evictExpired()\n  return this.entries.get(key)?.value\n}',
  },
  {
    id: 'src/parser.ts::readTokens',
    type: 'FUNCTION',
    startLine: 1,
    endLine: 30,
    rawCode:
      'export function readTokens(source) {\n  const tokens = []\n  // split the source into tokens\n  return tokens\n}',
  },
  {
    id: 'src/parser.ts::parseValueBinaryOperation',
    type: 'FUNCTION',
    startLine: 32,
    endLine: 50,
    rawCode: 'export function parseValueBinaryOperation(left, op, right) {\n  return { left, op, right }\n}',
  },
  {
    id: 'src/words.ts::whereDoesItWork',
    type: 'FUNCTION',
    startLine: 1,
    endLine: 12,
    rawCode:
      'export function whereDoesItWork() {\n  // where does it work, how does it work, what does it do, which one is used\n  return "where how what which does do is used"\n}',
  },
  {
    id: 'src/quoting.ts::sanitizeIdentifier',
    type: 'FUNCTION',
    startLine: 1,
    endLine: 4,
    rawCode: "export function sanitizeIdentifier(identifier) {\n  return identifier.replaceAll('\"', '\"\"')\n}",
  },
  {
    id: 'src/quoting.ts::escapeLiteral',
    type: 'FUNCTION',
    startLine: 6,
    endLine: 9,
    rawCode: 'export function escapeLiteral(literal) {\n  return literal.replaceAll("\'", "\'\'")\n}',
  },
  {
    id: 'src/sweeper.ts::sweepCache',
    type: 'FUNCTION',
    startLine: 1,
    endLine: 10,
    rawCode: 'export function sweepCache(cache) {\n  setInterval(() => cache.evictExpired(), 1000)\n}',
  },
  {
    id: 'test/cache.test.ts::evicts expired entries',
    type: 'TEST',
    startLine: 1,
    endLine: 20,
    rawCode: 'test("evicts expired entries", () => { const cache = new Cache(); cache.evictExpired() })',
  },
  {
    id: 'site/docs/cache.tsx::CacheEvictionExample',
    type: 'COMPONENT',
    startLine: 1,
    endLine: 20,
    rawCode:
      'export function CacheEvictionExample() { return <p>How the cache evicts expired entries: evictExpired()</p> }',
  },
];

const EDGES = [
  { from: 'src/cache.ts::Cache.get', to: 'src/cache.ts::Cache.evictExpired', type: 'CALLS' },
  { from: 'src/sweeper.ts::sweepCache', to: 'src/cache.ts::Cache.evictExpired', type: 'CALLS' },
  { from: 'test/cache.test.ts::evicts expired entries', to: 'src/cache.ts::Cache.evictExpired', type: 'CALLS' },
];

const commitFile = (nodes: FixtureNode[], commitHash: string) => ({
  commitHash,
  nodes: nodes.map((n) => ({
    ...n,
    name: n.id.split('::')[1],
    filePath: n.id.split('::')[0],
    metadata: {},
  })),
  edges: EDGES,
});

const QUESTIONS = [
  'how does the cache evict expired entries',
  'where are expired entries dropped',
  'what calls the code that evicts expired entries',
  'where does the parser read tokens from the source',
  'how is parseValueBinaryOperation built',
  'which class holds the entries',
  'where are identifiers escaped',
];

for (const backend of backends) {
  describe(`code search ranks (${backend.name}; issue 21)`, () => {
    let database: TestDb;
    let server: TestServer;
    const tool = async (name: string, args: Record<string, unknown>) => {
      const res = await rest(server.url, 'POST', `/api/v1/tools/${name}`, args);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };
    const symbols = async (query: string, repo: string) =>
      ((await tool('find_symbols', { query, repo, limit: 25 })).symbols as Array<{ nodeId: string }>).map(
        (s) => s.nodeId,
      );
    /** The packet's ANSWER node and all its nodes, in rank order. */
    const packet = async (task: string, repo: string, intent = 'flow') => {
      const text: string = (await tool('resolve_context', { task, intent, repo })).packet;
      const idmap = new Map(
        text
          .split('\n')
          .find((l) => l.startsWith('IDMAP '))!
          .slice(6)
          .split(' ')
          .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as [string, string]),
      );
      const answer = /^ANSWER (\d+)$/m.exec(text)?.[1];
      return { text, answer: answer ? idmap.get(`N${answer}`) : undefined, nodes: [...idmap.values()] };
    };

    before(async () => {
      database = await backend.open();
      server = await startServer(database);
      for (const [repo, nodes] of [
        ['search-lib', NODES],
        ['search-lib-reversed', [...NODES].reverse()],
      ] as const) {
        const res = await rest(server.url, 'POST', `/api/v1/graphs?repo=${repo}`, commitFile(nodes, 'c0de5ea4c4'));
        assert.equal(res.status, 201, JSON.stringify(res.body));
      }
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    test('a container never answers a "how does X work" question when one of its methods matches', async () => {
      const how = await packet('how does the cache evict expired entries', 'search-lib');
      assert.equal(how.answer, 'src/cache.ts::Cache.evictExpired', how.text);
      assert.ok(how.nodes.includes('src/cache.ts::Cache'), 'the class is still in the packet');
      const symbolsOf = await symbols('how does the cache evict expired entries', 'search-lib');
      assert.ok(
        symbolsOf.indexOf('src/cache.ts::Cache.evictExpired') < symbolsOf.indexOf('src/cache.ts::Cache'),
        symbolsOf.join(', '),
      );
      // Tests and the documentation site rank below the library's own code.
      assert.ok(
        symbolsOf.indexOf('src/cache.ts::Cache.evictExpired') <
          symbolsOf.indexOf('test/cache.test.ts::evicts expired entries'),
      );
      assert.ok(
        symbolsOf.indexOf('src/cache.ts::Cache.evictExpired') <
          symbolsOf.indexOf('site/docs/cache.tsx::CacheEvictionExample'),
      );
      // A question about the container itself is answered by it.
      assert.equal(
        (await packet('which class holds the entries', 'search-lib', 'pinpoint')).answer,
        'src/cache.ts::Cache',
      );
    });

    test('question words never select candidates: a node made of them is not found by a question', async () => {
      const found = await symbols('where does the parser read tokens from the source', 'search-lib');
      assert.equal(found[0], 'src/parser.ts::readTokens', found.join(', '));
      assert.ok(!found.includes('src/words.ts::whereDoesItWork'), found.join(', '));
      const { nodes } = await packet('where does the parser read tokens from the source', 'search-lib', 'pinpoint');
      assert.ok(!nodes.includes('src/words.ts::whereDoesItWork'), nodes.join(', '));
      // Asked for by its own name, it is found.
      assert.equal((await symbols('whereDoesItWork', 'search-lib'))[0], 'src/words.ts::whereDoesItWork');
    });

    test('storage order never changes a ranking: the same graph uploaded in reverse ranks the same', async () => {
      for (const question of QUESTIONS) {
        assert.deepEqual(
          await symbols(question, 'search-lib-reversed'),
          await symbols(question, 'search-lib'),
          `find_symbols "${question}"`,
        );
        const forward = await packet(question, 'search-lib');
        const reversed = await packet(question, 'search-lib-reversed');
        assert.deepEqual(reversed.nodes, forward.nodes, `resolve_context "${question}"`);
      }
    });

    test('an identifier inside a question is found by its exact name; a caller question is answered by the caller', async () => {
      const named = await packet('how is parseValueBinaryOperation built', 'search-lib', 'pinpoint');
      assert.equal(named.answer, 'src/parser.ts::parseValueBinaryOperation', named.text);
      assert.match(named.text, /^CONFIDENCE exact match for "parseValueBinaryOperation"/m);

      const callers = await packet('what calls the code that evicts expired entries', 'search-lib', 'reference-list');
      assert.ok(['src/sweeper.ts::sweepCache', 'src/cache.ts::Cache.get'].includes(callers.answer ?? ''), callers.text);
      assert.ok(callers.nodes.includes('src/cache.ts::Cache.evictExpired'), 'what is called is in the packet');
    });

    test('a question in words code spells otherwise finds the code: "escaped" also searches for sanitize, below the word itself', async () => {
      const identifiers = await packet('where are identifiers escaped', 'search-lib', 'pinpoint');
      assert.equal(identifiers.answer, 'src/quoting.ts::sanitizeIdentifier', identifiers.text);
      const literals = await symbols('where are literals escaped', 'search-lib');
      assert.equal(literals[0], 'src/quoting.ts::escapeLiteral', literals.join(', '));
      // The node holding the question's own word ranks above one holding only a synonym of it.
      const escaped = await symbols('where are values escaped', 'search-lib');
      assert.ok(
        escaped.indexOf('src/quoting.ts::escapeLiteral') < escaped.indexOf('src/quoting.ts::sanitizeIdentifier'),
        escaped.join(', '),
      );
    });

    test('a concept question answers with the class whose methods its best hits are; one that asks for a function, with the method', async () => {
      const concept = await packet(
        'what is the object that drops entries past their expiry time and returns the value for a key',
        'search-lib',
        'concept',
      );
      assert.equal(concept.answer, 'src/cache.ts::Cache', concept.text);
      const fn = await packet(
        'what is the function that drops entries past their expiry time and returns the value for a key',
        'search-lib',
        'concept',
      );
      assert.notEqual(fn.answer, 'src/cache.ts::Cache', fn.text);
    });

    test('a focus entry that names nothing is reported, not dropped silently', async () => {
      const res = await tool('resolve_context', {
        task: 'evict expired entries',
        intent: 'pinpoint',
        repo: 'search-lib',
        focus: ['src/nowhere.ts::ghostFunction'],
      });
      assert.match(res.packet, /^CONFIDENCE .*focus not in the graph: "src\/nowhere\.ts::ghostFunction"/m);
    });
  });
}
