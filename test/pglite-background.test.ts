import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDb, type Db } from '../src/db/client.js';
import { TableMaintenance } from '../src/db/table-maintenance.js';
import { once } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';

const quiet = { warn: () => {}, debug: () => {} };

// PGlite's one connection: what the service's background work (the embedding worker, statistics,
// vacuum) may take of it while requests wait, and the autovacuum PGlite lacks.
describe('PGlite: requests before background work; tables vacuumed', { skip: once.skip }, () => {
  let db: Db;
  before(async () => {
    db = await openDb({ dataDir: 'memory://' });
  });
  after(async () => {
    await db?.close();
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  // PGlite runs one statement at a time, start to end: what waits for the connection is what asked
  // for it while a holder awaited something else (here a transaction sleeping between statements).
  const hold = (kysely: Db['kysely'], ms: number) =>
    kysely.transaction().execute(async (t) => {
      await sql`select 1`.execute(t);
      await sleep(ms);
    });

  test('a request waiting for the connection goes before background statements queued earlier', async () => {
    const order: string[] = [];
    const running = hold(db.background, 200).then(() => order.push('background 1'));
    await sleep(30); // it holds the connection now
    const queued = sql`select 1`.execute(db.background).then(() => order.push('background 2'));
    await sleep(10);
    const request = sql`select 1`.execute(db.kysely).then(() => order.push('request'));
    await Promise.all([running, queued, request]);
    assert.deepEqual(order, ['background 1', 'request', 'background 2']);
  });

  test('a background statement that has waited 250 ms goes before the requests still waiting', async () => {
    const order: string[] = [];
    const long = hold(db.kysely, 400).then(() => order.push('request 1'));
    await sleep(30);
    const background = sql`select 1`.execute(db.background).then(() => order.push('background'));
    await sleep(10);
    const later = sql`select 1`.execute(db.kysely).then(() => order.push('request 2'));
    await Promise.all([long, background, later]);
    assert.deepEqual(order, ['request 1', 'background', 'request 2']);
  });

  test('a transaction holds the connection to its end, whoever waits', async () => {
    const order: string[] = [];
    const trx = db.kysely.transaction().execute(async (t) => {
      await sql`select 1`.execute(t);
      order.push('transaction, first');
      await sleep(50); // between its statements the connection stays its own
      await sql`select 1`.execute(t);
      order.push('transaction, last');
    });
    await sleep(20);
    const request = sql`select 1`.execute(db.kysely).then(() => order.push('request'));
    const background = sql`select 1`.execute(db.background).then(() => order.push('background'));
    await Promise.all([trx, request, background]);
    assert.deepEqual(order, ['transaction, first', 'transaction, last', 'request', 'background']);
  });

  test('a table with many dead rows is vacuumed, one that only changed is analyzed, a quiet one left alone', async () => {
    await sql`create table churn (id int)`.execute(db.kysely);
    await sql`create table grown (id int)`.execute(db.kysely);
    await sql`create table quiet (id int)`.execute(db.kysely);
    await sql`insert into quiet values (1)`.execute(db.kysely);
    const maintenance = new TableMaintenance(db.background, quiet);
    await maintenance.pass(); // whatever the schema's tables need
    await sql`insert into churn select generate_series(1, 2000)`.execute(db.kysely);
    await sql`delete from churn where id > 100`.execute(db.kysely);
    await sql`insert into grown select generate_series(1, 500)`.execute(db.kysely);
    // Statistics reach pg_stat_user_tables within a second or so.
    const done: Array<{ table: string; action: string }> = [];
    await eventually(async () => {
      done.push(...(await maintenance.pass()));
      return done.some((d) => d.table === 'churn') && done.some((d) => d.table === 'grown') ? true : undefined;
    });
    assert.deepEqual(done.find((d) => d.table === 'churn')?.action, 'vacuum');
    assert.deepEqual(done.find((d) => d.table === 'grown')?.action, 'analyze');
    assert.equal(
      done.find((d) => d.table === 'quiet'),
      undefined,
    );
    const churn = await sql<{ dead: number; vacuumed: boolean }>`
      select n_dead_tup::int as dead, last_vacuum is not null as vacuumed from pg_stat_user_tables where relname = 'churn'`.execute(
      db.kysely,
    );
    assert.deepEqual(churn.rows[0], { dead: 0, vacuumed: true });
    assert.deepEqual(await maintenance.pass(), [], 'nothing left to do');
  });

  test('a checkpoint once more WAL than the threshold was written since the last one (PGlite never starts one)', async () => {
    const maintenance = new TableMaintenance(db.background, quiet, 30_000, 1024 * 1024);
    const walSinceCheckpoint = async () =>
      (
        await sql<{ bytes: number }>`
          select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 as bytes from pg_control_checkpoint()`.execute(
          db.kysely,
        )
      ).rows[0]!.bytes;
    await sql`checkpoint`.execute(db.kysely);
    assert.equal(await maintenance.checkpointIfDue(), false, 'nothing written since');
    await sql`create table wal_churn (t text)`.execute(db.kysely);
    await sql`insert into wal_churn select repeat(md5(i::text), 32) from generate_series(1, 3000) i`.execute(db.kysely);
    assert.ok((await walSinceCheckpoint()) > 1024 * 1024, 'the insert wrote more WAL than the threshold');
    assert.equal(await maintenance.checkpointIfDue(), true);
    assert.ok((await walSinceCheckpoint()) < 1024 * 1024, 'the checkpoint moved the redo point up');
    assert.equal(await maintenance.checkpointIfDue(), false);
  });
});
