import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../support/free-port.js';
import { LOCK_FILE } from '../src/db/data-dir-lock.js';
import { once, postgresBaseUrl } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { clusterSupport, createCluster } from '../support/pg-cluster.js';
import { createScratchDatabase } from '../support/postgres.js';
import { childEnv, ROOT, runCli, serve } from './helpers/service.js';
import { postTask } from './helpers/tasks.js';
import { tempDirs } from './helpers/temp-dirs.js';

// Issue 18 ("what a new user hits in the first hour"): one data folder per process, one Ctrl-C
// drains, shutdown answers 503 instead of refusing, permanent database errors fail at once, a port
// in use is found before the migrations.

/** A commit file small enough to write inline, big enough to send in two halves. */
function commitFile(commit: string): string {
  const nodes = Array.from({ length: 40 }, (_, i) => ({
    id: `src/m${i}.ts::f${i}`,
    name: `f${i}`,
    type: 'FUNCTION',
    filePath: `src/m${i}.ts`,
    startLine: 1,
    endLine: 3,
    rawCode: `export function f${i}() {\n  return ${i};\n}`,
  }));
  return JSON.stringify({
    commitHash: commit,
    analyzedAt: '2026-11-30T12:00:00.000Z',
    nodes,
    edges: [{ from: nodes[0]!.id, to: nodes[1]!.id, type: 'CALLS' }],
  });
}

/** A POST whose body is sent in parts: the response is read as soon as it comes, even mid-body. */
function openUpload(
  url: string,
  path: string,
): { req: ClientRequest; response: Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> } {
  const req = httpRequest(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  const response = new Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }>(
    (resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        res.on('error', reject);
      });
      req.on('error', reject);
    },
  );
  req.flushHeaders();
  return { req, response };
}

/** Resolves with the first line of `output()` that matches, polling. */
const logged = (output: () => string, pattern: RegExp) =>
  eventually(async () => (pattern.test(output()) ? true : undefined));

