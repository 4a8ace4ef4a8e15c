/**
 * Code-graph node vectors (issue 21, the semantic channel): each node's embedding document is
 * embedded in the background after an upload by the memories' worker, and semanticNodeHits /
 * nearestNodes give the nodes of a commit nearest to a question. Through the real service over HTTP,
 * with fake Ollama on loopback (its vectors are bags of hashed words: texts sharing words are near).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { nearestNodes } from '../src/db/queries/graphs/node-vectors.js';
import { nodeEmbeddingText, signatureLine, MAX_EMBED_DOC } from '../src/domain/graphs/node-embedding-text.js';
import { semanticNodeHits, type SemanticContext } from '../src/domain/graphs/semantic-nodes.js';
import { Embedder } from '../src/embeddings/embedder.js';
import { ollamaProvider } from '../src/embeddings/ollama.js';
import { noEmbeddings } from '../src/embeddings/provider.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { testConfig, type ServerConfig } from '../support/test-config.js';
import { reembed } from '../src/commands/reembed.js';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { rest, startServer, type TestServer } from './helpers/server.js';
import { postTask } from './helpers/tasks.js';

const quiet = { info() {}, warn() {} };
/**
 * Nodes of the large graph: ten batches of the worker. (PGlite inserts into an HNSW index at ~25 ms
 * a 768-D vector — WASM —, Postgres at ~1 ms: the worker takes ~10 s over it on PGlite.)
 */
const LARGE = 320;

const ollama = (fake: FakeOllama, model = 'nomic-embed-text'): Partial<ServerConfig> => ({
  embedding: { provider: 'ollama', ollamaHost: fake.url, model, timeoutMs: 5_000 },
});

/** A request's context as semanticNodeHits needs it, with its own embedder (of the test's choosing). */
const contextOf = (database: TestDb, embedder: Embedder): SemanticContext => ({
  db: database.db.kysely,
  timing() {},
  memory: { embedder },
});
const embedderAt = (fake: FakeOllama, model = 'nomic-embed-text') =>
  new Embedder(ollamaProvider({ host: fake.url, model, timeoutMs: 5_000 }), quiet);

/** A small graph whose nodes share no words with each other's documents, so a question's nearest is known. */
function retryGraph(commitHash: string, analyzedAt = '2026-01-01T00:00:00Z') {
  return {
    commitHash,
    analyzedAt,
    nodes: [
      {
        id: 'file::src/retry.ts',
        name: 'src/retry.ts',
        type: 'FILE',
        filePath: 'src/retry.ts',
        startLine: 1,
        endLine: 9,
        rawCode: "import { sleep } from './sleep';\n",
      },
      {
        id: 'src/retry.ts::calculateDelay',
        name: 'calculateDelay',
        type: 'FUNCTION',
        filePath: 'src/retry.ts',
        startLine: 2,
        endLine: 5,
        rawCode:
          '/** Exponential backoff with jitter between attempts. */\nexport function calculateDelay(attempt: number): number {\n  return 2 ** attempt * 100 + Math.random() * 50;\n}',
      },
      {
        id: 'src/headers.ts::parseHeaders',
        name: 'parseHeaders',
        type: 'FUNCTION',
        filePath: 'src/headers.ts',
        startLine: 1,
        endLine: 4,
        technicalSummary: 'Parses raw response header lines into a map.',
        rawCode: 'export function parseHeaders(raw: string): Map<string, string> {\n  return new Map();\n}',
      },
      {
        id: 'src/client.ts::Client',
        name: 'Client',
        type: 'CLASS',
        filePath: 'src/client.ts',
        startLine: 1,
        endLine: 40,
        rawCode: '/** Keeps sockets pooled per origin. */\nexport class Client {\n}',
      },
      { id: 'lodash::merge', name: 'merge', type: 'GHOST', filePath: '', startLine: 0, endLine: 0 },
    ],
    edges: [{ from: 'src/retry.ts::calculateDelay', to: 'lodash::merge', type: 'CALLS' }],
  };
}

