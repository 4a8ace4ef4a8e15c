import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDb, type Db } from '../src/db/client.js';
import { toAppError } from '../src/operations/invoke.js';
import { once } from './helpers/backends.js';
import { ROOT } from './helpers/service.js';

// Embedded PGlite runs in a thread of its own (src/db/pglite-thread.ts).
describe('PGlite in its own thread', once, () => {
  let db: Db;
  before(async () => {
    db = await openDb({ dataDir: 'memory://' });
  });
  after(async () => {
    await db?.close();
  });

  test('the event loop runs while a statement does: timers fire during a 600 ms statement', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    try {
      await sql`select pg_sleep(0.6)`.execute(db.kysely);
    } finally {
      clearInterval(timer);
    }
    // On the main thread, the statement held the event loop: no tick until it ended.
    assert.ok(ticks >= 10, `${ticks} ticks of 20 ms during the statement`);
  });

  test("an error keeps its SQLSTATE and Postgres's fields, so it maps as on Postgres", async () => {
    await sql`create table thread_t (id int primary key)`.execute(db.kysely);
    await sql`insert into thread_t values (1)`.execute(db.kysely);
    const error = await sql`insert into thread_t values (1)`.execute(db.kysely).then(
      () => assert.fail('a duplicate key is refused'),
      (e: unknown) => e as Error & { code?: string; constraint?: string },
    );
    assert.ok(error instanceof Error);
    assert.equal(error.code, '23505');
    assert.equal(error.constraint, 'thread_t_pkey');
    assert.equal(toAppError(error, 'insert').code, 'CONFLICT');
    const rows = await sql<{ n: number; at: Date }>`select count(*)::int as n, now() as at from thread_t`.execute(
      db.kysely,
    );
    assert.equal(rows.rows[0]!.n, 1, 'the refused row was not written');
    assert.ok(rows.rows[0]!.at instanceof Date, 'values come back parsed (a Date), not as text');
  });

  test('a recurring statement runs prepared, with the values, types and errors the unprepared one has', async () => {
    await sql`create table prep_t (id int primary key, at timestamptz, tags text[], doc jsonb)`.execute(db.kysely);
    const at = new Date('2026-12-05T06:00:00.000Z');
    for (let i = 1; i <= 3; i++) {
      const { rows } = await sql<{ id: number; at: Date; tags: string[]; doc: unknown }>`
        insert into prep_t values (${i}, ${at}, ${['a', `b${i}`]}, ${JSON.stringify({ n: i })}::jsonb)
        returning id, at, tags, doc`.execute(db.kysely);
      assert.deepEqual(rows, [{ id: i, at, tags: ['a', `b${i}`], doc: { n: i } }], `run ${i}`);
    }
    const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db.kysely);
    assert.ok(
      prepared.rows.some((r) => r.statement.includes('insert into prep_t')),
      'the insert is prepared from its second run',
    );
    for (let run = 0; run < 3; run++) {
      const error = await sql`insert into prep_t values (${1}, ${null}, ${null}, ${null})`.execute(db.kysely).then(
        () => assert.fail('a duplicate key is refused'),
        (e: unknown) => e as Error & { code?: string; constraint?: string },
      );
      assert.equal(error.code, '23505', `run ${run}`);
      assert.equal(error.constraint, 'prep_t_pkey');
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from prep_t where at = ${at}`.execute(
      db.kysely,
    );
    assert.deepEqual(rows, [{ n: 3 }], 'the failed inserts left nothing behind, and the connection serves on');
  });

  test('a prepared statement whose result columns changed runs again unnamed: the new columns, not an error', async () => {
    await sql`create table stale_t (id int primary key, name text)`.execute(db.kysely);
    await sql`insert into stale_t values (1, 'one')`.execute(db.kysely);
    const read = () => sql<Record<string, unknown>>`select * from stale_t where id = ${1}`.execute(db.kysely);
    for (let i = 0; i < 3; i++) assert.deepEqual((await read()).rows, [{ id: 1, name: 'one' }]);
    await sql`alter table stale_t add column colour text default 'red'`.execute(db.kysely);
    assert.deepEqual((await read()).rows, [{ id: 1, name: 'one', colour: 'red' }]);
    assert.deepEqual((await read()).rows, [{ id: 1, name: 'one', colour: 'red' }]);

    // In a transaction the refusal has aborted it: the caller gets the cause, not 'transaction aborted'.
    const readAll = () => sql<Record<string, unknown>>`select * from stale_t where id >= ${1}`.execute(db.kysely);
    for (let i = 0; i < 3; i++) await readAll();
    await sql`alter table stale_t add column size int default 3`.execute(db.kysely);
    const error = await db.kysely
      .transaction()
      .execute((tx) => sql`select * from stale_t where id >= ${1}`.execute(tx))
      .then(
        () => assert.fail('refused in the transaction'),
        (e: unknown) => e as Error & { code?: string },
      );
    assert.equal(error.code, '0A000', error.message);
    assert.deepEqual((await readAll()).rows, [{ id: 1, name: 'one', colour: 'red', size: 3 }]);
  });

  test('a process whose only work left is a statement waits for it, and exits once the database is closed', async () => {
    const script = `
      import { sql } from 'kysely';
      import { openDb } from './src/db/client.ts';
      const db = await openDb({ dataDir: 'memory://' });
      const r = await sql\`select pg_sleep(0.3), 'finished' as state\`.execute(db.kysely);
      console.log(r.rows[0].state);
      await db.close();`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(timer);
    assert.equal(code, 0, `exit ${code}: ${stderr}`);
    assert.equal(stdout.trim(), 'finished');
  });
});
