import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { identifierWords, nameDocument } from '../src/domain/graphs/search-document.js';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

const KY = '../shared/fixtures/graphs/ky/3419113b48e034fdcf8fa6bd3be3da7b3d0d758f.json';
const KY_COMMIT = '3419113b48e034fdcf8fa6bd3be3da7b3d0d758f';
const kyText = readFileSync(new URL(KY, `file://${process.cwd()}/`), 'utf8');
const ky = JSON.parse(kyText);

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
    assert.equal(nameDocument('Ky.retryFromError'), 'ky.retryfromerror ky retry from error');
    assert.equal(nameDocument('merge'), 'merge');
  });
});

for (const backend of backends) {
  describe(`code graph uploads (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { graphs: { retention: 2, uploadLimit: 4 * 1024 * 1024 } });
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    const upload = (query: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/api/v1/graphs?${query}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as any }),
      );
    const api = (method: string, path: string) => rest(server.url, method, path);
    const count = async (table: 'graph_nodes' | 'graph_edges' | 'graph_commits', graphId: string) =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where graph_id = ${graphId}`.execute(database.db.kysely)).rows[0]!.n,
      );

    test('the real ky graph uploads as JSON: every node (repeated ids too) and edge stored, listed', async () => {
      const r = await upload('repo=ky&branch=main', kyText);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.repo, 'ky');
      assert.equal(r.body.commitHash, KY_COMMIT);
      assert.equal(r.body.nodes, ky.nodes.length);
      assert.equal(r.body.edges, ky.edges.length);
      assert.match(r.body.graphId, /^[0-9a-f]{16}$/);
      assert.ok(!Number.isNaN(Date.parse(r.body.uploadedAt)));
      assert.equal(await count('graph_nodes', r.body.graphId), 192);
      assert.equal(await count('graph_edges', r.body.graphId), 230);

      const { kysely } = database.db;
      const node = (
        await sql<any>`select * from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'source/core/Ky.ts::Ky.retryFromError'`.execute(kysely)
      ).rows;
      assert.equal(node.length, 1);
      assert.equal(node[0].type, 'METHOD');
      assert.equal(node[0].file_path, 'source/core/Ky.ts');
      assert.ok(node[0].code.length > 0, 'rawCode kept');
      const original = ky.nodes.find((n: any) => n.id === 'source/core/Ky.ts::Ky.retryFromError');
      assert.equal(node[0].start_line, original.startLine);
      assert.equal(node[0].score, original.score);
      assert.equal(node[0].extra.codeHash, original.codeHash, 'fields we do not model are kept');
      // The name's parts are searchable words of the node.
      const found = await sql<any>`select node_id from graph_nodes where graph_id = ${r.body.graphId}
                                    and search @@ to_tsquery('simple', 'retry & from & error')`.execute(kysely);
      assert.ok(found.rows.some((row) => row.node_id === 'source/core/Ky.ts::Ky.retryFromError'));

      const list = await api('GET', '/api/v1/graphs');
      assert.equal(list.status, 200);
      const listed = list.body.graphs.find((g: any) => g.graphId === r.body.graphId);
      assert.deepEqual(
        { ...listed, analyzedAt: undefined, uploadedAt: undefined },
        { graphId: r.body.graphId, repo: 'ky', latestCommit: KY_COMMIT, analyzedAt: undefined, uploadedAt: undefined, nodes: 192, edges: 230, commits: 1 },
      );
      assert.equal(listed.analyzedAt, new Date(ky.analyzedAt).toISOString());
    });

    test('gzip uploads; the same commit again replaces it (no copies), whatever the repo name case', async () => {
      const r = await upload('repo=KY', gzipSync(kyText), { 'content-encoding': 'gzip' });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.repo, 'ky', 'the existing graph, found by name in any case');
      assert.equal(await count('graph_nodes', r.body.graphId), 192);
      assert.equal(await count('graph_commits', r.body.graphId), 1);
    });

    test('repeated node ids are all kept; edges to missing nodes are kept; unknown types kept', async () => {
      const file = synthetic('c0ffee1', 3);
      file.nodes.push({ ...file.nodes[0]!, startLine: 100, endLine: 110 }); // an overload: same id
      (file.nodes as any[]).push({ id: 'src/x.ts::Thing', name: 'Thing', type: 'WIDGET', filePath: 'src/x.ts', startLine: 1, endLine: 2, flavour: 'odd' });
      (file.edges as any[]).push({ from: 'src/x.ts::Thing', to: 'nowhere::ghost', type: 'SUMMONS', metadata: { why: 'test' }, weight: 2 });
      const r = await upload('repo=synthetic', JSON.stringify(file));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.nodes, 5);
      assert.equal(r.body.edges, 4);
      const { kysely } = database.db;
      const copies = await sql<any>`select start_line from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'src/chain.ts::step0' order by seq`.execute(kysely);
      assert.deepEqual(copies.rows.map((row) => row.start_line), [1, 100]);
      const odd = await sql<any>`select type, extra from graph_nodes where graph_id = ${r.body.graphId} and node_id = 'src/x.ts::Thing'`.execute(kysely);
      assert.deepEqual(odd.rows[0], { type: 'WIDGET', extra: { flavour: 'odd' } });
      const edge = await sql<any>`select to_id, type, metadata from graph_edges where graph_id = ${r.body.graphId} and type = 'SUMMONS'`.execute(kysely);
      assert.deepEqual(edge.rows[0], { to_id: 'nowhere::ghost', type: 'SUMMONS', metadata: { why: 'test', weight: 2 } });
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
      const kept = await sql<any>`select commit_hash from graph_commits where graph_id = ${g.graphId} order by commit_hash`.execute(database.db.kysely);
      assert.deepEqual(kept.rows.map((row) => row.commit_hash), ['r2', 'r3']);
      assert.equal(await count('graph_nodes', g.graphId), 4, 'the dropped commit took its nodes with it');
    });

    test('invalid uploads answer 400 naming the problem and store nothing', async () => {
      const before = await api('GET', '/api/v1/graphs');
      const cases: Array<[string, string | Buffer, Record<string, string>, RegExp]> = [
        ['repo=bad1', JSON.stringify({ commitHash: 'x1', analyzedAt: new Date().toISOString(), nodes: [], edges: [] }), {}, /nodes/],
        ['repo=bad2', JSON.stringify({ commitHash: 'x2', edges: [] }), {}, /nodes/],
        ['repo=bad3', '{"commitHash": "x3", "nodes": [{"id": "a", "type": "FUNCTION"}', {}, /\(body\)/],
        ['repo=bad4', 'not json at all', {}, /\(body\)/],
        ['repo=bad5', JSON.stringify([1, 2]), {}, /\(body\)/],
        ['repo=bad6', JSON.stringify(synthetic('x6', 2, { nodes: [{ id: 'a', name: 'a', type: 'FUNCTION' }, { name: 'b', type: 'FUNCTION' }] })), {}, /nodes\[1\]\.id/],
        ['repo=bad7', JSON.stringify(synthetic('x7', 2, { edges: [{ from: 'a', type: 'CALLS' }] })), {}, /edges\[0\]\.to/],
        ['repo=bad8', JSON.stringify({ nodes: synthetic('x', 1).nodes }), {}, /commitHash/],
        ['repo=bad9', JSON.stringify(synthetic('x9', 1, { analyzedAt: 'yesterday' })), {}, /analyzedAt/],
        ['repo=bad10', Buffer.from('not gzip'), { 'content-encoding': 'gzip' }, /gzip/],
        ['', JSON.stringify(synthetic('x11')), {}, /repo/],
        ['repo=bad12&graphId=no%20spaces', JSON.stringify(synthetic('x12')), {}, /graphId/],
        ['repo=bad13', JSON.stringify(synthetic('x13', 2, { nodes: [{ id: 'a', name: 'a', type: 'FUNCTION', startLine: -1 }] })), {}, /nodes\[0\]\.startLine/],
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
                                   (select 1 from graph_commits c where c.graph_id = n.graph_id and c.commit_hash = n.commit_hash)`.execute(kysely);
      assert.equal(stray.rows[0].n, 0);
    });

    test('a failed re-upload keeps the commit as it was', async () => {
      const list = await api('GET', '/api/v1/graphs');
      const g = list.body.graphs.find((x: any) => x.repo === 'ky');
      // The ky commit again, cut off after its first nodes: rejected, and the stored commit is untouched.
      const r = await upload('repo=ky', kyText.slice(0, 40_000));
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(await count('graph_nodes', g.graphId), 192);
      assert.equal(await count('graph_edges', g.graphId), 230);
    });

    test('uploads over GRAPH_UPLOAD_LIMIT answer 413, packed or unpacked', async () => {
      const big = JSON.stringify(synthetic('big', 1, { padding: 'x'.repeat(5 * 1024 * 1024) }));
      const plain = await upload('repo=big', big);
      assert.equal(plain.status, 413, JSON.stringify(plain.body));
      assert.equal(plain.body.error.code, 'PAYLOAD_TOO_LARGE');
      const packed = await upload('repo=big', gzipSync(big), { 'content-encoding': 'gzip' });
      assert.equal(packed.status, 413, JSON.stringify(packed.body));
      const list = await api('GET', '/api/v1/graphs');
      assert.ok(!list.body.graphs.some((x: any) => x.repo === 'big'));
    });

    test('graphId conflicts answer 409; DELETE removes a graph with its commits, then 404', async () => {
      const list = await api('GET', '/api/v1/graphs');
      const ky_ = list.body.graphs.find((x: any) => x.repo === 'ky');
      const clash = await upload(`repo=other&graphId=${ky_.graphId}`, JSON.stringify(synthetic('o1')));
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