/** `count` functions with documents of their own, for a graph the worker takes a while over. */
function largeGraph(commitHash: string, count: number) {
  return {
    commitHash,
    analyzedAt: '2026-02-01T00:00:00Z',
    nodes: Array.from({ length: count }, (_, i) => ({
      id: `src/gen.ts::generated${i}`,
      name: `generated${i}`,
      type: 'FUNCTION',
      filePath: 'src/gen.ts',
      startLine: i + 1,
      endLine: i + 1,
      rawCode: `export function generated${i}(): number { return ${i}; }`,
    })),
    edges: [],
  };
}

describe('nodeEmbeddingText', () => {
  test('name words, the signature line, then the doc comment or summaries; short; none for GHOST nodes', () => {
    const code =
      '/**\n * Exponential backoff with jitter.\n */\n@memo()\nexport function calculateDelay(attempt: number): number {\n  return 1;\n}';
    assert.equal(signatureLine(code), 'export function calculateDelay(attempt: number): number {');
    assert.equal(
      nodeEmbeddingText({ name: 'calculateDelay', type: 'FUNCTION', code, summaries: [] }),
      'calculate delay\nexport function calculateDelay(attempt: number): number {\nExponential backoff with jitter.',
    );
    assert.equal(
      nodeEmbeddingText({
        name: 'Ky.retry',
        type: 'METHOD',
        code: 'async retry() {',
        summaries: ['Retries a request.'],
      }),
      'ky retry\nasync retry() {\nRetries a request.',
      'summaries take the place of doc comments',
    );
    assert.equal(
      nodeEmbeddingText({ name: 'src/a.ts', type: 'FILE', code: 'import x from "y";', summaries: [] }),
      'src a ts',
      "a file's first line is not a signature",
    );
    assert.equal(nodeEmbeddingText({ name: 'merge', type: 'GHOST', code: null, summaries: [] }), null);
    const long = nodeEmbeddingText({
      name: 'big',
      type: 'CLASS',
      code: `class Big {\n/* ${'word '.repeat(10_000)} */`,
      summaries: [],
    });
    assert.ok(long !== null && long.length <= MAX_EMBED_DOC, 'at most MAX_EMBED_DOC characters');
    assert.equal(signatureLine('\n'.repeat(200_000)), '', 'no signature in blank code (and no backtracking)');
  });
});

