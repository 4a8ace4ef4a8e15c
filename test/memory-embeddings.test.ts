import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { rest, startServer, type TestServer } from './helpers/server.js';
import type { ServerConfig } from '../support/test-config.js';

const ollama = (fake: FakeOllama, overrides: Partial<ServerConfig['embedding']> = {}): Partial<ServerConfig> => ({
  embedding: { provider: 'ollama', ollamaHost: fake.url, model: 'nomic-embed-text', timeoutMs: 5_000, ...overrides },
});

for (const backend of backends) {
  describe(`embeddings never lose a write (${backend.name})`, () => {
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
    const api = (method: string, path: string, body?: unknown) => rest(server!.url, method, path, body);
    const memory = async (id: string) => (await api('GET', `/api/v1/memories/${id}`)).body.memory;

    test('Ollama down: the memory is stored text-only, found by keyword at once, and embedded when Ollama is back', async () => {
      await restart(ollama(fake));
      await fake.stop();
      const stored = await api('POST', '/api/v1/memories', {
        content: 'Circuit breaker opens after five consecutive upstream timeouts.',
        content_type: 'learning',
        project: 'Outage',
      });
      assert.equal(stored.status, 201, 'a write never fails because the embedder is down');
      assert.equal(stored.body.embedding_generated, false);
      assert.equal(stored.body.embedding_model, null);
      assert.equal(stored.body.embedding_dimensions, null);
      assert.match(stored.body.embedding_note, /unreachable/i);

      const viaTool = await rest(server!.url, 'POST', '/api/v1/tools/devstream_store_memory', {
        content: 'Second note while the embedder is down.',
        content_type: 'context',
        project: 'Outage',
      });
      assert.equal(viaTool.body.embedding_generated, false);

      const found = await api('POST', '/api/v1/memories/search', {
        query: 'circuit breaker timeouts',
        project: 'Outage',
      });
      assert.equal(found.status, 200);
      assert.equal(found.body.method, 'keyword');
      assert.match(found.body.method_note, /unreachable|retrying/i);
      assert.equal(found.body.results[0]?.memory_id, stored.body.memory_id);
      assert.equal(found.body.results[0].vector_rank, null);
      assert.equal(found.body.results[0].keyword_rank, 1);

      const ready = await api('GET', '/readyz');
      assert.equal(ready.status, 200, 'an embedder outage does not make the service unready');
      assert.equal(ready.body.embeddings.state, 'down');
      assert.ok(ready.body.embeddings.queue.pending >= 2);

      await fake.start();
      const embedded = await eventually(async () => {
        const m = await memory(stored.body.memory_id);
        return m.embedding_dimensions === 768 ? m : undefined;
      }, 30_000);
      assert.equal(embedded.embedding_model, 'nomic-embed-text');
      const worked = fake.calls.find((c) =>
        c.input.includes('search_document: Circuit breaker opens after five consecutive upstream timeouts.'),
      );
      assert.ok(worked, 'the worker embeds with the document prefix');

      const hybrid = await api('POST', '/api/v1/memories/search', {
        query: 'circuit breaker timeouts',
        project: 'Outage',
      });
      assert.equal(hybrid.body.method, 'hybrid');
      assert.equal(hybrid.body.results[0].memory_id, stored.body.memory_id);
      assert.equal(hybrid.body.results[0].vector_rank, 1);
      const queue = await eventually(async () => {
        const r = await api('GET', '/readyz');
        return r.body.embeddings.queue.pending === 0 ? r.body.embeddings : undefined;
      });
      assert.equal(queue.state, 'up');
    });

    test('two service instances share the queue: every queued memory is embedded exactly once', async () => {
      await restart(ollama(fake));
      await fake.stop();
      const contents = Array.from(
        { length: 40 },
        (_, i) => `Queued while down, note number ${i} about shard ${i % 7}.`,
      );
      for (const content of contents) {
        const r = await api('POST', '/api/v1/memories', { content, content_type: 'output', project: 'Two Instances' });
        assert.equal(r.status, 201);
        assert.equal(r.body.embedding_generated, false);
      }
      const second = await startServer(database, ollama(fake, {}));
      try {
        const callsBefore = fake.calls.length;
        await fake.start();
        await eventually(async () => {
          const left = await database.db.kysely.selectFrom('embedding_jobs').select('memory_id').execute();
          return left.length === 0 ? true : undefined;
        }, 30_000);
        const embeddedTexts = fake.calls.slice(callsBefore).flatMap((c) => c.input);
        for (const content of contents) {
          assert.equal(embeddedTexts.filter((t) => t === `search_document: ${content}`).length, 1, content);
        }
      } finally {
        await second.close();
      }
    });

    test('an Ollama error answer (500) is a text-only store too, with the reason', async () => {
      await restart(ollama(fake));
      fake.failWith = 500;
      try {
        const stored = await api('POST', '/api/v1/memories', {
          content: 'Stored during a 500.',
          content_type: 'output',
          project: 'Errors',
        });
        assert.equal(stored.status, 201);
        assert.equal(stored.body.embedding_generated, false);
        assert.match(stored.body.embedding_note, /500/);
      } finally {
        fake.failWith = null;
      }
    });

    test('a vector the index cannot hold (values beyond half precision) is a text-only store, with the reason', async () => {
      await restart(ollama(fake));
      fake.scale = 1e6;
      try {
        const stored = await api('POST', '/api/v1/memories', {
          content: 'Stored by an unnormalised model.',
          content_type: 'output',
          project: 'Huge',
        });
        assert.equal(stored.status, 201);
        assert.equal(stored.body.embedding_generated, false);
        assert.match(stored.body.embedding_note, /65504/);
        const found = await api('POST', '/api/v1/memories/search', { query: 'unnormalised model', project: 'Huge' });
        assert.equal(found.body.results[0]?.memory_id, stored.body.memory_id, 'findable by keyword at once');
      } finally {
        fake.scale = 1;
      }
    });

    test('OLLAMA_TIMEOUT_MS is honoured: a hung Ollama delays a store by the timeout, not more', async () => {
      await restart(ollama(fake, { timeoutMs: 300 }));
      fake.delayMs = 5_000;
      try {
        const started = Date.now();
        const stored = await api('POST', '/api/v1/memories', {
          content: 'Stored while Ollama hangs.',
          content_type: 'context',
          project: 'Slow',
        });
        const elapsed = Date.now() - started;
        assert.equal(stored.status, 201);
        assert.equal(stored.body.embedding_generated, false);
        assert.match(stored.body.embedding_note, /did not answer within 300 ms/);
        assert.ok(elapsed < 4_000, `the store waited ${elapsed} ms, not Ollama's 5 s`);

        // Known down: the next request does not wait at all, and search degrades to keywords.
        const next = Date.now();
        const search = await api('POST', '/api/v1/memories/search', { query: 'ollama hangs', project: 'Slow' });
        assert.equal(search.body.method, 'keyword');
        assert.ok(Date.now() - next < 4_000);
        assert.equal(search.body.results[0]?.memory_id, stored.body.memory_id);
      } finally {
        fake.delayMs = 0;
      }
      const m = await eventually(async () => {
        const got = await memory(
          (await api('POST', '/api/v1/memories/search', { query: 'ollama hangs', project: 'Slow' })).body.results[0]
            .memory_id,
        );
        return got.embedding_dimensions === 768 ? got : undefined;
      }, 30_000);
      assert.equal(m.embedding_model, 'nomic-embed-text');
    });

    test('a model change re-embeds every memory in the background; search uses the new model only', async () => {
      await restart(ollama(fake));
      const stored = await api('POST', '/api/v1/memories', {
        content: 'Blue-green deploys switch the load balancer.',
        content_type: 'decision',
        project: 'Models',
      });
      assert.equal(stored.body.embedding_dimensions, 768);

      await restart(ollama(fake, { model: 'mini-embed' }));
      const remodelled = await eventually(async () => {
        const rows = await database.db.kysely
          .selectFrom('semantic_memory')
          .select(['embedding_model', 'embedding_dims'])
          .where('archived_at', 'is', null)
          .execute();
        return rows.every((r) => r.embedding_model === 'mini-embed') ? rows : undefined;
      }, 30_000);
      assert.ok(remodelled.length >= 4);
      assert.ok(remodelled.every((r) => r.embedding_dims === 384));

      const s = await api('POST', '/api/v1/memories/search', { query: 'blue green deploys', project: 'Models' });
      assert.equal(s.body.method, 'hybrid');
      assert.equal(s.body.results[0].memory_id, stored.body.memory_id);
      assert.equal(s.body.results[0].vector_rank, 1, 'the 384-D vectors are searched');
      assert.equal((await memory(stored.body.memory_id)).embedding_model, 'mini-embed');
      assert.ok(
        fake.calls.some((c) => c.model === 'mini-embed' && c.input.length > 1),
        'the worker batches',
      );
    });

    test('an unknown model is reported, and writes go on', async () => {
      await restart(ollama(fake, { model: 'no-such-model' }));
      const stored = await api('POST', '/api/v1/memories', {
        content: 'Written with a missing model.',
        content_type: 'context',
        project: 'Missing Model',
      });
      assert.equal(stored.status, 201);
      assert.equal(stored.body.embedding_generated, false);
      assert.match(stored.body.embedding_note, /404.*no-such-model.*not found/);
    });

    test('a store stages its vector: searches find it before and after the worker indexes it, filtered alike', async () => {
      await restart(ollama(fake));
      const db = database.db.kysely;
      const stored = await api('POST', '/api/v1/memories', {
        content: 'Staged vectors wait in the job table for the HNSW insert.',
        content_type: 'learning',
        project: 'Staging',
      });
      assert.equal(stored.status, 201);
      assert.equal(stored.body.embedding_generated, true);
      const id: string = stored.body.memory_id;
      const state = async () => {
        const job = await db
          .selectFrom('embedding_jobs')
          .select('memory_id')
          .where('memory_id', '=', id)
          .executeTakeFirst();
        const vector = await db
          .selectFrom('memory_vectors')
          .select('memory_id')
          .where('memory_id', '=', id)
          .executeTakeFirst();
        return { staged: job !== undefined, indexed: vector !== undefined };
      };
      // The worker moves the vector into memory_vectors (and the index) off the store's path.
      await eventually(async () => {
        const s = await state();
        return !s.staged && s.indexed ? true : undefined;
      }, 30_000);
      const search = (project: string) =>
        api('POST', '/api/v1/memories/search', { query: 'jobs waiting for an index insert', project });
      const indexed = (await search('Staging')).body.results.find((r: any) => r.memory_id === id);
      assert.ok(indexed?.vector_rank, 'found by the vector branch once indexed');

      // Back to the state a store leaves behind: the vector in the job, none in memory_vectors.
      await sql`insert into embedding_jobs (memory_id, embedding) select memory_id, embedding from memory_vectors where memory_id = ${id}`.execute(
        db,
      );
      await sql`delete from memory_vectors where memory_id = ${id}`.execute(db);
      const staged = (await search('Staging')).body.results.find((r: any) => r.memory_id === id);
      assert.equal(staged?.vector_rank, indexed.vector_rank, 'a staged vector ranks as an indexed one');
      assert.ok(Math.abs(staged.distance - indexed.distance) < 1e-6);
      assert.equal((await search('Elsewhere')).body.results.length, 0, 'filters apply to staged vectors');
      const got = await memory(id);
      assert.equal(got.embedding_model, 'nomic-embed-text');
      assert.equal(got.embedding_dimensions, 768);

      // The next store wakes the worker, which indexes every staged vector.
      await api('POST', '/api/v1/memories', {
        content: 'Another note wakes the worker.',
        content_type: 'context',
        project: 'Staging',
      });
      await eventually(async () => {
        const s = await state();
        return !s.staged && s.indexed ? true : undefined;
      }, 30_000);
      assert.equal(
        (await search('Staging')).body.results.find((r: any) => r.memory_id === id)?.vector_rank,
        indexed.vector_rank,
      );
    });

    test(
      'background work starts in a lull of the requests: while one is in flight a staged vector waits, a second at most',
      {
        skip:
          backend.name === 'pglite' && "PGlite's connection turns order its background statements (pglite-background)",
      },
      async () => {
        await restart(ollama(fake));
        const db = database.db.kysely;
        // The worker's first round (at start) has run: it waits for a lull of its own, a second at most.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        // A request in flight meanwhile: its body is still arriving.
        const held = request(`${server!.url}/api/v1/memories`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': '1000' },
        });
        held.on('error', () => {});
        held.write('{"content": "');
        try {
          await eventually(async () => (server!.app.drain.inFlight() === 1 ? true : undefined), 10_000);
          const stored = await api('POST', '/api/v1/memories', {
            content: 'Background writes wait for a pause in the calls.',
            content_type: 'learning',
            project: 'Lulls',
          });
          assert.equal(stored.status, 201);
          assert.equal(stored.body.embedding_generated, true);
          const storedAt = performance.now();
          const indexed = async () =>
            (await db
              .selectFrom('memory_vectors')
              .select('memory_id')
              .where('memory_id', '=', stored.body.memory_id)
              .executeTakeFirst()) !== undefined;
          // The worker's round is due 250 ms after the store; without the lull it ran then.
          await new Promise((resolve) => setTimeout(resolve, 700));
          assert.equal(await indexed(), false, 'not indexed while a request is in flight');
          // ... but not held back for longer than a second by it.
          await eventually(async () => ((await indexed()) ? true : undefined), 20_000);
          assert.ok(performance.now() - storedAt >= 1_000, 'indexed after its wait for a lull ran out');
          assert.equal(server!.app.drain.inFlight(), 1, 'the request was in flight throughout');
        } finally {
          held.destroy();
        }
      },
    );

    test('vectors of any size: past what a B-tree entry (1,536-D) or HNSW (4,096-D) holds, stores and searches still work', async () => {
      fake.models.set('wide-embed', 1536);
      fake.models.set('huge-embed', 4096);
      // Each model's memory in words no other memory has: the vector branch must rank it first everywhere.
      for (const [model, topic] of [
        ['wide-embed', 'lighthouse keepers'],
        ['huge-embed', 'glacier surveyors'],
      ] as const) {
        await restart(ollama(fake, { model }));
        const project = `Dims ${model}`;
        const stored = await api('POST', '/api/v1/memories', {
          content: `Notes on ${topic}.`,
          content_type: 'context',
          project,
        });
        assert.equal(stored.status, 201);
        assert.equal(stored.body.embedding_model, model);
        assert.equal(stored.body.embedding_dimensions, fake.models.get(model));
        const indexed = await eventually(async () => {
          const row = await database.db.kysely
            .selectFrom('memory_vectors')
            .select('embedding_dims')
            .where('memory_id', '=', stored.body.memory_id)
            .executeTakeFirst();
          return row?.embedding_dims;
        }, 30_000);
        assert.equal(indexed, fake.models.get(model), 'the worker moved the staged vector into memory_vectors');
        for (const scope of [{ project }, {}]) {
          const found = await api('POST', '/api/v1/memories/search', { query: topic, ...scope });
          assert.equal(found.status, 200, JSON.stringify(found.body));
          assert.equal(found.body.method, 'hybrid');
          const hit = found.body.results.find((r: any) => r.memory_id === stored.body.memory_id);
          assert.equal(hit?.vector_rank, 1, `${model} ${JSON.stringify(scope)}`);
        }
      }
      const indexes = await sql<{
        name: string;
      }>`select indexname as name from pg_indexes where tablename = 'memory_vectors' and indexname ~ '_(1536|4096)$'`.execute(
        database.db.kysely,
      );
      assert.deepEqual(
        indexes.rows.map((r) => r.name).sort(),
        ['idx_memory_vectors_embedding_1536'],
        'HNSW up to 4,000-D; the covering B-tree up to 1,024-D',
      );
    });

    test('a duplicate is answered without waiting for a hung embedder', async () => {
      await restart(ollama(fake, { timeoutMs: 3_000 }));
      const content = 'Duplicates are found while the embedder works.';
      const first = await api('POST', '/api/v1/memories', { content, content_type: 'context', project: 'Dup Hang' });
      fake.delayMs = 10_000;
      try {
        const started = Date.now();
        const again = await api('POST', '/api/v1/memories', { content, content_type: 'context', project: 'dup hang' });
        const elapsed = Date.now() - started;
        assert.equal(again.status, 201);
        assert.equal(again.body.duplicate, true);
        assert.equal(again.body.memory_id, first.body.memory_id);
        assert.ok(elapsed < 2_500, `the duplicate waited ${elapsed} ms for the embedder (timeout 3 s)`);
      } finally {
        fake.delayMs = 0;
      }
    });

    test('EMBEDDING_PROVIDER=none: keyword search, no embed calls, nothing queued', async () => {
      await restart({
        embedding: { provider: 'none', ollamaHost: fake.url, model: 'nomic-embed-text', timeoutMs: 1_000 },
      });
      const calls = fake.calls.length;
      const stored = await api('POST', '/api/v1/memories', {
        content: 'Keyword-only memory about sharding.',
        content_type: 'learning',
        project: 'No Embedder',
      });
      assert.equal(stored.body.embedding_generated, false);
      assert.match(stored.body.embedding_note, /EMBEDDING_PROVIDER=none/);
      const s = await api('POST', '/api/v1/memories/search', { query: 'sharding', project: 'No Embedder' });
      assert.equal(s.body.method, 'keyword');
      assert.equal(s.body.results[0].memory_id, stored.body.memory_id);
      const text = await api('POST', '/api/v1/tools/devstream_search_memory', {
        query: 'sharding',
        project: 'No Embedder',
      });
      assert.equal(text.status, 200);
      assert.equal(fake.calls.length, calls, 'no embedder calls');
      const queued = await database.db.kysely
        .selectFrom('embedding_jobs')
        .select('memory_id')
        .where('memory_id', '=', stored.body.memory_id)
        .execute();
      assert.equal(queued.length, 0);
    });
  });
}
