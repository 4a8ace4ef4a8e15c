import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { openDb } from '../src/db/client.js';
import { loadMigrations, migrate, type Migration } from '../src/db/migrate.js';
import type { Database } from '../src/db/schema.js';
import { backends, postgresBaseUrl, type TestDb } from './helpers/backends.js';
import { createScratchDatabase } from '../support/postgres.js';

/** Tables, columns, indexes, constraints and triggers of the public schema, as comparable text. */
async function schemaFingerprint(db: Kysely<Database>): Promise<string[]> {
  const rows = await sql<{ item: string }>`
    select 'col ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as item
      from information_schema.columns where table_schema = 'public'
    union all select 'idx ' || indexdef from pg_indexes where schemaname = 'public'
    union all select 'con ' || conname || ' ' || pg_get_constraintdef(oid) from pg_constraint where connamespace = 'public'::regnamespace
    union all select 'trg ' || tgname from pg_trigger where not tgisinternal
    order by 1`.execute(db);
  return rows.rows.map((r) => r.item);
}

for (const backend of backends) {
  describe(`migrations (${backend.name})`, () => {
    const opened: TestDb[] = [];
    after(async () => {
      for (const t of opened) await t.dispose();
    });
    /** A store migrated up to (not including) `version`, to put old rows in before that migration runs. */
    const storeBefore = async (version: number) => {
      const t = await backend.open({ migrate: false });
      opened.push(t);
      const all = await loadMigrations();
      await migrate(
        t.db.kysely,
        all.filter((m) => m.version < version),
      );
      return { db: t.db.kysely, migrateAll: () => migrate(t.db.kysely, all) };
    };

    test('apply in order, are recorded, and a second run changes nothing', async () => {
      const t = await backend.open({ migrate: false });
      opened.push(t);
      const files = await loadMigrations();
      const first = await migrate(t.db.kysely);
      assert.deepEqual(
        first.applied,
        files.map((m) => m.name),
      );
      const recorded = await t.db.kysely
        .selectFrom('schema_version')
        .select(['version', 'name', 'checksum'])
        .orderBy('version')
        .execute();
      assert.deepEqual(
        recorded,
        files.map((m) => ({ version: m.version, name: m.name, checksum: m.checksum })),
      );
      const before = await schemaFingerprint(t.db.kysely);
      assert.ok(
        before.some((i) => i.includes('intervention_plans_title_key')),
        'the unique title index exists',
      );

      const second = await migrate(t.db.kysely);
      assert.deepEqual(second.applied, []);
      assert.equal(second.current, first.current);
      assert.deepEqual(await schemaFingerprint(t.db.kysely), before);
    });

    test('a failing migration rolls back whole and is not recorded', async () => {
      const t = await backend.open();
      opened.push(t);
      const bad: Migration = {
        version: 9999,
        name: '9999_broken',
        sql: 'create table half_done (a int); select 1 / 0;',
        checksum: 'x',
      };
      await assert.rejects(migrate(t.db.kysely, [...(await loadMigrations()), bad]), /9999_broken failed/);
      const exists = await sql<{ t: string | null }>`select to_regclass('half_done')::text as t`.execute(t.db.kysely);
      assert.equal(exists.rows[0]?.t, null);
      const versions = await t.db.kysely.selectFrom('schema_version').select('version').execute();
      assert.ok(!versions.some((v) => v.version === 9999));
    });

    test('refuses to run when an applied migration was edited', async () => {
      const t = await backend.open();
      opened.push(t);
      const edited = (await loadMigrations()).map((m) => (m.version === 1 ? { ...m, checksum: 'edited' } : m));
      await assert.rejects(migrate(t.db.kysely, edited), /was changed after it was applied/);
    });

    test("0019 numbers each project's live memories in the order they were stored", async () => {
      const { db, migrateAll } = await storeBefore(19);
      await sql`insert into intervention_plans (id, title, expected_outcome)
                values ('00000000000a', 'A', 'x'), ('00000000000b', 'B', 'x')`.execute(db);
      // id, project ('': none), stored at (minutes), archived: ids out of storing order, a tie on time broken by id.
      const rows: Array<[string, string, number, boolean]> = [
        ['0000000000f1', '00000000000a', 3, false],
        ['0000000000f2', '00000000000a', 1, false],
        ['0000000000f3', '00000000000a', 2, true],
        ['0000000000f5', '00000000000a', 4, false],
        ['0000000000f4', '00000000000a', 4, false],
        ['0000000000f6', '00000000000b', 9, false],
        ['0000000000f7', '', 5, false],
      ];
      for (const [id, project, minute, archived] of rows) {
        await sql`insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score,
                                               content_hash, created_at, archived_at)
                  values (${id}, ${project || null}, ${`memory ${id}`}, 'context', 'text', 0.5, ${id},
                          timestamptz '2026-01-01 00:00:00Z' + make_interval(mins => ${minute}),
                          ${archived ? sql`now()` : sql`null`})`.execute(db);
      }
      await migrateAll();
      const seq = await sql<{ id: string; project_seq: string | null }>`
        select id, project_seq from semantic_memory order by id`.execute(db);
      assert.deepEqual(
        Object.fromEntries(seq.rows.map((r) => [r.id, r.project_seq === null ? null : Number(r.project_seq)])),
        {
          '0000000000f1': 2,
          '0000000000f2': 1,
          '0000000000f3': null,
          '0000000000f4': 3,
          '0000000000f5': 4,
          '0000000000f6': 1,
          '0000000000f7': null,
        },
      );
    });

    test('0021 moves live vectors into memory_vectors with their filters and indexes, and drops the column', async () => {
      const { db, migrateAll } = await storeBefore(21);
      await sql`insert into intervention_plans (id, title, expected_outcome) values ('00000000000a', 'A', 'x')`.execute(
        db,
      );
      // A 384-D and a 1,536-D model's HNSW indexes as the service made them before 0021 (vector-index.ts).
      for (const dims of [384, 1536])
        await sql`create index ${sql.id(`idx_semantic_memory_embedding_${dims}`)} on semantic_memory
                  using hnsw ((embedding::halfvec(${sql.lit(dims)})) halfvec_cosine_ops) where embedding_dims = ${sql.lit(dims)}`.execute(
          db,
        );
      const vector = (dims: number, seed: number) =>
        `[${Array.from({ length: dims }, (_, i) => ((i * seed) % 7) / 7 + 0.01).join(',')}]`;
      // id, project, type, dimensions (0: no vector; staged or waiting), archived
      const rows: Array<[string, string | null, string, number, boolean]> = [
        ['0000000000e1', '00000000000a', 'decision', 768, false],
        ['0000000000e2', null, 'code', 384, false],
        ['0000000000e3', '00000000000a', 'context', 768, true],
        ['0000000000e4', '00000000000a', 'context', 0, false],
        ['0000000000e5', '00000000000a', 'code', 1536, false],
      ];
      for (const [id, project, type, dims, archived] of rows) {
        await sql`insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score,
                                               content_hash, embedding, embedding_model, embedding_dims, created_at, archived_at)
                  values (${id}, ${project}, ${`memory ${id}`}, ${type}, 'text', 0.5, ${id},
                          ${dims ? sql`${vector(dims, Number.parseInt(id, 16))}::halfvec` : sql`null`},
                          ${dims ? `model-${dims}` : null}, ${dims || null}, timestamptz '2026-01-02 03:04:05Z',
                          ${archived ? sql`now()` : sql`null`})`.execute(db);
      }
      // e4's vector is still staged in its job (stored, not moved yet): it stays there.
      await sql`update semantic_memory set embedding_model = 'model-768', embedding_dims = 768 where id = '0000000000e4'`.execute(
        db,
      );
      await sql`insert into embedding_jobs (memory_id, embedding) values ('0000000000e4', ${vector(768, 5)}::halfvec)`.execute(
        db,
      );
      const stagedJobs = () =>
        sql<{ memory_id: string; v: string }>`select memory_id, embedding::text as v from embedding_jobs`.execute(db);
      const stagedBefore = await stagedJobs();
      assert.equal(stagedBefore.rows.length, 1);
      const before = await sql<{ id: string; v: string }>`
        select id, embedding::text as v from semantic_memory where embedding is not null order by id`.execute(db);
      await migrateAll();

      const moved = await sql<Record<string, unknown>>`
        select memory_id, project_id, content_type, created_at, embedding_model, embedding_dims, embedding::text as v
          from memory_vectors order by memory_id`.execute(db);
      const vectorOf = new Map(before.rows.map((r) => [r.id, r.v]));
      assert.deepEqual(
        moved.rows.map((r) => ({ ...r, created_at: new Date(r.created_at as string).toISOString() })),
        [
          {
            memory_id: '0000000000e1',
            project_id: '00000000000a',
            content_type: 'decision',
            created_at: '2026-01-02T03:04:05.000Z',
            embedding_model: 'model-768',
            embedding_dims: 768,
            v: vectorOf.get('0000000000e1'),
          },
          {
            memory_id: '0000000000e2',
            project_id: null,
            content_type: 'code',
            created_at: '2026-01-02T03:04:05.000Z',
            embedding_model: 'model-384',
            embedding_dims: 384,
            v: vectorOf.get('0000000000e2'),
          },
          {
            memory_id: '0000000000e5',
            project_id: '00000000000a',
            content_type: 'code',
            created_at: '2026-01-02T03:04:05.000Z',
            embedding_model: 'model-1536',
            embedding_dims: 1536,
            v: vectorOf.get('0000000000e5'),
          },
        ],
        'the live memories with a vector, not the archived one',
      );
      const indexes = await sql<{ table: string; name: string }>`
        select tablename as table, indexname as name from pg_indexes
         where tablename in ('semantic_memory', 'memory_vectors') and indexname ~ '(embedding|scope)'
         order by 1, 2`.execute(db);
      assert.deepEqual(
        indexes.rows.map((r) => `${r.table}.${r.name}`),
        [
          'memory_vectors.idx_memory_vectors_embedding_1536',
          'memory_vectors.idx_memory_vectors_embedding_384',
          'memory_vectors.idx_memory_vectors_embedding_768',
          'memory_vectors.idx_memory_vectors_scope_384',
          'memory_vectors.idx_memory_vectors_scope_768',
        ],
      );
      const columns = await sql<{ name: string }>`
        select column_name as name from information_schema.columns
         where table_name = 'semantic_memory' and column_name like 'embedding%' order by 1`.execute(db);
      assert.deepEqual(
        columns.rows.map((r) => r.name),
        ['embedding_dims', 'embedding_model'],
      );
      assert.deepEqual((await stagedJobs()).rows, stagedBefore.rows, 'a staged vector stays in its job');
      // A model without dimensions is still refused.
      await assert.rejects(
        sql`update semantic_memory set embedding_dims = null where id = '0000000000e1'`.execute(db),
        /semantic_memory_vector_model/,
      );
    });
  });
}

if (postgresBaseUrl) {
  describe('migrations (postgres, two processes at once)', () => {
    test('concurrent migrators apply each migration exactly once', async () => {
      const scratch = await createScratchDatabase(postgresBaseUrl!);
      const dbs = await Promise.all(Array.from({ length: 4 }, () => openDb({ databaseUrl: scratch.url, poolSize: 2 })));
      try {
        const reports = await Promise.all(dbs.map((d) => migrate(d.kysely)));
        const files = await loadMigrations();
        assert.deepEqual(
          reports.flatMap((r) => r.applied).sort(),
          files.map((m) => m.name).sort(),
          'every migration applied by exactly one process',
        );
        const count = await dbs[0]!.kysely
          .selectFrom('schema_version')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(count.n), files.length);
      } finally {
        await Promise.all(dbs.map((d) => d.close()));
        await scratch.drop();
      }
    });
  });
}