for (const backend of backends) {
  describe(`code-graph node vectors (${backend.name})`, () => {
    let database: TestDb;
    let fake: FakeOllama;
    let server: TestServer | undefined;

    before(async () => {
      database = await backend.open();
      fake = await new FakeOllama().start();
    });
    after(async () => {
      await server?.close();
      await fake?.stop();
      await database?.dispose();
    });

    const restart = async (overrides: Partial<ServerConfig>) => {
      await server?.close();
      server = await startServer(database, overrides);
      return server;
    };
    const upload = async (repo: string, file: unknown) => {
      const r = await rest(server!.url, 'POST', `/api/v1/graphs?repo=${repo}`, JSON.stringify(file));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { graphId: string; commitHash: string; nodes: number };
    };
    const pendingGauge = async () => {
      const r = await rest(server!.url, 'GET', '/metrics');
      const m = /^devstream_graph_node_embeddings_pending (\d+)$/m.exec(r.body as string);
      assert.ok(m, 'the gauge is on /metrics');
      return Number(m[1]);
    };
    const settled = () => eventually(async () => ((await pendingGauge()) === 0 ? true : undefined), 90_000);
    const vectorsOf = async (g: { graphId: string; commitHash: string }) =>
      (
        await sql<{ n: number }>`select count(*)::int as n from graph_node_vectors
                                  where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}`.execute(
          database.db.kysely,
        )
      ).rows[0]!.n;
    const jobsOf = async (g: { graphId: string; commitHash: string }) =>
      (
        await sql<{ n: number }>`select count(*)::int as n from graph_node_embedding_jobs
                                  where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}`.execute(
          database.db.kysely,
        )
      ).rows[0]!.n;
    const queryVector = (question: string, dims = 768) => FakeOllama.vector(`search_query: ${question}`, dims);

    test('after an upload every node but the GHOST gets a vector; the nearest node to a question is the one whose document shares its words', async () => {
      await restart(ollama(fake));
      const g = await upload('retry-lib', retryGraph('c1'));
      await settled();
      assert.equal(await vectorsOf(g), 4, 'FILE, FUNCTION, FUNCTION, CLASS: not the GHOST');
      assert.ok(
        fake.calls.some((c) =>
          c.input.includes(
            'search_document: calculate delay\nexport function calculateDelay(attempt: number): number {\nExponential backoff with jitter between attempts.',
          ),
        ),
        'the worker embeds the node document with the document prefix',
      );

      const near = await nearestNodes(
        database.db.kysely,
        g,
        queryVector('how is the backoff jitter computed'),
        'nomic-embed-text',
        3,
      );
      assert.equal(near.length, 3);
      assert.equal(near[0]!.node_id, 'src/retry.ts::calculateDelay');
      assert.equal(near[0]!.seq, 1);
      assert.ok(near[0]!.distance < near[1]!.distance && near[1]!.distance <= near[2]!.distance, 'nearest first');
      // A commit large next to all stored nodes goes through the HNSW index instead of the exact scan: same answer.
      await sql`update graph_commits set node_count = 1000000 where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}`.execute(
        database.db.kysely,
      );
      const viaIndex = await nearestNodes(
        database.db.kysely,
        g,
        queryVector('how is the backoff jitter computed'),
        'nomic-embed-text',
        3,
      );
      // The others share no word with the question (distance 1): which of those ties the index returns is its own.
      assert.equal(viaIndex[0]!.node_id, near[0]!.node_id);
      assert.deepEqual(
        viaIndex.map((h) => h.distance.toFixed(3)),
        near.map((h) => h.distance.toFixed(3)),
      );
      await sql`update graph_commits set node_count = 5 where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}`.execute(
        database.db.kysely,
      );
      assert.deepEqual(
        await nearestNodes(database.db.kysely, g, queryVector('backoff jitter'), 'another-model', 3),
        [],
        "only the model's rows",
      );

      const semantic = await semanticNodeHits(
        contextOf(database, embedderAt(fake)),
        g,
        'parse the response header lines',
        2,
      );
      assert.equal(semantic.status, 'ok');
      assert.equal(semantic.note, null);
      assert.equal(semantic.hits[0]!.node_id, 'src/headers.ts::parseHeaders', 'summaries are in the document');

      const none = await semanticNodeHits(contextOf(database, new Embedder(noEmbeddings, quiet)), g, 'backoff', 2);
      assert.deepEqual(none.hits, []);
      assert.equal(none.status, 'no-embedder');
    });

    test('find_symbols and resolve_context: a node no word of the question reaches is found by meaning, below the hits of its words; without an embedder, words alone and the answer says so', async () => {
      const graph = retryGraph('f1');
      graph.nodes.push({
        id: 'src/worker.ts::restartOnFailure',
        name: 'restartOnFailure',
        type: 'FUNCTION',
        filePath: 'src/worker.ts',
        startLine: 1,
        endLine: 3,
        rawCode: '/** Restarts the worker after a failure. */\nexport function restartOnFailure(): void {\n}',
      });
      const ask = async (tool: string, args: Record<string, unknown>) => {
        const r = await rest(server!.url, 'POST', `/api/v1/tools/${tool}`, { repo: 'meaning-lib', ...args });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body;
      };
      const symbols = (body: { symbols: Array<{ nodeId: string }> }) => body.symbols.map((s) => s.nodeId);

      // No embedder: "outage" is in no node's text, so the words find nothing, and the answers say why.
      await restart({});
      await upload('meaning-lib', graph);
      const blind = await ask('find_symbols', { query: 'what happens after an outage', limit: 5 });
      assert.deepEqual(symbols(blind), []);
      assert.equal(blind.semantic.status, 'no-embedder');
      const blindPacket = await ask('resolve_context', { task: 'what happens after an outage', intent: 'pinpoint' });
      assert.equal(blindPacket.semantic.status, 'no-embedder');
      assert.match(blindPacket.packet, /no node matches the words of "what happens after an outage"/);

      // With one (the fake model reads "outage" as "failure"): the meaning finds the node.
      await restart(ollama(fake));
      await upload('meaning-lib', { ...graph, commitHash: 'f2', analyzedAt: '2026-01-02T00:00:00Z' });
      await settled();
      const found = await ask('find_symbols', { query: 'what happens after an outage', limit: 5 });
      assert.equal(found.semantic.status, 'ok');
      assert.equal(symbols(found)[0], 'src/worker.ts::restartOnFailure');
      const packet = await ask('resolve_context', { task: 'what happens after an outage', intent: 'pinpoint' });
      assert.equal(packet.semantic.status, 'ok');
      assert.match(packet.packet, /^ANSWER restartOnFailure \(symbol\) — src\/worker\.ts:1$/m);

      // A node the words select stays ahead of one found by meaning alone, however near that one is.
      const both = await ask('find_symbols', { query: 'delay after an outage', limit: 5 });
      assert.deepEqual(symbols(both).slice(0, 2), ['src/retry.ts::calculateDelay', 'src/worker.ts::restartOnFailure']);
      assert.ok(both.symbols[0].relevance > both.symbols[1].relevance, JSON.stringify(both.symbols));
    });

    test('a new commit takes the vectors of its unchanged nodes from the one before: only changed nodes are embedded', async () => {
      await restart(ollama(fake));
      const first = await upload('push-lib', retryGraph('p1', '2026-04-01T00:00:00Z'));
      await settled();
      const callsBefore = fake.calls.length;
      const next = retryGraph('p2', '2026-04-02T00:00:00Z');
      next.nodes[3]!.rawCode = '/** Reuses idle sockets for keep-alive connections. */\nexport class Client {\n}';
      const second = await upload('push-lib', next);
      await settled();
      assert.equal(await vectorsOf(second), 4);
      assert.deepEqual(
        fake.calls.slice(callsBefore).flatMap((c) => c.input),
        ['search_document: client\nexport class Client {\nReuses idle sockets for keep-alive connections.'],
        'one embedder call, for the changed node alone',
      );
      const near = await nearestNodes(
        database.db.kysely,
        second,
        queryVector('idle keep-alive sockets'),
        'nomic-embed-text',
        1,
      );
      assert.equal(near[0]!.node_id, 'src/client.ts::Client');
      const same = await sql<{ same: boolean }>`
        select a.embedding = b.embedding as same from graph_node_vectors a join graph_node_vectors b using (graph_id, seq)
         where a.graph_id = ${first.graphId} and a.commit_hash = 'p1' and b.commit_hash = 'p2' and seq = 1`.execute(
        database.db.kysely,
      );
      assert.deepEqual(same.rows, [{ same: true }], "calculateDelay's vector was taken over");
    });

    test('an upload while the embedder is down succeeds; its nodes are pending, the question falls back, and they are embedded once it is back', async () => {
      await restart(ollama(fake));
      const d0 = await upload('down-lib', retryGraph('d0', '2026-05-01T00:00:00Z'));
      await settled();
      await fake.stop();
      const down = await semanticNodeHits(contextOf(database, embedderAt(fake)), d0, 'backoff jitter', 3);
      assert.equal(down.status, 'unavailable', 'never throws because the embedder is down');
      assert.deepEqual(down.hits, []);
      assert.match(down.note ?? '', /unreachable/);

      // A new commit changing one node: the others take d0's vectors without the embedder, that one waits.
      const next = retryGraph('d1', '2026-05-02T00:00:00Z');
      next.nodes[3]!.rawCode = '/** Drains sockets on close. */\nexport class Client {\n}';
      const d1 = await upload('down-lib', next);
      await eventually(async () => ((await pendingGauge()) === 1 ? true : undefined), 30_000);
      // And a graph of its own: all four of its nodes wait.
      const e1 = await upload('fresh-lib', retryGraph('e1'));
      assert.equal(await pendingGauge(), 5, "the latest commits' nodes waiting");

      const other = await new FakeOllama().start();
      try {
        const partial = await semanticNodeHits(contextOf(database, embedderAt(other)), d1, 'backoff jitter', 3);
        assert.equal(partial.status, 'pending');
        assert.equal(partial.hits.length, 3, 'among the nodes embedded so far');
        assert.equal(partial.hits[0]!.node_id, 'src/retry.ts::calculateDelay');
        const callsBefore = other.calls.length;
        const none = await semanticNodeHits(contextOf(database, embedderAt(other)), e1, 'backoff jitter', 3);
        assert.equal(none.status, 'pending');
        assert.deepEqual(none.hits, []);
        assert.equal(other.calls.length, callsBefore, 'nothing to compare with: the question is not embedded');
      } finally {
        await other.stop();
      }

      await fake.start();
      await settled();
      assert.equal(await vectorsOf(d1), 4);
      assert.equal(await vectorsOf(e1), 4);
      const back = await semanticNodeHits(contextOf(database, embedderAt(fake)), e1, 'backoff jitter', 3);
      assert.equal(back.status, 'ok');
      assert.equal(back.hits[0]!.node_id, 'src/retry.ts::calculateDelay');
    });

    test('a commit uploaded without an embedder has no vectors and says so; turning embeddings on embeds the latest commits', async () => {
      await restart({});
      const g = await upload('plain-lib', retryGraph('n1'));
      assert.equal(await jobsOf(g), 0, 'EMBEDDING_PROVIDER=none queues nothing');
      const callsBefore = fake.calls.length;
      const missing = await semanticNodeHits(contextOf(database, embedderAt(fake)), g, 'backoff jitter', 3);
      assert.equal(missing.status, 'unavailable');
      assert.match(missing.note ?? '', /no node of this commit has a vector of nomic-embed-text/);
      assert.equal(fake.calls.length, callsBefore, 'no embedder call');

      await restart(ollama(fake));
      await settled();
      assert.equal(await vectorsOf(g), 4, 'the worker queued the latest commit at its start');

      // A next commit takes n1's vectors; `devstream-hub reembed --all` embeds its nodes anew all the same.
      const callsBeforeN2 = fake.calls.length;
      await upload('plain-lib', retryGraph('n2', '2026-06-01T00:00:00Z'));
      await settled();
      assert.equal(fake.calls.length, callsBeforeN2, 'n2 took n1 vectors');
      // The service stops first: its worker would otherwise lease the queued nodes before the command's
      // drain does (a race CI lost once), and the command would report them still queued.
      await server!.close();
      server = undefined;
      const printed: string[] = [];
      const log = console.log;
      console.log = (line: string) => void printed.push(line);
      const callsBefore2 = fake.calls.length;
      try {
        assert.equal(await reembed(testConfig(ollama(fake)), database.db, { all: true }), 0);
      } finally {
        console.log = log;
      }
      assert.ok(
        fake.calls.slice(callsBefore2).some((c) => c.input.some((t) => t.includes('calculate delay'))),
        'the nodes went to the embedder again',
      );
      assert.ok(
        printed.some((l) => /^Queued \d+ code-graph nodes of the latest commits\.$/.test(l)),
        printed.join('\n'),
      );
      assert.ok(
        printed.some((l) => /^Embedded \d+ code-graph nodes; 0 still queued\.$/.test(l)),
        printed.join('\n'),
      );
    });

    test('memories are embedded while a large graph waits: the worker looks for them before each node batch', async () => {
      await restart(ollama(fake));
      const task = await postTask(server!.url, 'Tune the pool', 'Large Graph');
      // Each embedder call takes 100 ms: the graph's ten batches take a second at least.
      fake.delayMs = 100;
      try {
        const g = await upload('large-lib', largeGraph('l1', LARGE));
        // The worker is into the graph.
        await eventually(async () => ((await vectorsOf(g)) > 0 ? true : undefined), 30_000);
        const updated = await rest(server!.url, 'PATCH', `/api/v1/tasks/${task.id}`, {
          status: 'active',
          notes: 'pool size raised to sixteen',
        });
        assert.equal(updated.status, 200, JSON.stringify(updated.body));
        const memoryId = updated.body.memory_id as string;
        await eventually(async () => {
          const m = await rest(server!.url, 'GET', `/api/v1/memories/${memoryId}`);
          return m.body.memory?.embedding_dimensions === 768 ? true : undefined;
        }, 90_000);
        await settled();
        assert.equal(await vectorsOf(g), LARGE);

        // In the order the embedder was called: the task note's call came while the graph still had batches to go.
        const calls = fake.calls.map((c) => c.input.join('\n'));
        const noteCall = calls.findIndex((c) => c.includes('pool size raised to sixteen'));
        const lastNodeCall = calls.findLastIndex((c) => c.includes('export function generated'));
        assert.ok(noteCall !== -1, 'the worker embedded the task note');
        assert.ok(
          noteCall < lastNodeCall,
          `the note (call ${noteCall}) did not wait for the whole graph (last ${lastNodeCall})`,
        );
      } finally {
        fake.delayMs = 0;
      }
    });

    test('a shutdown does not wait for a large graph to be embedded: the worker stops after its batch in flight', async () => {
      await restart(ollama(fake));
      fake.delayMs = 100;
      let g: { graphId: string; commitHash: string };
      try {
        g = await upload('stopped-lib', largeGraph('s1', LARGE));
        await eventually(async () => ((await vectorsOf(g)) > 0 ? true : undefined), 30_000);
        await server!.close();
        server = undefined;
        assert.ok((await jobsOf(g)) > 0, 'the rest of the graph is still queued');
      } finally {
        fake.delayMs = 0;
      }
      await restart(ollama(fake));
      await settled();
      assert.equal(await vectorsOf(g), LARGE, 'the next start embeds the rest');
    });

    test('a re-upload of the commit re-queues its nodes; a commit dropped by retention takes its vectors and jobs along', async () => {
      await restart({ ...ollama(fake), graphs: { retention: 2, uploadLimit: 64 * 1024 * 1024, analyzeRoots: [] } });
      const first = await upload('kept-lib', retryGraph('k1', '2026-03-01T00:00:00Z'));
      await settled();
      assert.equal(await vectorsOf(first), 4);

      const callsBefore = fake.calls.length;
      const again = await upload('kept-lib', retryGraph('k1', '2026-03-01T00:00:00Z'));
      await settled();
      assert.equal(await vectorsOf(again), 4, 'embedded again');
      assert.ok(
        fake.calls.slice(callsBefore).some((c) => c.input.some((t) => t.includes('calculate delay'))),
        'the re-uploaded nodes were embedded again',
      );

      // Commits k2 and k3 change one node each: while the embedder is down, it waits in the queue.
      const changed = (commit: string, day: string) => {
        const file = retryGraph(commit, `2026-03-0${day}T00:00:00Z`);
        file.nodes[3]!.rawCode = `/** Pools sockets, version ${commit}. */\nexport class Client {\n}`;
        return file;
      };
      await fake.stop();
      try {
        const second = await upload('kept-lib', changed('k2', '2'));
        // The three unchanged nodes take k1's vectors (no embedder needed); the changed one waits.
        await eventually(async () => ((await jobsOf(second)) === 1 ? true : undefined), 30_000);
        const third = await upload('kept-lib', changed('k3', '3'));
        await eventually(async () => ((await jobsOf(third)) === 1 ? true : undefined), 30_000);
        assert.equal(await vectorsOf(first), 0, 'the dropped commit took its vectors along');
        assert.equal(await jobsOf(first), 0);
        // k2 is dropped in turn, with its vectors and the job still waiting.
        await upload('kept-lib', changed('k4', '4'));
        assert.equal(await jobsOf(second), 0, 'a dropped commit takes its jobs along');
        assert.equal(await vectorsOf(second), 0);
      } finally {
        await fake.start();
      }
      await settled();
    });

    test('a change of OLLAMA_EMBEDDING_MODEL re-embeds the latest commits, with a model per row', async () => {
      await restart(ollama(fake));
      const g = await upload('model-lib', retryGraph('m1'));
      await settled();
      await restart(ollama(fake, 'mini-embed'));
      await settled();
      const models = await sql<{ embedding_model: string; embedding_dims: number }>`
        select distinct embedding_model, embedding_dims from graph_node_vectors
         where graph_id = ${g.graphId} and commit_hash = ${g.commitHash}`.execute(database.db.kysely);
      assert.deepEqual(models.rows, [{ embedding_model: 'mini-embed', embedding_dims: 384 }]);
      const near = await semanticNodeHits(contextOf(database, embedderAt(fake, 'mini-embed')), g, 'backoff jitter', 1);
      assert.equal(near.status, 'ok');
      assert.equal(near.hits[0]!.node_id, 'src/retry.ts::calculateDelay');
      const index = await sql<{ n: number }>`select count(*)::int as n from pg_indexes
                                               where indexname = 'idx_graph_node_vectors_embedding_384'`.execute(
        database.db.kysely,
      );
      assert.equal(index.rows[0]!.n, 1, "the new dimension's HNSW index was created");
    });
  });
}