describe('serve: start-up and shutdown (issue 18)', () => {
  const tempDir = tempDirs('life');

  test(
    'a PGlite data folder is owned by one process: a second server is refused, naming the folder and the pid',
    once,
    async () => {
      const dataDir = await tempDir();
      const first = await serve({ DATA_DIR: dataDir });
      try {
        const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'));
        assert.equal(lock.pid, first.child.pid);
        const second = await serve({ DATA_DIR: dataDir }, { waitReady: false });
        assert.equal(await second.exited, 1, 'the second server exits');
        assert.match(
          second.output(),
          new RegExp(
            `data folder ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by process ${first.child.pid}`,
          ),
        );
        // The first one carries on, and is the only writer.
        assert.equal((await fetch(`${first.url}/readyz`)).status, 200);
        // So does every command that opens the folder.
        const migrate = await runCli(['migrate'], { DATA_DIR: dataDir });
        assert.equal(migrate.code, 1);
        assert.match(migrate.stderr, new RegExp(`in use by process ${first.child.pid}`));
      } finally {
        assert.equal(await first.stop(), 0);
      }
      assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'a clean exit removes the lock');
    },
  );

  test('the lock of a process that no longer runs is taken over', once, async () => {
    const dataDir = await tempDir();
    const first = await serve({ DATA_DIR: dataDir });
    await postTask(first.url, 'Before the crash', 'Locks');
    first.child.kill('SIGKILL');
    await first.exited;
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), true, 'kill -9 leaves the lock behind');

    const second = await serve({ DATA_DIR: dataDir });
    try {
      assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, second.child.pid);
      const listed = (await (await fetch(`${second.url}/api/v1/tasks?project=Locks`)).json()) as { total: number };
      assert.equal(listed.total, 1, 'the acknowledged write survived');
    } finally {
      await second.stop();
    }
  });

  test(
    'one Ctrl-C on `npm start` drains: requests in flight finish, new ones get 503, the process exits 0',
    once,
    async () => {
      const dataDir = await tempDir();
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      // A terminal's Ctrl-C signals the whole foreground process group: npm, sh, tsx and node.
      const child = spawn('npm', ['start'], {
        cwd: ROOT,
        env: childEnv({ PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info' }),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (c) => (output += c));
      child.stderr!.on('data', (c) => (output += c));
      // npm re-raises the signal on itself once its child has exited: it ends by SIGINT, node by exit 0.
      const exited = new Promise<string>((resolve) =>
        child.on('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
      );
      try {
        await eventually(
          async () =>
            (await fetch(`${url}/readyz`).then(
              (r) => r.status,
              () => 0,
            )) === 200
              ? true
              : undefined,
          60_000,
        );
        const body = commitFile('c0ffee0000000000000000000000000000000001');
        const upload = openUpload(url, '/api/v1/graphs?repo=draining');
        upload.req.write(body.slice(0, 1000));
        await sleep(300); // the request is in flight

        process.kill(-child.pid!, 'SIGINT');
        await logged(() => output, /shutting down/);
        // The listener stays open: a new request is answered 503, not refused.
        const refused = await fetch(`${url}/api/v1/graphs`);
        assert.equal(refused.status, 503);
        assert.equal(((await refused.json()) as any).error.code, 'SHUTTING_DOWN');
        assert.equal(refused.headers.get('retry-after'), '5');
        assert.equal((await fetch(`${url}/healthz`)).status, 200, 'the process is still alive');

        upload.req.end(body.slice(1000));
        const answer = await upload.response;
        assert.equal(answer.status, 201, answer.body);
        assert.match(await exited, /^(exit 0|SIGINT)$/, output);
        assert.match(output, /"msg":"shut down"/);
        assert.doesNotMatch(output, /second signal: exiting now/);
      } finally {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* the group has exited */
        }
      }
      // What was acknowledged was stored.
      const again = await serve({ DATA_DIR: dataDir });
      try {
        const graphs = (await (await fetch(`${again.url}/api/v1/graphs`)).json()) as any;
        assert.deepEqual(
          graphs.graphs.map((g: any) => [g.repo, g.nodes]),
          [['draining', 40]],
        );
      } finally {
        await again.stop();
      }
    },
  );

  test(
    'an upload still running at SHUTDOWN_TIMEOUT_S is answered 503 and stores nothing; a client that hangs up is a client abort',
    once,
    async () => {
      const dataDir = await tempDir();
      const served = await serve({ DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_S: '1', LOG_LEVEL: 'info' });
      const body = commitFile('c0ffee0000000000000000000000000000000002');

      // A client that hangs up mid-upload: logged as such, not as a database failure.
      const gone = openUpload(served.url, '/api/v1/graphs?repo=hangup');
      gone.response.catch(() => {});
      gone.req.write(body.slice(0, 1000));
      await sleep(300);
      gone.req.destroy();
      await logged(served.output, /client closed the connection before the body ended/);
      assert.doesNotMatch(served.output(), /database is unreachable/);

      const stuck = openUpload(served.url, '/api/v1/graphs?repo=stuck');
      stuck.req.write(body.slice(0, 1000));
      await sleep(300);
      served.child.kill('SIGTERM');
      const answer = await stuck.response;
      assert.equal(answer.status, 503, answer.body);
      assert.equal(JSON.parse(answer.body).error.code, 'SHUTTING_DOWN');
      assert.equal(answer.headers.connection, 'close');
      stuck.req.destroy();
      assert.equal(await served.exited, 0, served.output());

      const again = await serve({ DATA_DIR: dataDir });
      try {
        const graphs = (await (await fetch(`${again.url}/api/v1/graphs`)).json()) as any;
        assert.deepEqual(graphs.graphs, [], 'neither upload left anything');
      } finally {
        await again.stop();
      }
    },
  );

  test('a port in use is found before the database is opened or migrated', once, async () => {
    const dataDir = await tempDir();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await runCli(['serve'], { DATA_DIR: join(dataDir, 'data'), PORT: String(port) });
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
      assert.equal(existsSync(join(dataDir, 'data', 'PG_VERSION')), false, 'no database was created');
    } finally {
      taken.close();
    }
  });

  describe(
    'permanent database errors fail at once (Postgres)',
    { skip: postgresBaseUrl ? false : 'Postgres tests are off (no DATABASE_URL)' },
    () => {
      // DB_CONNECT_TIMEOUT_S of an hour: a start-up that waited would not end within the test's timeout.
      const env = (url: string) => ({ DATABASE_URL: url, DB_CONNECT_TIMEOUT_S: '3600', PORT: '0' });

      test('a missing database (3D000) names the database and what to do', { timeout: 60_000 }, async () => {
        const u = new URL(postgresBaseUrl!);
        u.pathname = '/dsh_no_such_database';
        const r = await runCli(['serve'], env(u.toString()));
        assert.equal(r.code, 1);
        assert.match(r.stderr, /database "dsh_no_such_database" does not exist \(3D000\): create the database/);
      });

      test(
        'a role that may not create the vector extension (42501) is told who must',
        { timeout: 60_000 },
        async () => {
          const scratch = await createScratchDatabase(postgresBaseUrl!);
          const role = `dsh_low_${process.pid}`;
          const admin = new pg.Client({ connectionString: scratch.url });
          await admin.connect();
          try {
            await admin.query(`create role ${role} login`);
            const dbName = new URL(scratch.url).pathname.slice(1);
            await admin.query(`grant all on database "${dbName}" to ${role}`);
            await admin.query(`grant all on schema public to ${role}`);
            const u = new URL(scratch.url);
            u.username = role;
            const r = await runCli(['serve'], env(u.toString()));
            assert.equal(r.code, 1);
            assert.match(
              r.stderr,
              /permission denied to create extension "vector" \(42501\): .*superuser run CREATE EXTENSION vector/,
            );
          } finally {
            await admin.query(`drop owned by ${role}`).catch(() => {});
            await admin.query(`drop role if exists ${role}`).catch(() => {});
            await admin.end();
            await scratch.drop();
          }
        },
      );

      const noCluster = clusterSupport();
      test(
        'a wrong password (28P01) fails at once, and the password is never printed',
        { skip: noCluster ?? false, timeout: 120_000 },
        async () => {
          const cluster = await createCluster();
          try {
            const admin = new pg.Client({ connectionString: cluster.url });
            await admin.connect();
            await admin.query(`create role dsh_pw login password 'right-password'`);
            // Password authentication for this role over TCP; trust stays for postgres.
            const hba = (await admin.query(`select setting from pg_settings where name = 'hba_file'`)).rows[0]
              .setting as string;
            await admin.end();
            writeFileSync(hba, `host all dsh_pw 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
            const reload = new pg.Client({ connectionString: cluster.url });
            await reload.connect();
            await reload.query('select pg_reload_conf()');
            await reload.end();

            const url = `postgres://dsh_pw:wrong-s3cret@127.0.0.1:${cluster.port}/postgres`;
            const r = await runCli(['serve'], env(url));
            assert.equal(r.code, 1);
            assert.match(
              r.stderr,
              /password authentication failed for user "dsh_pw" \(28P01\): check the user name and password/,
            );
            assert.ok(
              !r.stderr.includes('wrong-s3cret') && !r.stdout.includes('wrong-s3cret'),
              'the password is not printed',
            );
            assert.match(r.stderr, /postgres:\/\/dsh_pw:\*\*\*@127\.0\.0\.1/);
          } finally {
            await cluster.destroy();
          }
        },
      );
    },
  );
});
