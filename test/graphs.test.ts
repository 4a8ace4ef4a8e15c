import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { fileKind, isTestFile } from '../src/file-kind.js';
import { queryParts } from '../src/domain/graphs/find-symbols.js';
import { identifierWords, nameDocument } from '../src/domain/graphs/search-document.js';
import { backends, type TestDb } from './helpers/backends.js';
import { WREN_COMMIT, wren, wrenNode, wrenText } from './helpers/graph-fixture.js';
import { connectMcp, rest, startServer, withServer, type TestServer } from './helpers/server.js';

/** A small commit file: `n` functions in one file, each calling the next, plus a GHOST call. */
function synthetic(commitHash: string, n = 3, extra: Record<string, unknown> = {}) {
  const nodes = Array.from({ length: n }, (_, i) => ({
    id: `src/chain.ts::step${i}`,
    name: `step${i}`,
    type: 'FUNCTION',
    filePath: 'src/chain.ts',
    startLine: 1 + i * 10,
    endLine: 9 + i * 10,
    rawCode: `/** Runs step ${i} of the chain. */\nfunction step${i}() { return step${i + 1}(); }`,
    score: i,
    metadata: {},
  }));
  const edges = nodes.map((node, i) => ({ from: node.id, to: `src/chain.ts::step${i + 1}`, type: 'CALLS' }));
  return { commitHash, analyzedAt: new Date().toISOString(), nodes, edges, ...extra };
}

describe('identifier words', () => {
  test('camelCase, acronyms, digits, snake_case and dots split into words', () => {
    assert.equal(identifierWords('createUser'), 'create user');
    assert.equal(identifierWords('HTTP2Server'), 'http 2 server');
    assert.equal(identifierWords('get_user.byId'), 'get user by id');
    assert.equal(identifierWords('source/core/Ky.ts'), 'source core ky ts');
    assert.equal(nameDocument('Ky.retryFromError'), 'ky.retryfromerror ky retryfromerror ky retry from error');
    assert.equal(nameDocument('merge'), 'merge');
  });

  test('one stop-word list (issue 20): a strict match does not require the verbs of a question', () => {
    assert.deepEqual(queryParts('how can the retry be used'), ['retry']);
    assert.deepEqual(queryParts('what does mergeHeaders do'), ['merge', 'headers']);
  });
});

