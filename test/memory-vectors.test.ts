import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely, type Transaction } from 'kysely';
import { completeJobs, indexStagedVectors } from '../src/db/queries/embedding-jobs.js';
import { deleteMemory } from '../src/db/queries/memories/delete-memory.js';
import { vectorRanksSql } from '../src/db/queries/memories/hybrid-search.js';
import type { SearchFilters } from '../src/db/queries/memories/search-filters.js';
import type { Database } from '../src/db/schema.js';
import { vectorLiteral } from '../src/db/vector-literal.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { backends, type TestDb } from './helpers/backends.js';

const PROJECT = '0000000000aa';
/** In the Postgres pass only (PGlite has one connection: nothing runs beside the worker's move). */
const postgres = backends.find((b) => b.name === 'postgres');

/** A memory as a store leaves it: model and dimensions on the row, the vector staged in its job. */
async function stagedMemory(db: Kysely<Database>, id: string, text: string, type = 'context'): Promise<void> {
  await sql`insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score,
                                         content_hash, embedding_model, embedding_dims, created_at)
            values (${id}, ${PROJECT}, ${text}, ${type}, 'text', 0.5, ${id}, 'nomic-embed-text', 768,
                    timestamptz '2026-03-04 05:06:07Z')`.execute(db);
  await sql`insert into embedding_jobs (memory_id, embedding)
            values (${id}, ${vectorLiteral(FakeOllama.vector(text))}::halfvec)`.execute(db);
}

const vectorRows = async (db: Kysely<Database>) =>
  (
    await sql<{ memory_id: string; project_id: string; content_type: string; dims: number; model: string }>`
      select memory_id, project_id, content_type, embedding_dims as dims, embedding_model as model
        from memory_vectors order by memory_id`.execute(db)
  ).rows;

for (const backend of backends) {
  describe(`memory vectors in their own table (${backend.name})`, () => {
    let database: TestDb;
    let db: Kysely<Database>;
    before(async () => {
      database = await backend.open();
      db = database.db.kysely;
      await sql`insert into intervention_plans (id, title, expected_outcome) values (${PROJECT}, 'Vectors', 'x')`.execute(
        db,
      );
    });
    after(() => database.dispose());

    test('the worker moves staged vectors with their filters; none for a memory deleted meanwhile; a delete erases one', async () => {
      await stagedMemory(db, '0000000000b1', 'first staged note', 'decision');
      await stagedMemory(db, '0000000000b2', 'second staged note');
      await stagedMemory(db, '0000000000b3', 'deleted before the move');
      // Deleted while staged (as deleteMemory leaves it, but with its job still there: a worker's claim).
      await sql`update semantic_memory set archived_at = now() where id = '0000000000b3'`.execute(db);

      assert.equal(await indexStagedVectors(db, 10), 3, 'every staged job taken');
      assert.deepEqual(await vectorRows(db), [
        {
          memory_id: '0000000000b1',
          project_id: PROJECT,
          content_type: 'decision',
          dims: 768,
          model: 'nomic-embed-text',
        },
        {
          memory_id: '0000000000b2',
          project_id: PROJECT,
          content_type: 'context',
          dims: 768,
          model: 'nomic-embed-text',
        },
      ]);
      const jobs = await sql<{ n: number }>`select count(*)::int as n from embedding_jobs`.execute(db);
      assert.equal(jobs.rows[0]!.n, 0);
      const moved = await sql<{ same: boolean }>`
        select v.embedding::text = ${vectorLiteral(FakeOllama.vector('first staged note'))}::halfvec::text as same
          from memory_vectors v where memory_id = '0000000000b1'`.execute(db);
      assert.equal(moved.rows[0]!.same, true, 'the staged vector itself');

      assert.deepEqual(await deleteMemory(db, '0000000000b1'), { project: 'Vectors' });
      assert.deepEqual(
        (await vectorRows(db)).map((r) => r.memory_id),
        ['0000000000b2'],
      );
    });

    test("a search's filters hold on the moved vectors: project, type, keywords, dates", async () => {
      await stagedMemory(db, '0000000000e1', 'filter probe one', 'learning');
      await stagedMemory(db, '0000000000e2', 'filter probe two', 'learning');
      await sql`update semantic_memory set keywords = '{policy}' where id = '0000000000e2'`.execute(db);
      await indexStagedVectors(db, 10);
      const hits = async (filters: SearchFilters) => {
        const vector = { values: FakeOllama.vector('filter probe'), model: 'nomic-embed-text', dims: 768 };
        const params = {
          query: 'zzunmatched',
          filters,
          limit: 10,
          k: 30,
          weights: { vector: 1, keyword: 1, neighbours: 0 },
          vector,
        };
        const { rows } = await vectorRanksSql(params, vector).execute(db);
        return rows.map((r) => r.id).sort();
      };
      assert.deepEqual(await hits({ project: 'Vectors', content_type: 'learning' }), ['0000000000e1', '0000000000e2']);
      assert.deepEqual(await hits({ project: 'Vectors', keywords: ['policy'] }), ['0000000000e2']);
      assert.deepEqual(await hits({ project: 'Elsewhere' }), []);
      assert.deepEqual(await hits({ content_type: 'learning', created_before: '2026-03-04T05:06:07Z' }), []);
      assert.deepEqual(await hits({ content_type: 'learning', created_after: '2026-03-04T05:06:07Z' }), [
        '0000000000e1',
        '0000000000e2',
      ]);
      assert.deepEqual(await hits({ content_type: 'learning', projects: ['elsewhere'] }), []);
    });

    test('a re-embedding replaces the vector and the model on the row', async () => {
      await stagedMemory(db, '0000000000c1', 'to be re-embedded');
      await indexStagedVectors(db, 10);
      await sql`insert into embedding_jobs (memory_id) values ('0000000000c1')`.execute(db);
      const stored = await completeJobs(
        db,
        [{ memory_id: '0000000000c1', content_hash: '0000000000c1', vector: FakeOllama.vector('x', 384) }],
        'mini-embed',
      );
      assert.equal(stored, 1);
      const row = (await vectorRows(db)).find((r) => r.memory_id === '0000000000c1');
      assert.deepEqual(row, {
        memory_id: '0000000000c1',
        project_id: PROJECT,
        content_type: 'context',
        dims: 384,
        model: 'mini-embed',
      });
      const memory = await db
        .selectFrom('semantic_memory')
        .select(['embedding_model', 'embedding_dims'])
        .where('id', '=', '0000000000c1')
        .executeTakeFirstOrThrow();
      assert.deepEqual(memory, { embedding_model: 'mini-embed', embedding_dims: 384 });
      // A memory whose content changed since the claim (another hash) keeps no stale vector.
      await sql`insert into embedding_jobs (memory_id) values ('0000000000c1')`.execute(db);
      assert.equal(
        await completeJobs(
          db,
          [{ memory_id: '0000000000c1', content_hash: 'other', vector: FakeOllama.vector('y', 384) }],
          'mini-embed',
        ),
        0,
      );
    });
  });
}

