/**
 * resolve_context walks a commit's edges in process, from the search index (issue 21's latency):
 * the walk and the edges among a packet's nodes must be what the database's own statements give
 * (reachableNodes, the impact tool's walk; for the edges, the statement the packet read them by before) — nearest hop, the least edge type there,
 * the first copy of a node, GHOSTs and ids no node holds, the same order — on a graph with cycles,
 * self-loops, repeated edges, repeated ids and several edge types, on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { reachableNodes } from '../src/db/queries/graph-impact.js';
import type { Database } from '../src/db/schema.js';
import { lexicalSearch } from '../src/domain/graphs/lexical-search.js';
import { SearchIndex } from '../src/domain/graphs/search-index.js';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

/** The edges among `ids` as the database gives them: one per (from, to, type), no self-loop, ordered. */
async function edgesAmong(db: Kysely<Database>, g: { graphId: string; commitHash: string }, ids: string[]) {
  if (ids.length === 0) return [];
  const rows = await sql<{ from_id: string; to_id: string; type: string }>`
    select distinct from_id, to_id, type from graph_edges
     where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}
       and from_id = any(${ids}::text[]) and to_id = any(${ids}::text[]) and from_id <> to_id
     order by from_id, to_id, type`.execute(db);
  return rows.rows;
}

/** Nodes a..h over two files (b twice: an overload), a GHOST, and edges to an id no node holds. */
function tangledGraph() {
  const node = (id: string, file: string, line: number, type = 'FUNCTION') => ({
    id: `${file}::${id}`,
    name: id,
    type,
    filePath: file,
    startLine: line,
    endLine: line + 2,
    rawCode: `function ${id}() {}`,
  });
  const nodes = [
    node('a', 'src/z.ts', 1),
    node('b', 'src/z.ts', 5),
    node('b', 'src/z.ts', 9), // the same id again: the first copy counts
    node('c', 'src/a.ts', 1),
    node('d', 'src/a.ts', 5),
    node('e', 'src/z.ts', 20),
    node('f', 'src/m.ts', 3, 'CLASS'),
    node('g', 'src/m.ts', 1),
    node('h', 'src/a.ts', 30),
    { id: 'lodash::merge', name: 'merge', type: 'GHOST', filePath: '', startLine: 0, endLine: 0 },
  ];
  const id = (n: string) =>
    n === 'merge' ? 'lodash::merge' : n === 'nowhere' ? 'gone::nowhere' : nodes.find((x) => x.name === n)!.id;
  const edges = [
    ['a', 'b', 'CALLS'],
    ['a', 'b', 'CALLS'], // repeated
    ['a', 'c', 'IMPORTS'],
    ['a', 'c', 'CALLS'], // two types to one node: the least is `via`
    ['b', 'd', 'CALLS'],
    ['c', 'd', 'EXTENDS'],
    ['d', 'a', 'CALLS'], // a cycle back to the start
    ['d', 'e', 'CALLS'],
    ['e', 'f', 'IMPLEMENTS'],
    ['f', 'g', 'CALLS'],
    ['g', 'g', 'CALLS'], // a self-loop
    ['e', 'merge', 'CALLS'],
    ['h', 'nowhere', 'CALLS'],
    ['nowhere', 'a', 'CALLS'],
    ['h', 'e', 'READS'],
    ['c', 'h', 'CALLS'],
  ].map(([from, to, type]) => ({ from: id(from!), to: id(to!), type: type! }));
  return { commitHash: 'w1', analyzedAt: '2026-01-01T00:00:00Z', nodes, edges };
}

for (const backend of backends) {
  describe(`the search index's walks and edges match the database's (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let g: { graphId: string; commitHash: string };
    let index: SearchIndex;
    const graph = tangledGraph();
    const ids = [...new Set([...graph.nodes.map((n) => n.id), 'gone::nowhere', 'nobody::at-all'])];

    before(async () => {
      database = await backend.open();
      server = await startServer(database);
      const r = await rest(server.url, 'POST', '/api/v1/graphs?repo=tangled', JSON.stringify(graph));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      g = { graphId: r.body.graphId, commitHash: r.body.commitHash };
      index = await SearchIndex.build(database.db.kysely, g);
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    test('from every node, both directions, radius 1 to 4: the same nodes, hops, edge types, first copies and order', async () => {
      let compared = 0;
      for (const start of ids) {
        for (const direction of ['upstream', 'downstream'] as const) {
          for (let radius = 1; radius <= 4; radius++) {
            const sql = await reachableNodes(database.db.kysely, g, start, direction, radius);
            const mine = index.walk(start, direction, radius).map((r) => ({
              node_id: r.node_id,
              hop: r.hop,
              via: r.via,
              name: r.node?.name ?? null,
              type: r.node?.type ?? null,
              file_path: r.node?.file_path ?? null,
              start_line: r.node?.start_line ?? null,
            }));
            assert.deepEqual(mine, sql, `${start} ${direction} radius ${radius}`);
            compared += sql.length;
          }
        }
      }
      assert.ok(compared > 100, `the walks reached nodes (${compared})`);
    });

    test('a repeated id is one hit: its first copy among those the words find (a later copy when only it matches)', async () => {
      const twin = (line: number, words: string) => ({
        id: 'src/t.ts::render',
        name: 'render',
        type: 'FUNCTION',
        filePath: 'src/t.ts',
        startLine: line,
        endLine: line + 1,
        rawCode: `function render() { /* ${words} */ }`,
      });
      const file = {
        commitHash: 't1',
        analyzedAt: '2026-01-01T00:00:00Z',
        nodes: [twin(1, 'paints the canvas'), twin(5, 'paints the canvas with gradients'), twin(9, 'other words')],
        edges: [],
      };
      const r = await rest(server.url, 'POST', '/api/v1/graphs?repo=twins', JSON.stringify(file));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const twins = await SearchIndex.build(database.db.kysely, { graphId: r.body.graphId, commitHash: 't1' });
      const hits = async (query: string) =>
        (await lexicalSearch({ db: database.db.kysely }, twins, query, 10)).map((h) => [h.node_id, h.start_line]);
      assert.deepEqual(await hits('canvas paints'), [['src/t.ts::render', 1]]);
      assert.deepEqual(await hits('gradients'), [['src/t.ts::render', 5]]);
      assert.deepEqual(await hits('render'), [['src/t.ts::render', 1]], 'the exact name: the first copy');
    });

    test('edges among any set of nodes: one per (from, to, type), no self-loop, by from, to, type', async () => {
      const sets = [ids, ids.slice(0, 4), ids.filter((_, i) => i % 2 === 0), ['src/z.ts::a'], []];
      for (const set of sets) {
        assert.deepEqual(index.edgesAmong(set), await edgesAmong(database.db.kysely, g, set), set.join(' '));
      }
      assert.ok(index.edgesAmong(ids).length > 10);
    });
  });
}