for (const backend of backends) {
  describe(`code graph uploads (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;

    before(async () => {
      database = await backend.open();
      server = await startServer(database, {
        graphs: { retention: 2, uploadLimit: 4 * 1024 * 1024, analyzeRoots: [] },
      });
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    const upload = (query: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/api/v1/graphs?${query}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const api = (method: string, path: string) => rest(server.url, method, path);
    const count = async (table: 'graph_nodes' | 'graph_edges' | 'graph_commits', graphId: string) =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from ${sql.table(table)} where graph_id = ${graphId}`.execute(database.db.kysely)
        ).rows[0]!.n,
      );

    test('the wren fixture uploads as JSON: every node (repeated ids too) and edge stored once, listed', async () => {
      const r = await upload('repo=wren&branch=main', wrenText);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.repo, 'wren');
      assert.equal(r.body.commitHash, WREN_COMMIT);
      assert.equal(r.body.nodes, wren.nodes.length);
      assert.equal(r.body.edges, wren.edges.length);
      assert.match(r.body.graphId, /^[0-9a-f]{16}$/);
      assert.ok(!Number.isNaN(Date.parse(r.body.uploadedAt)));
      // 64 nodes and 75 edges: `allNodes` and `allEdges` repeat them in the file and are not stored again.
      assert.equal(await count('graph_nodes', r.body.graphId), 64);
      assert.equal(await count('graph_edges', r.body.graphId), 75);

      const { kysely } = database.db;
      const node = (
        await sql<any>`select * from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'source/core/Client.ts::Client.retryAfterFailure'`.execute(
          kysely,
        )
      ).rows;
      assert.equal(node.length, 1);
      assert.equal(node[0].type, 'METHOD');
      assert.equal(node[0].file_path, 'source/core/Client.ts');
      assert.ok(node[0].code.length > 0, 'rawCode kept');
      const original = wrenNode('source/core/Client.ts::Client.retryAfterFailure');
      assert.equal(node[0].start_line, original.startLine);
      assert.equal(node[0].score, original.score);
      assert.equal(node[0].extra.codeHash, original.codeHash, 'fields we do not model are kept');
      assert.equal(node[0].extra.parentFile, 'file::source/core/Client.ts');
      // The name's parts are searchable words of the node.
      const found = await sql<any>`select node_id from graph_nodes where graph_id = ${r.body.graphId}
                                    and search @@ to_tsquery('simple', 'retry & after & failure')`.execute(kysely);
      assert.ok(found.rows.some((row) => row.node_id === 'source/core/Client.ts::Client.retryAfterFailure'));

      // The getter and the setter of Client.baseUrl share an id: both kept, in file order.
      const copies = await sql<any>`select start_line from graph_nodes where graph_id = ${r.body.graphId}
                                     and node_id = 'source/core/Client.ts::Client.baseUrl' order by seq`.execute(
        kysely,
      );
      assert.deepEqual(
        copies.rows.map((row) => row.start_line),
        [49, 53],
      );
      // DevLens's GHOST node (no file, line 0) and its LISTENS edges, the repeated ones too.
      const ghost =
        await sql<any>`select type, file_path, start_line from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'ghost::event:abort'`.execute(
          kysely,
        );
      assert.deepEqual(ghost.rows, [{ type: 'GHOST', file_path: '', start_line: 0 }]);
      const listens =
        await sql<any>`select to_id, count(*)::int as n from graph_edges where graph_id = ${r.body.graphId} and type = 'LISTENS'
                                      group by to_id order by to_id`.execute(kysely);
      assert.deepEqual(listens.rows, [
        { to_id: 'source/utils/timers.ts::sleep', n: 2 },
        { to_id: 'source/utils/timers.ts::withTimeout', n: 2 },
      ]);
      // TESTS edges to the default export `wren`, a constant the file holds no node for: kept.
      const dangling =
        await sql<any>`select e.from_id from graph_edges e where e.graph_id = ${r.body.graphId} and e.to_id = 'source/index.ts::wren'
                                       and not exists (select 1 from graph_nodes n where n.graph_id = e.graph_id and n.node_id = e.to_id) order by e.from_id`.execute(
          kysely,
        );
      assert.deepEqual(
        dangling.rows.map((row) => row.from_id),
        ['file::test/headers.test.ts', 'file::test/retry.test.ts'],
      );

      const list = await api('GET', '/api/v1/graphs');
      assert.equal(list.status, 200);
      const listed = list.body.graphs.find((g: any) => g.graphId === r.body.graphId);
      assert.deepEqual(
        { ...listed, analyzedAt: undefined, uploadedAt: undefined },
        {
          graphId: r.body.graphId,
          repo: 'wren',
          latestCommit: WREN_COMMIT,
          analyzedAt: undefined,
          uploadedAt: undefined,
          nodes: 64,
          edges: 75,
          commits: 1,
        },
      );
      assert.equal(listed.analyzedAt, new Date(wren.analyzedAt).toISOString());
    });

    test('gzip uploads; the same commit again replaces it (no copies), whatever the repo name case', async () => {
      const r = await upload('repo=WREN', gzipSync(wrenText), { 'content-encoding': 'gzip' });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.repo, 'wren', 'the existing graph, found by name in any case');
      assert.equal(await count('graph_nodes', r.body.graphId), 64);
      assert.equal(await count('graph_commits', r.body.graphId), 1);
    });

    test('repeated node ids are all kept; edges to missing nodes are kept; unknown types kept', async () => {
      const file = synthetic('c0ffee1', 3);
      file.nodes.push({ ...file.nodes[0]!, startLine: 100, endLine: 110 }); // an overload: same id
      (file.nodes as any[]).push({
        id: 'src/x.ts::Thing',
        name: 'Thing',
        type: 'WIDGET',
        filePath: 'src/x.ts',
        startLine: 1,
        endLine: 2,
        flavour: 'odd',
      });
      (file.edges as any[]).push({
        from: 'src/x.ts::Thing',
        to: 'nowhere::ghost',
        type: 'SUMMONS',
        metadata: { why: 'test' },
        weight: 2,
      });
      const r = await upload('repo=synthetic', JSON.stringify(file));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.nodes, 5);
      assert.equal(r.body.edges, 4);
      const { kysely } = database.db;
      const copies =
        await sql<any>`select start_line from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'src/chain.ts::step0' order by seq`.execute(
          kysely,
        );
      assert.deepEqual(
        copies.rows.map((row) => row.start_line),
        [1, 100],
      );
      const odd =
        await sql<any>`select type, extra from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'src/x.ts::Thing'`.execute(
          kysely,
        );
      assert.deepEqual(odd.rows[0], { type: 'WIDGET', extra: { flavour: 'odd' } });
      const edge =
        await sql<any>`select to_id, type, metadata from graph_edges where graph_id = ${r.body.graphId} and type = 'SUMMONS'`.execute(
          kysely,
        );
      assert.deepEqual(edge.rows[0], {
        to_id: 'nowhere::ghost',
        type: 'SUMMONS',
        metadata: { why: 'test', weight: 2 },
      });
    });

    test('retention keeps the newest commits per graph', async () => {
      for (const [i, hash] of ['r1', 'r2', 'r3'].entries()) {
        const file = synthetic(hash, 2, { analyzedAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() });
        const r = await upload('repo=retained', JSON.stringify(file));
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }
      const list = await api('GET', '/api/v1/graphs');
      const g = list.body.graphs.find((x: any) => x.repo === 'retained');
      assert.equal(g.commits, 2);
      assert.equal(g.latestCommit, 'r3');
      const kept =
        await sql<any>`select commit_hash from graph_commits where graph_id = ${g.graphId} order by commit_hash`.execute(
          database.db.kysely,
        );
      assert.deepEqual(
        kept.rows.map((row) => row.commit_hash),
        ['r2', 'r3'],
      );
      assert.equal(await count('graph_nodes', g.graphId), 4, 'the dropped commit took its nodes with it');
    });

    test('invalid uploads answer 400 naming the problem and store nothing', async () => {
      const before = await api('GET', '/api/v1/graphs');
      const cases: Array<[string, string | Buffer, Record<string, string>, RegExp]> = [
        [
          'repo=bad1',
          JSON.stringify({ commitHash: 'x1', analyzedAt: new Date().toISOString(), nodes: [], edges: [] }),
          {},
          /nodes/,
        ],
        ['repo=bad2', JSON.stringify({ commitHash: 'x2', edges: [] }), {}, /nodes/],
        ['repo=bad3', '{"commitHash": "x3", "nodes": [{"id": "a", "type": "FUNCTION"}', {}, /\(body\)/],
        ['repo=bad4', 'not json at all', {}, /\(body\)/],
        ['repo=bad5', JSON.stringify([1, 2]), {}, /\(body\)/],
        [
          'repo=bad6',
          JSON.stringify(
            synthetic('x6', 2, {
              nodes: [
                { id: 'a', name: 'a', type: 'FUNCTION' },
                { name: 'b', type: 'FUNCTION' },
              ],
            }),
          ),
          {},
          /nodes\[1\]\.id/,
        ],
        [
          'repo=bad7',
          JSON.stringify(synthetic('x7', 2, { edges: [{ from: 'a', type: 'CALLS' }] })),
          {},
          /edges\[0\]\.to/,
        ],
        ['repo=bad8', JSON.stringify({ nodes: synthetic('x', 1).nodes }), {}, /commitHash/],
        ['repo=bad9', JSON.stringify(synthetic('x9', 1, { analyzedAt: 'yesterday' })), {}, /analyzedAt/],
        ['repo=bad10', Buffer.from('not gzip'), { 'content-encoding': 'gzip' }, /gzip/],
        ['', JSON.stringify(synthetic('x11')), {}, /repo/],
        ['repo=bad12&graphId=no%20spaces', JSON.stringify(synthetic('x12')), {}, /graphId/],
        [
          'repo=bad13',
          JSON.stringify(synthetic('x13', 2, { nodes: [{ id: 'a', name: 'a', type: 'FUNCTION', startLine: -1 }] })),
          {},
          /nodes\[0\]\.startLine/,
        ],
      ];
      for (const [query, body, headers, field] of cases) {
        const r = await upload(query, body, headers);
        assert.equal(r.status, 400, `${query}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'VALIDATION_ERROR', query);
        assert.match(r.body.error.message, field, query);
      }
      const afterList = await api('GET', '/api/v1/graphs');
      assert.deepEqual(afterList.body, before.body, 'nothing stored by a failed upload');
      const { kysely } = database.db;
      const stray = await sql<any>`select count(*)::int as n from graph_nodes n where not exists
                                   (select 1 from graph_commits c where c.graph_id = n.graph_id and c.commit_hash = n.commit_hash)`.execute(
        kysely,
      );
      assert.equal(stray.rows[0].n, 0);
    });

    test('a failed re-upload keeps the commit as it was', async () => {
      const list = await api('GET', '/api/v1/graphs');
      const g = list.body.graphs.find((x: any) => x.repo === 'wren');
      // The wren commit again, cut off after its nodes and edges (so both were written before the end was
      // missed): rejected, and the stored commit is untouched.
      const cut = wrenText.indexOf('"allNodes"');
      assert.ok(cut > wrenText.indexOf('"edges"'));
      const r = await upload('repo=wren', wrenText.slice(0, cut));
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(r.body.error.message, /\(body\)/);
      assert.equal(await count('graph_nodes', g.graphId), 64);
      assert.equal(await count('graph_edges', g.graphId), 75);
    });

    test('uploads over GRAPH_UPLOAD_LIMIT answer 413, packed or unpacked', async () => {
      // The padding in an element (up to 16 MiB each): a top-level field is refused past 1 MiB before the byte limit.
      const big = JSON.stringify(
        synthetic('big', 1, {
          allEdges: [{ from: 'a', to: 'b', type: 'CALLS', padding: 'x'.repeat(5 * 1024 * 1024) }],
        }),
      );
      const plain = await upload('repo=big', big);
      assert.equal(plain.status, 413, JSON.stringify(plain.body));
      assert.equal(plain.body.error.code, 'PAYLOAD_TOO_LARGE');
      const packed = await upload('repo=big', gzipSync(big), { 'content-encoding': 'gzip' });
      assert.equal(packed.status, 413, JSON.stringify(packed.body));
      const list = await api('GET', '/api/v1/graphs');
      assert.ok(!list.body.graphs.some((x: any) => x.repo === 'big'));
    });

    test('nodeScores scores the nodes without a score of their own, before or after them (read in batches)', async () => {
      // 1,200 nodes: the scores after them are applied in three batches; before them, held until they are stored.
      const nodes = Array.from({ length: 1_200 }, (_, i) => ({
        id: `src/s.ts::s${i}`,
        type: 'FUNCTION',
        ...(i === 0 ? { score: 99 } : {}),
      }));
      const scores = Object.fromEntries([...nodes.map((n, i) => [n.id, i / 10]), ['src/s.ts::absent', 5]]);
      for (const [commit, order] of [
        ['sc1', 'after'],
        ['sc2', 'before'],
      ] as const) {
        const file =
          order === 'after'
            ? { commitHash: commit, nodes, nodeScores: scores }
            : { commitHash: commit, nodeScores: scores, nodes };
        const r = await upload('repo=scored', JSON.stringify(file));
        assert.equal(r.status, 201, JSON.stringify(r.body));
        const rows = (
          await sql<{
            node_id: string;
            score: number;
          }>`select node_id, score from graph_nodes where graph_id = ${r.body.graphId} and commit_hash = ${commit}`.execute(
            database.db.kysely,
          )
        ).rows;
        const byId = new Map(rows.map((row) => [row.node_id, row.score]));
        assert.equal(byId.size, 1_200, order);
        assert.equal(byId.get('src/s.ts::s0'), 99, `${order}: a node's own score wins`);
        assert.equal(byId.get('src/s.ts::s1'), 0.1, order);
        assert.equal(byId.get('src/s.ts::s1199'), 119.9, order);
        assert.ok(
          rows.every((row) => row.score !== null),
          `${order}: every node scored`,
        );
      }
      // More entries than twice the nodes plus 10,000 are refused, naming nodeScores; nothing stored.
      const many = Object.fromEntries(Array.from({ length: 10_003 }, (_, i) => [`x${i}`, 1]));
      const r = await upload(
        'repo=overscored',
        JSON.stringify({ commitHash: 'sc3', nodes: [{ id: 'a', type: 'FUNCTION' }], nodeScores: many }),
      );
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.details.issues[0].field, 'nodeScores');
      assert.ok(!(await api('GET', '/api/v1/graphs')).body.graphs.some((x: any) => x.repo === 'overscored'));
    });

    test('graphId conflicts answer 409; DELETE removes a graph with its commits, then 404', async () => {
      const list = await api('GET', '/api/v1/graphs');
      const wren_ = list.body.graphs.find((x: any) => x.repo === 'wren');
      const clash = await upload(`repo=other&graphId=${wren_.graphId}`, JSON.stringify(synthetic('o1')));
      assert.equal(clash.status, 409, JSON.stringify(clash.body));
      const named = await upload('repo=named&graphId=my-graph.1', JSON.stringify(synthetic('n1')));
      assert.equal(named.status, 201, JSON.stringify(named.body));
      assert.equal(named.body.graphId, 'my-graph.1');
      const del = await api('DELETE', '/api/v1/graphs/my-graph.1');
      assert.equal(del.status, 200, JSON.stringify(del.body));
      assert.equal(await count('graph_nodes', 'my-graph.1'), 0);
      assert.equal(await count('graph_commits', 'my-graph.1'), 0);
      const again = await api('DELETE', '/api/v1/graphs/my-graph.1');
      assert.equal(again.status, 404);
      assert.equal(again.body.error.code, 'NOT_FOUND');
    });
  });
}