describe(
  'memory vectors: a delete while the worker moves the vector (postgres)',
  { skip: !postgres && 'needs Postgres (DATABASE_URL) in this pass: two connections at once' },
  () => {
    let database: TestDb;
    before(async () => {
      database = await postgres!.open();
      await sql`insert into intervention_plans (id, title, expected_outcome) values (${PROJECT}, 'Vectors', 'x')`.execute(
        database.db.kysely,
      );
    });
    after(() => database?.dispose());

    /** Waits until a statement matching `pattern` waits for a lock; false if none did within 10 s. */
    const waitsForLock = async (db: Kysely<Database>, pattern: string): Promise<boolean> => {
      for (let i = 0; i < 500; i++) {
        const waiting = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like ${pattern}`.execute(db);
        if (waiting.rows[0]!.n > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    };

    /** Runs `body` in a transaction held open until the returned release() is called. */
    const holdOpen = async (db: Kysely<Database>, body: (tx: Transaction<Database>) => Promise<void>) => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let ready!: () => void;
      const started = new Promise<void>((resolve) => (ready = resolve));
      const done = db.transaction().execute(async (tx) => {
        try {
          await body(tx);
        } finally {
          ready();
        }
        await held;
      });
      await started;
      return { release, done };
    };

    test('the delete waits for the move and then erases the vector the move wrote', async () => {
      const db = database.db.kysely;
      await stagedMemory(db, '0000000000d1', 'moved while deleted');
      const worker = await holdOpen(db, async (tx) => assert.equal(await indexStagedVectors(tx, 10), 1));
      const deleting = deleteMemory(db, '0000000000d1');
      const waited = await waitsForLock(db, '%update semantic_memory%');
      worker.release();
      await worker.done;
      assert.ok(waited, 'the delete waited for the move');
      assert.deepEqual(await deleting, { project: 'Vectors' });
      assert.deepEqual(await vectorRows(db), [], 'no vector outlives its memory');
    });

    test('a move skips a memory being deleted; an embedded job waits for the delete, then stores nothing', async () => {
      const db = database.db.kysely;
      await stagedMemory(db, '0000000000d2', 'deleted while moved');
      const deleter = await holdOpen(db, async (tx) => {
        assert.deepEqual(await deleteMemory(tx, '0000000000d2'), { project: 'Vectors' });
      });
      assert.equal(await indexStagedVectors(db, 10), 0, 'skipped: the delete holds the memory');
      const completing = completeJobs(
        db,
        [{ memory_id: '0000000000d2', content_hash: '0000000000d2', vector: FakeOllama.vector('x') }],
        'nomic-embed-text',
      );
      const waited = await waitsForLock(db, '%insert into memory_vectors%');
      deleter.release();
      await deleter.done;
      assert.ok(waited, 'completeJobs waited for the delete');
      assert.equal(await completing, 0);
      assert.deepEqual(await vectorRows(db), [], 'no vector for the deleted memory');
    });
  },
);
