import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../src/db/client.js';
import { MAX_PREPARED_PER_CONNECTION } from '../src/db/preparing-client.js';
import { createScratchDatabase } from '../support/postgres.js';

const databaseUrl = process.env.DATABASE_URL;

// A process that closed the database must exit by itself: one whose pool stayed open (a bench script
// that prepared its statements on the pool beside Kysely) printed its figures and never exited.
test(
  'close() ends the Postgres pool: the process exits',
  { skip: databaseUrl ? false : 'no DATABASE_URL' },
  async () => {
    const script = `
    import { sql } from 'kysely';
    import { openDb } from './src/db/client.ts';
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL });
    const { rows } = await sql\`select \${1}::int as x\`.execute(db.kysely);
    await sql\`select \${1}::int as x\`.execute(db.kysely); // the second run prepares it
    await db.close();
    console.log(JSON.stringify(rows));
  `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('..', import.meta.url),
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const hung = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(hung);
    assert.equal(out.trim(), '[{"x":1}]');
    assert.equal(code, 0, 'the process exited by itself after close()');
  },
);

/** A scratch database and a service handle on it with one connection, both gone after the test. */
async function oneConnection(t: TestContext) {
  const scratch = await createScratchDatabase(databaseUrl!, 'dsh_prepared');
  t.after(() => scratch.drop());
  const db = await openDb({ databaseUrl: scratch.url, poolSize: 1 });
  t.after(() => db.close());
  return { scratch, db };
}

test(
  'recurring statements are prepared once per connection, with or without parameters; one-offs, scripts and those past the bound are not',
  { skip: databaseUrl ? false : 'no DATABASE_URL' },
  async (t) => {
    const { db } = await oneConnection(t); // one connection: its statements are visible
    const prepared = async () =>
      (
        await sql<{ statement: string }>`select statement from pg_prepared_statements order by statement`.execute(
          db.kysely,
        )
      ).rows.map((r) => r.statement);

    for (let i = 0; i < 3; i++) await sql`select ${i}::int + 1 as recurring`.execute(db.kysely);
    await sql`select ${1}::int + 1 as once`.execute(db.kysely);
    for (let i = 0; i < 3; i++) await sql`select 1 as no_parameters`.execute(db.kysely);
    // Several statements in one text go by the simple protocol, which runs them all: never named.
    for (let i = 0; i < 3; i++)
      await sql`create temp table if not exists two (n int); insert into two values (${sql.lit(i)})`.execute(db.kysely);
    assert.deepEqual((await sql<{ n: number }>`select count(*)::int as n from two`.execute(db.kysely)).rows, [
      { n: 3 },
    ]);
    for (let i = 0; i < 3; i++) await sql`begin; commit`.execute(db.kysely);
    // The parameterless query that recurred is named; the count that ran once and the scripts are not.
    assert.deepEqual(await prepared(), ['select $1::int + 1 as recurring', 'select 1 as no_parameters']);
    const { rows } = await sql<{ x: number }>`select ${41}::int + 1 as x, 'recurring' as recurring`.execute(db.kysely);
    assert.deepEqual(rows, [{ x: 42, recurring: 'recurring' }]);

    // Texts that vary with their input stop being prepared at the bound.
    for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 20; i++)
      for (let run = 0; run < 2; run++) await sql`select ${i}::int as ${sql.raw(`v${i}`)}`.execute(db.kysely);
    assert.equal((await prepared()).length, MAX_PREPARED_PER_CONNECTION);
    assert.deepEqual((await sql<{ v219: number }>`select ${7}::int as v219`.execute(db.kysely)).rows, [{ v219: 7 }]);
  },
);

test(
  'a prepared statement whose result columns a migration changed runs again unnamed: the caller sees the new columns, not an error',
  { skip: databaseUrl ? false : 'no DATABASE_URL' },
  async (t) => {
    const { scratch, db } = await oneConnection(t);
    await sql`create table widget (id int primary key, name text)`.execute(db.kysely);
    await sql`insert into widget values (1, 'one')`.execute(db.kysely);
    const read = () => sql<Record<string, unknown>>`select * from widget where id = ${1}`.execute(db.kysely);
    for (let i = 0; i < 3; i++) assert.deepEqual((await read()).rows, [{ id: 1, name: 'one' }]);
    const names = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_prepared_statements where statement like ${'select * from widget%'}`.execute(
      db.kysely,
    );
    assert.equal(names.rows[0]!.n, 1, 'prepared before the change');

    // Another instance migrates: Postgres refuses the prepared statement (cached plan must not change result type).
    const other = await openDb({ databaseUrl: scratch.url, poolSize: 1 });
    await sql`alter table widget add column colour text default 'red'`.execute(other.kysely);
    await other.close();
    assert.deepEqual((await read()).rows, [{ id: 1, name: 'one', colour: 'red' }]);
    assert.deepEqual((await read()).rows, [{ id: 1, name: 'one', colour: 'red' }]);

    // In a transaction the refusal has aborted it: the caller gets the cause, not 'transaction aborted'.
    const readSize = () => sql<Record<string, unknown>>`select * from widget where id >= ${2}`.execute(db.kysely);
    await sql`insert into widget (id, name) values (2, 'two')`.execute(db.kysely);
    for (let i = 0; i < 3; i++) await readSize();
    await sql`alter table widget add column size int default 3`.execute(db.kysely);
    const error = await db.kysely
      .transaction()
      .execute((tx) => sql`select * from widget where id >= ${2}`.execute(tx))
      .then(
        () => assert.fail('refused in the transaction'),
        (e: unknown) => e as Error & { code?: string },
      );
    assert.equal(error.code, '0A000', error.message);
    assert.deepEqual((await readSize()).rows, [{ id: 2, name: 'two', colour: 'red', size: 3 }]);
  },
);

test(
  'a value pg cannot send fails its call only: the statement runs again on the same connection',
  { skip: databaseUrl ? false : 'no DATABASE_URL' },
  async (t) => {
    const { db } = await oneConnection(t);
    const echo = (value: unknown) => sql<{ v: unknown }>`select ${value}::jsonb as v`.execute(db.kysely);
    for (let i = 0; i < 3; i++) assert.deepEqual((await echo(JSON.stringify({ i }))).rows, [{ v: { i } }]);
    await assert.rejects(echo({ big: 1n }), TypeError); // pg's JSON.stringify of the value throws
    assert.deepEqual((await echo(JSON.stringify({ i: 4 }))).rows, [{ v: { i: 4 } }]);
    assert.deepEqual((await echo(JSON.stringify({ i: 5 }))).rows, [{ v: { i: 5 } }]);
  },
);
