import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import pg from 'pg';
import { postgresBaseUrl } from './helpers/backends.js';
import { clusterSupport, createCluster } from '../support/pg-cluster.js';

// As the outage tests that use it: only in the Postgres half of the suite (npm test without a
// database stays on PGlite).
const unsupported = !postgresBaseUrl ? 'Postgres tests are off (no DATABASE_URL)' : clusterSupport();

async function query(url: string, text: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query(text)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

test(
  'a throwaway Postgres cluster stops, starts again on its port and is destroyed',
  { skip: unsupported ?? false, timeout: 120_000 },
  async () => {
    const cluster = await createCluster({ settings: { application_name: 'pg-cluster-test' } });
    try {
      assert.equal(cluster.url, `postgres://postgres@127.0.0.1:${cluster.port}/postgres`);
      const rows = (await query(
        cluster.url,
        "select current_setting('fsync') as fsync, current_setting('max_connections') as max",
      )) as Array<{ fsync: string; max: string }>;
      assert.deepEqual(rows, [{ fsync: 'off', max: '200' }]);
      await query(cluster.url, 'create extension if not exists vector');
      await query(cluster.url, 'create table kept (v text)');
      await query(cluster.url, "insert into kept values ('survives')");

      await cluster.stop();
      await assert.rejects(query(cluster.url, 'select 1'), (error: NodeJS.ErrnoException) => {
        assert.equal(error.code, 'ECONNREFUSED');
        return true;
      });
      await cluster.stop(); // stopping a stopped cluster is a no-op

      await cluster.start();
      assert.deepEqual(await query(cluster.url, 'select v from kept'), [{ v: 'survives' }]);

      await cluster.restart('immediate');
      assert.deepEqual(await query(cluster.url, 'select v from kept'), [{ v: 'survives' }]);
    } finally {
      await cluster.destroy();
    }
    await cluster.destroy(); // idempotent
    await assert.rejects(
      query(cluster.url, 'select 1'),
      (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
    );
    await assert.rejects(cluster.start(), /destroyed/);
  },
);

test(
  'a cluster never destroyed is removed when the process exits',
  { skip: unsupported ?? false, timeout: 120_000 },
  async () => {
    const { execFile } = await import('node:child_process');
    const script = [
      "import pg from 'pg';",
      "import { createCluster } from './support/pg-cluster.ts';",
      'const c = await createCluster();',
      'const client = new pg.Client({ connectionString: c.url });',
      'await client.connect();',
      "const { rows } = await client.query('show data_directory');",
      'await client.end();',
      'console.log(JSON.stringify({ url: c.url, dataDir: rows[0].data_directory }));',
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: process.cwd(), timeout: 90_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    const { url, dataDir } = JSON.parse(out.trim().split('\n').pop()!) as { url: string; dataDir: string };
    assert.match(dataDir, /^\/tmp\/dsh-pg-/);
    await assert.rejects(query(url, 'select 1'), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
    assert.equal(existsSync(dataDir), false);
  },
);