for (const backend of backends) {
  describe(`DevLens tools: find_symbols, get_node, repo (${backend.name})`, () => {
    let server: TestServer;
    let client: Client;

    withServer(backend, (s) => ({ server, client } = s));

    const upload = async (query: string, body: unknown) => {
      const r = await fetch(`${server.url}/api/v1/graphs?${query}`, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(r.status, 201, await r.clone().text());
      return (await r.json()) as any;
    };
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as any;
      return { ...r, text: r.content[0].text as string };
    };

    test('with no graph uploaded the tools say how to get one', async () => {
      const r = await call('find_symbols', { query: 'merge' });
      assert.equal(r.isError, true);
      assert.match(r.text, /NOT_FOUND: No code graph has been uploaded yet/);
      const list = await call('repo', { action: 'list' });
      assert.deepEqual(list.structuredContent.repos, []);
      assert.match(list.text, /devstream-hub upload/);
    });

    test('find_symbols: the one graph by default; exact identifier first, then ranked, tests last', async () => {
      const wren_ = await upload('repo=wren', wrenText);
      const r = await call('find_symbols', { query: 'retryAfterFailure' });
      assert.equal(r.isError, undefined, r.text);
      const out = r.structuredContent;
      assert.equal(out.commitHash, WREN_COMMIT);
      assert.equal(out.graphId, wren_.graphId);
      assert.equal(out.provenance.commitHash, WREN_COMMIT);
      // The private method #retryAfterFailure, found by its name after its class.
      assert.deepEqual(out.symbols[0], {
        nodeId: 'source/core/Client.ts::Client.retryAfterFailure',
        name: 'Client.retryAfterFailure',
        type: 'METHOD',
        filePath: 'source/core/Client.ts',
        startLine: wrenNode('source/core/Client.ts::Client.retryAfterFailure').startLine,
        endLine: wrenNode('source/core/Client.ts::Client.retryAfterFailure').endLine,
        relevance: 1,
        exactMatch: true,
      });
      assert.ok(out.symbols.length > 1, 'relatives follow the exact match');
      assert.ok(out.symbols.slice(1).every((s: any) => !s.exactMatch && s.relevance <= 1));
      assert.match(r.text, /^\d+ symbols? for "retryAfterFailure" in wren @ 25344fbd02/);

      // camelCase fragments: words of a name find it; the exact match leads, then its relatives.
      const combine = (await call('find_symbols', { query: 'combine headers', limit: 5 })).structuredContent;
      assert.equal(combine.symbols[0].nodeId, 'source/utils/combine.ts::combineHeaders');
      assert.ok(combine.symbols.some((s: any) => s.nodeId === 'source/utils/combine.ts::combineHeaderSets'));
      assert.ok(combine.symbols.length <= 5);
      const exactName = (await call('find_symbols', { query: 'combineHeaders' })).structuredContent;
      assert.equal(exactName.symbols[0].exactMatch, true);
      assert.equal(exactName.symbols.filter((s: any) => s.exactMatch).length, 1);

      // Test helpers named after the word rank below source code that merely mentions it (×0.3).
      const server_ = (await call('find_symbols', { query: 'server', limit: 25 })).structuredContent.symbols;
      assert.ok(server_.some((s: any) => s.nodeId === 'test/helpers/test-server.ts::startTestServer'));
      assert.ok(server_[0].filePath.startsWith('source/'), JSON.stringify(server_[0]));
      assert.ok(server_.filter((s: any) => s.filePath.startsWith('test/')).every((s: any) => s.relevance < 1));

      // REST mirror: GET /api/v1/symbols?q=
      const rest_ = await rest(server.url, 'GET', '/api/v1/symbols?q=retryAfterFailure&limit=3');
      assert.equal(rest_.status, 200, JSON.stringify(rest_.body));
      assert.equal(rest_.body.symbols[0].nodeId, 'source/core/Client.ts::Client.retryAfterFailure');
      assert.ok(rest_.body.symbols.length <= 3);
      const bad = await rest(server.url, 'GET', '/api/v1/symbols?q=x&limit=26');
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /limit/);
    });

    test('get_node: summaries, callers and callees with edge types, code on request, names auto-locate', async () => {
      const r = await call('get_node', { node: 'source/utils/combine.ts::mergeDeep' });
      assert.equal(r.isError, undefined, r.text);
      const out = r.structuredContent;
      assert.equal(out.located, 'id');
      assert.equal(out.node.type, 'FUNCTION');
      assert.equal(out.node.copies, 1);
      assert.deepEqual(out.callers.map((c: any) => [c.nodeId, c.edgeType]).sort(), [
        ['source/utils/combine.ts::hookValue', 'CALLS'],
        ['source/utils/combine.ts::resolveOptions', 'CALLS'],
      ]);
      assert.equal(out.callersTotal, 2);
      assert.deepEqual(out.callees, [
        {
          nodeId: 'source/utils/combine.ts::mergeDeepInternal',
          name: 'mergeDeepInternal',
          type: 'FUNCTION',
          filePath: 'source/utils/combine.ts',
          startLine: wrenNode('source/utils/combine.ts::mergeDeepInternal').startLine,
          edgeType: 'CALLS',
        },
      ]);
      assert.equal(out.code, undefined, 'no code unless asked');
      assert.equal(out.node.technicalSummary, null, 'wren has no summaries: none is invented');
      assert.match(r.text, /Technical: \(no summary: structure-only graph\)/);
      assert.match(r.text, /Callers \(2\):/);

      const byName = (await call('get_node', { node: 'combineHeaders', include: ['code', 'callers'] }))
        .structuredContent;
      assert.equal(byName.located, 'name');
      assert.equal(byName.node.nodeId, 'source/utils/combine.ts::combineHeaders');
      assert.match(byName.code, /^combineHeaders = \(first/);
      // Two callers, and the test file that imports it (a TESTS edge).
      assert.deepEqual(byName.callers.map((c: any) => [c.nodeId, c.edgeType]).sort(), [
        ['file::test/headers.test.ts', 'TESTS'],
        ['source/core/Client.ts::Client.constructor', 'CALLS'],
        ['source/utils/combine.ts::combineHeaderSets', 'CALLS'],
      ]);
      assert.equal(byName.callees, undefined, 'only the parts asked for');

      const missing = await call('get_node', { node: 'zzzNoSuchThing' });
      assert.equal(missing.isError, true);
      assert.match(missing.text, /NOT_FOUND: node: no node "zzzNoSuchThing"/);
      const badPart = await call('get_node', { node: 'x', include: ['everything'] });
      assert.equal(badPart.isError, true);
      assert.match(badPart.text, /VALIDATION_ERROR: include\.0/);

      const viaRest = await rest(
        server.url,
        'GET',
        `/api/v1/nodes/${encodeURIComponent('source/utils/combine.ts::mergeDeep')}?include=callees,code`,
      );
      assert.equal(viaRest.status, 200, JSON.stringify(viaRest.body));
      assert.equal(viaRest.body.callees.length, 1);
      assert.equal(typeof viaRest.body.code, 'string');
      assert.equal(viaRest.body.callers, undefined);
    });

    test('repeated ids are addressable as <id>#<k>; edges to missing nodes show as GHOST', async () => {
      const file = synthetic('dup1', 3);
      file.nodes.push({ ...file.nodes[1]!, startLine: 500, endLine: 510 });
      await upload('repo=dups', file);
      const first = (await call('get_node', { node: 'src/chain.ts::step1', repo: 'dups' })).structuredContent;
      assert.deepEqual([first.node.copy, first.node.copies, first.node.startLine], [1, 2, 11]);
      const second = (await call('get_node', { node: 'src/chain.ts::step1#2', repo: 'dups' })).structuredContent;
      assert.deepEqual([second.node.copy, second.node.copies, second.node.startLine], [2, 2, 500]);
      const last = (await call('get_node', { node: 'src/chain.ts::step2', repo: 'dups' })).structuredContent;
      assert.deepEqual(last.callees, [
        { nodeId: 'src/chain.ts::step3', name: 'step3', type: 'GHOST', filePath: '', startLine: 0, edgeType: 'CALLS' },
      ]);
    });

    test('repo resolution: argument (name, graphId, path), ?repo= on the MCP URL, X-Repo, else an error listing repos', async () => {
      const ambiguous = await call('find_symbols', { query: 'step1' });
      assert.equal(ambiguous.isError, true);
      assert.match(ambiguous.text, /VALIDATION_ERROR: repo: several code graphs are uploaded.*dups \(.*wren \(/);
      const list = (await call('repo', { action: 'list' })).structuredContent.repos;
      const dups = list.find((g: any) => g.repo === 'dups');
      for (const repo of ['dups', 'DUPS', dups.graphId, '/home/dev/dups', 'C:\\work\\dups\\']) {
        const r = await call('find_symbols', { query: 'step1', repo });
        assert.equal(r.structuredContent?.repo, 'dups', `${repo}: ${r.text}`);
      }
      const unknown = await call('find_symbols', { query: 'x', repo: 'nope' });
      assert.match(unknown.text, /NOT_FOUND: repo: no code graph matches "nope"; uploaded: dups .*wren/);

      const scoped = (await connectMcp(server.url, '/mcp?repo=dups')).client;
      try {
        const r = (await scoped.callTool({ name: 'find_symbols', arguments: { query: 'step1' } })) as any;
        assert.equal(r.structuredContent.repo, 'dups', r.content[0].text);
        const overridden = (await scoped.callTool({
          name: 'find_symbols',
          arguments: { query: 'merge', repo: 'wren' },
        })) as any;
        assert.equal(overridden.structuredContent.repo, 'wren');
      } finally {
        await scoped.close();
      }
      const header = await rest(server.url, 'GET', '/api/v1/symbols?q=step1', undefined, { 'x-repo': 'dups' });
      assert.equal(header.status, 200, JSON.stringify(header.body));
      assert.equal(header.body.repo, 'dups');
      const noHeader = await rest(server.url, 'GET', '/api/v1/symbols?q=step1');
      assert.equal(noHeader.status, 400);
    });

    test('repo health: summary coverage and dependency cycles as strongly connected components, largest first', async () => {
      // a→b→c→a and d↔e, f alone; plus an IMPORTS cycle between two files.
      const node = (id: string, extra: Record<string, unknown> = {}) => ({
        id,
        name: id.split('::')[1] ?? id,
        type: 'FUNCTION',
        filePath: 'src/c.ts',
        startLine: 1,
        endLine: 2,
        ...extra,
      });
      const file = {
        commitHash: 'cyc1',
        analyzedAt: new Date().toISOString(),
        nodes: [
          node('src/c.ts::a', { technicalSummary: 'Starts the loop.' }),
          node('src/c.ts::b'),
          node('src/c.ts::c'),
          node('src/c.ts::d'),
          node('src/c.ts::e'),
          node('src/c.ts::f'),
          { id: 'file::src/x.ts', name: 'x.ts', type: 'FILE', filePath: 'src/x.ts', startLine: 1, endLine: 9 },
          { id: 'file::src/y.ts', name: 'y.ts', type: 'FILE', filePath: 'src/y.ts', startLine: 1, endLine: 9 },
        ],
        edges: [
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'a'],
          ['d', 'e'],
          ['e', 'd'],
          ['c', 'f'],
          ['f', 'f'],
        ]
          .map(([from, to]) => ({ from: `src/c.ts::${from}`, to: `src/c.ts::${to}`, type: 'CALLS' }))
          .concat([
            { from: 'file::src/x.ts', to: 'file::src/y.ts', type: 'IMPORTS' },
            { from: 'file::src/y.ts', to: 'file::src/x.ts', type: 'IMPORTS' },
            { from: 'src/c.ts::d', to: 'src/c.ts::a', type: 'EXTENDS' },
          ]),
      };
      await upload('repo=cyclic', file);
      const r = await call('repo', { action: 'health', repo: 'cyclic' });
      assert.equal(r.isError, undefined, r.text);
      assert.deepEqual(r.structuredContent.coverage, { nodes: 8, withSummary: 1, ratio: 0.125 });
      assert.deepEqual(r.structuredContent.cycles, [
        ['src/c.ts::a', 'src/c.ts::b', 'src/c.ts::c'],
        ['file::src/x.ts', 'file::src/y.ts'],
        ['src/c.ts::d', 'src/c.ts::e'],
      ]);
      assert.equal(r.structuredContent.cyclesTotal, 3);
      assert.match(
        r.text,
        /1 of 8 nodes have summaries \(13 %\); 3 dependency cycle\(s\) over CALLS\/IMPORTS, the largest of 3 nodes/,
      );
    });

    test('impact: upstream and downstream dependents by hop, cycle-safe; a hub stops at hop 1 and says so', async () => {
      const up = (await call('impact', { target: 'source/utils/combine.ts::mergeDeep', repo: 'wren' }))
        .structuredContent;
      const byHop = (list: any[]) =>
        list.map((d) => [d.hop, d.nodeId, d.via]).sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
      // hookValue and resolveOptions call it; combineHooks calls hookValue, createClient resolveOptions.
      assert.deepEqual(byHop(up.dependents), [
        [1, 'source/utils/combine.ts::hookValue', 'CALLS'],
        [1, 'source/utils/combine.ts::resolveOptions', 'CALLS'],
        [2, 'source/index.ts::createClient', 'CALLS'],
        [2, 'source/utils/combine.ts::combineHooks', 'CALLS'],
      ]);
      assert.equal(up.truncated, false);
      const down = (await call('impact', { target: 'mergeDeep', direction: 'downstream', radius: 1, repo: 'wren' }))
        .structuredContent;
      assert.deepEqual(
        down.dependents.map((d: any) => d.nodeId),
        ['source/utils/combine.ts::mergeDeepInternal'],
      );
      assert.equal(down.target.nodeId, 'source/utils/combine.ts::mergeDeep', 'a symbol name locates the target');
      // Downstream: mergeDeepInternal, then the five it calls (its call to itself adds nothing).
      const both = await call('impact', {
        target: 'source/utils/combine.ts::mergeDeep',
        direction: 'both',
        radius: 2,
        repo: 'wren',
      });
      assert.equal(both.structuredContent.total, 4 + 6);
      assert.match(
        both.text,
        /^both of source\/utils\/combine\.ts::mergeDeep \(source\/utils\/combine\.ts:\d+\), radius 2, in wren @ 25344fbd02: 10 node\(s\)/,
      );
      assert.match(both.text, /\n↑ 1 source\/utils\/combine\.ts:\d+ hookValue \(calls\)/);

      // The cyclic graph: a→b→c→a never loops.
      const cyc = (await call('impact', { target: 'src/c.ts::a', radius: 5, repo: 'cyclic' })).structuredContent;
      assert.deepEqual(
        cyc.dependents.map((d: any) => [d.nodeId, d.hop]),
        [
          ['src/c.ts::c', 1],
          ['src/c.ts::d', 1],
          ['src/c.ts::b', 2],
          ['src/c.ts::e', 2],
        ],
      );

      const hub = synthetic('hub1', 1);
      for (let i = 0; i < 150; i++) {
        (hub.nodes as any[]).push({
          id: `src/callers.ts::caller${i}`,
          name: `caller${i}`,
          type: 'FUNCTION',
          filePath: 'src/callers.ts',
          startLine: i + 1,
          endLine: i + 1,
        });
        (hub.edges as any[]).push({ from: `src/callers.ts::caller${i}`, to: 'src/chain.ts::step0', type: 'CALLS' });
      }
      (hub.edges as any[]).push({ from: 'src/far.ts::far', to: 'src/callers.ts::caller0', type: 'CALLS' });
      await upload('repo=hub', hub);
      const h = await call('impact', { target: 'src/chain.ts::step0', repo: 'hub' });
      assert.equal(h.structuredContent.truncated, true);
      assert.equal(h.structuredContent.dependents.length, 100);
      assert.ok(h.structuredContent.dependents.every((d: any) => d.hop === 1));
      assert.match(h.text, /truncated: more than 100 at hop 1/);

      const none = await call('impact', { repo: 'wren' });
      assert.equal(none.isError, true);
      assert.match(none.text, /VALIDATION_ERROR: target: give a target/);
      const half = await call('impact', { from: 'abc1234', repo: 'wren' });
      assert.match(half.text, /VALIDATION_ERROR: to: from and to go together/);
    });

    test('impact over a commit range: ADDED, REMOVED and CODECHANGED nodes with their dependents', async () => {
      const v1 = synthetic('range-v1', 3, { analyzedAt: '2026-01-01T00:00:00Z' });
      const v2 = synthetic('range-v2', 3, { analyzedAt: '2026-01-02T00:00:00Z' });
      v2.nodes[1]!.rawCode = 'function step1() { return 42; }';
      v2.nodes.splice(2, 1); // step2 removed
      (v2.nodes as any[]).push({
        id: 'src/new.ts::fresh',
        name: 'fresh',
        type: 'FUNCTION',
        filePath: 'src/new.ts',
        startLine: 3,
        endLine: 4,
      });
      (v2.edges as any[]).push({ from: 'src/chain.ts::step0', to: 'src/new.ts::fresh', type: 'CALLS' });
      await upload('repo=ranged', v1);
      await upload('repo=ranged', v2);
      const r = await call('impact', { from: 'range-v1', to: 'range-v2', repo: 'ranged' });
      assert.equal(r.isError, undefined, r.text);
      const out = r.structuredContent;
      assert.equal(out.mode, 'range');
      assert.deepEqual(
        out.changes.map((c: any) => [c.change, c.nodeId, c.dependents.map((d: any) => d.nodeId)]),
        [
          ['ADDED', 'src/new.ts::fresh', ['src/chain.ts::step0']],
          ['CODECHANGED', 'src/chain.ts::step1', ['src/chain.ts::step0']],
          ['REMOVED', 'src/chain.ts::step2', ['src/chain.ts::step1']],
        ],
      );
      assert.match(
        r.text,
        /^3 changed node\(s\) in ranged range-v1\.\.range-v2\nADDED src\/new\.ts:3 fresh \(function\) ← src\/chain\.ts:1/,
      );
      const unknown = await call('impact', { from: 'nope-commit', to: 'range-v2', repo: 'ranged' });
      assert.match(unknown.text, /NOT_FOUND: commitHash: ranged has no uploaded commit "nope-commit"/);
    });

    test('resolve_context: the packet sections in order, ids that map back, within the budget', async () => {
      const r = await call('resolve_context', { task: 'combineHeaders', intent: 'pinpoint', repo: 'wren' });
      assert.equal(r.isError, undefined, r.text);
      const out = r.structuredContent;
      assert.equal(r.text, out.packet, 'the text block is the packet');
      assert.equal(out.intent, 'pinpoint');
      assert.equal(out.budget, 1500, 'pinpoint on a small repo: 1,500 tokens');
      assert.equal(out.origin, 'index');
      assert.equal(out.approxTokens, Math.ceil(out.packet.length / 4));
      assert.ok(out.approxTokens <= out.budget);
      assert.equal(out.provenance.commitHash, WREN_COMMIT);
      const lines: string[] = out.packet.split('\n');
      const sections = lines
        .map((l) => l.split(' ')[0])
        .filter((w): w is string => w !== undefined && /^[A-Z]+$/.test(w));
      assert.deepEqual(
        [...new Set(sections)],
        ['GRAPH', 'ANSWER', 'WHAT', 'CONFIDENCE', 'NODES', 'FLOW', 'FILES', 'SEC', 'IDMAP', 'NEXT'],
      );
      assert.match(lines[0]!, /^GRAPH [0-9a-f]{16} @ 25344fbd02$/);
      assert.equal(lines[1], 'ANSWER 1');
      assert.match(lines[2]!, /^ANSWER combineHeaders \(symbol\) — source\/utils\/combine\.ts:28$/);
      assert.match(lines[3]!, /^WHAT no summary in this graph \(structure only\)/, 'never invents a summary');
      assert.equal(lines[4], 'CONFIDENCE exact match for "combineHeaders"');
      assert.equal(
        lines[6],
        'N1 combineHeaders function source/utils/combine.ts:28-41  meta:arrow (first: HeadersInit = {}, second: HeadersInit = {}) -> Headers',
        'the meta: segment (DEVLENS_PACKET_META, on by default) after the location',
      );
      // pinpoint: one hop both ways — its callers are in the packet, and FLOW shows the calls.
      const idmap = Object.fromEntries(
        lines
          .find((l) => l.startsWith('IDMAP '))!
          .slice(6)
          .split(' ')
          .map((p) => p.split('=')),
      );
      assert.equal(idmap.N1, 'source/utils/combine.ts::combineHeaders');
      const idOf = (node: string) => Object.keys(idmap).find((k) => idmap[k] === node);
      const caller = idOf('source/core/Client.ts::Client.constructor');
      assert.ok(caller, 'a caller of the answer is included');
      assert.ok(lines.includes(`${caller} -calls-> N1`), 'FLOW shows the call');
      const tester = idOf('file::test/headers.test.ts');
      assert.ok(tester && lines.includes(`${tester} -tests-> N1`), 'FLOW shows the other edge types too');
      const nodeCount = Number(lines.find((l) => l.startsWith('NODES '))!.split(' ')[1]);
      assert.equal(Object.keys(idmap).length, nodeCount);
      const files = lines.find((l) => l.startsWith('FILES '))!;
      assert.ok(Number(files.split(' ')[1]) >= 2);
      assert.match(out.packet, /\nsource\/utils\/combine\.ts {2}N1(,N\d+)*\n/);
      assert.match(out.packet, /\n {2}L28: combineHeaders = \(first/, 'a matched-line snippet from the stored code');
      assert.match(lines.at(-1)!, /^NEXT get_node source\/utils\/combine\.ts::combineHeaders include=\["code"\]/);

      const viaRest = await rest(server.url, 'POST', '/api/v1/context', {
        task: 'combineHeaders',
        intent: 'pinpoint',
        repo: 'wren',
      });
      assert.equal(viaRest.status, 200, JSON.stringify(viaRest.body));
      assert.equal(viaRest.body.packet, out.packet);
    });

    test('resolve_context: over budget the lowest-ranked nodes go and NEXT says so; focus leads; summaries when present', async () => {
      const wide = (await call('resolve_context', { task: 'how are retries delayed', repo: 'wren' })).structuredContent;
      assert.equal(wide.intent, 'exploratory');
      assert.equal(wide.budget, 2500);
      assert.ok(wide.approxTokens > 500, `${wide.approxTokens} tokens: more than the small budget below`);
      assert.doesNotMatch(wide.packet, /\nNEXT cut /, 'the default budget holds every node');
      const small = (await call('resolve_context', { task: 'how are retries delayed', tokenBudget: 500, repo: 'wren' }))
        .structuredContent;
      assert.ok(small.approxTokens <= 500, `${small.approxTokens} tokens`);
      const nodes = (p: string) =>
        Number(
          p
            .split('\n')
            .find((l: string) => l.startsWith('NODES '))!
            .split(' ')[1],
        );
      assert.ok(nodes(small.packet) < nodes(wide.packet));
      assert.match(small.packet, /\nNEXT cut \d+ lower-ranked node\(s\) to fit 500 tokens \(/);
      assert.match(small.packet, /\nCONFIDENCE closest match for "how are retries delayed" is "/);
      // The same top nodes, in the same order: cutting only removes from the end.
      const ids = (p: string) =>
        p
          .split('\n')
          .find((l: string) => l.startsWith('IDMAP '))!
          .split(' ')
          .slice(1);
      assert.deepEqual(ids(small.packet), ids(wide.packet).slice(0, ids(small.packet).length));

      const focused = (
        await call('resolve_context', {
          task: 'what is in this file',
          focus: ['source/utils/combine.ts'],
          intent: 'overview',
          repo: 'wren',
        })
      ).structuredContent;
      assert.match(focused.packet, /\nN1 combine\.ts file source\/utils\/combine\.ts:1-135\n/);
      const tooSmall = await call('resolve_context', { task: 'x', tokenBudget: 100, repo: 'wren' });
      assert.match(tooSmall.text, /VALIDATION_ERROR: tokenBudget/);

      // A graph with summaries: WHAT is the first sentence of the business summary, m: on each node, SEC listed.
      await upload('repo=summarised', {
        commitHash: 'sum1',
        analyzedAt: new Date().toISOString(),
        nodes: [
          {
            id: 'src/auth.ts::loginUser',
            name: 'loginUser',
            type: 'FUNCTION',
            filePath: 'src/auth.ts',
            startLine: 3,
            endLine: 20,
            businessSummary: 'Signs a user in with a password. Locks the account after five failures.',
            technicalSummary: 'Checks bcrypt hashes.',
            security: { severity: 'high', summary: 'Handles <b>passwords</b>; rate limited.' },
            rawCode: 'export async function loginUser(name, password) {\n  return checkPassword(name, password);\n}',
          },
          {
            id: 'src/auth.ts::checkPassword',
            name: 'checkPassword',
            type: 'FUNCTION',
            filePath: 'src/auth.ts',
            startLine: 22,
            endLine: 30,
            technicalSummary: 'Compares a bcrypt hash in constant time.',
          },
        ],
        edges: [{ from: 'src/auth.ts::loginUser', to: 'src/auth.ts::checkPassword', type: 'CALLS' }],
      });
      const sum = (
        await call('resolve_context', { task: 'how does login work', intent: 'security-audit', repo: 'summarised' })
      ).structuredContent.packet;
      assert.match(sum, /\nANSWER loginUser \(symbol\) — src\/auth\.ts:3\nWHAT Signs a user in with a password\.\n/);
      assert.match(
        sum,
        /\nN1 loginUser function src\/auth\.ts:3-20 {2}meta:export async function \(name, password\) {2}m:Signs a user in with a password\.\n/,
      );
      assert.match(sum, /\nSEC 1\nN1 high: Handles <b>passwords<\/b>; rate limited\.\n/);
      assert.match(sum, /\nNODES 1\n/, 'security-audit walks only upstream: the callee is not included');
      const flow = (await call('resolve_context', { task: 'how does login work', intent: 'flow', repo: 'summarised' }))
        .structuredContent.packet;
      assert.match(
        flow,
        /\nN2 checkPassword function src\/auth\.ts:22-30 {2}m:Compares a bcrypt hash in constant time\.\n/,
      );
      assert.match(flow, /\nFLOW 1\nN1 -calls-> N2\n/);
    });

    test('resources: devlens://repos and devlens://graph/{graphId}/meta', async () => {
      const { resources } = await client.listResources();
      assert.equal(resources[0]!.uri, 'devlens://repos');
      const wrenMeta = resources.find((r) => r.name === 'wren meta');
      assert.ok(wrenMeta, JSON.stringify(resources.map((r) => r.uri)));
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(
        resourceTemplates.map((t) => t.uriTemplate),
        ['devstream://task/{id}', 'devstream://plan/{id}', 'devstream://memory/{id}', 'devlens://graph/{graphId}/meta'],
      );
      const repos = JSON.parse(((await client.readResource({ uri: 'devlens://repos' })).contents[0] as any).text);
      assert.ok(repos.graphs.some((g: any) => g.repo === 'wren' && g.latestCommit === WREN_COMMIT));
      const meta = JSON.parse(((await client.readResource({ uri: wrenMeta!.uri })).contents[0] as any).text);
      assert.equal(meta.repo, 'wren');
      assert.equal(meta.nodes, 64);
      assert.equal(meta.stats.totalNodesAfterFilter, 64, "the commit file's own statistics");
      assert.equal(meta.stats.topScoringNodes[0].name, 'Client.backoffFor');
      await assert.rejects(client.readResource({ uri: 'devlens://graph/nope/meta' }), /Resource not found/);
    });

    test('repo freshness compares the latest upload with the commit the client names; analyze explains', async () => {
      const fresh = (await call('repo', { action: 'freshness', repo: 'wren', commit: WREN_COMMIT.slice(0, 12) }))
        .structuredContent;
      assert.equal(fresh.fresh, true);
      assert.equal(fresh.latestCommit, WREN_COMMIT);
      const stale = await call('repo', { action: 'freshness', repo: 'wren', commit: 'deadbeefcafe' });
      assert.equal(stale.structuredContent.fresh, false);
      assert.match(stale.text, /^Stale: the graph of wren is at 25344fbd02fd, your commit is deadbeefcafe/);
      const unknown = (await call('repo', { action: 'freshness', repo: 'wren' })).structuredContent;
      assert.equal(unknown.fresh, null);
      const analyze = await call('repo', { action: 'analyze' });
      assert.match(analyze.text, /devstream-hub upload/);
      const badAction = await call('repo', { action: 'explode' });
      assert.equal(badAction.isError, true);
      assert.match(badAction.text, /VALIDATION_ERROR: action/);
    });

    test('file kinds (issue 20): find_symbols and resolve_context rank by the one rule', async () => {
      const node = (id: string, score: number) => ({
        id,
        name: id.split('::')[1],
        type: 'FUNCTION',
        filePath: id.split('::')[0],
        startLine: 1,
        endLine: 2,
        score,
        metadata: {},
      });
      await upload('repo=kinds', {
        commitHash: 'k1',
        nodes: [
          node('test_pad.py::pad_text', 1),
          node('pad.py::pad_text', 1),
          node('src/server.ts::startServer', 10),
          node('vendor/pad.ts::vendoredPad', 1),
          node('lib/pad.ts::padLeft', 0.5),
        ],
        edges: [
          { from: 'src/server.ts::startServer', to: 'vendor/pad.ts::vendoredPad', type: 'CALLS' },
          { from: 'vendor/pad.ts::vendoredPad', to: 'lib/pad.ts::padLeft', type: 'CALLS' },
        ],
      });
      // A pytest file (test_*.py) ranks below source of the same name.
      {
        const out = (await call('find_symbols', { query: 'pad_text', repo: 'kinds' })).structuredContent;
        assert.deepEqual(
          out.symbols.slice(0, 2).map((s: any) => s.nodeId),
          ['pad.py::pad_text', 'test_pad.py::pad_text'],
        );
      }

      // resolve_context ranks vendored code down (×0.7), as find_symbols does.
      {
        const out = (await call('resolve_context', { task: 'startServer', intent: 'flow', repo: 'kinds' }))
          .structuredContent;
        const nodes = out.packet.split('\n').filter((l: string) => /^N\d+ /.test(l) && !l.includes('->'));
        assert.deepEqual(
          nodes.map((l: string) => l.split(' ')[1]),
          ['startServer', 'padLeft', 'vendoredPad'],
          out.packet,
        );
      }
    });
  });
}

describe('file kinds: one rule for the analyzer, find_symbols and resolve_context (issue 20)', () => {
  test('a test file (DevLens names) is test code; test folders and other languages are test code only', () => {
    for (const path of ['src/a.test.ts', 'a.spec.jsx', 'x/__tests__/a.ts', 'test_a.py', 'pkg/test_a.py', 'a_test.py'])
      assert.deepEqual([path, isTestFile(path), fileKind('FUNCTION', path)], [path, true, 'test']);
    for (const path of ['test/helpers/server.ts', 'tests/conftest.py', 'e2e/login.ts', 'pkg/a_test.rb', 'Spec/A.rb'])
      assert.deepEqual([path, isTestFile(path), fileKind('FUNCTION', path)], [path, false, 'test']);
    for (const path of ['types/a.d.ts', 'vendor/lib.js', 'src/api.generated.ts', 'dist/x.min.js'])
      assert.equal(fileKind('FUNCTION', path), 'generated', path);
    for (const path of ['src/latest.ts', 'src/contest.py', 'src/testing.ts'])
      assert.equal(fileKind('FUNCTION', path), 'source', path);
    assert.equal(fileKind('TEST', 'src/a.ts'), 'test');
  });
});
