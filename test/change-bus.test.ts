/*
 * The change bus: writes announced to every instance as they commit (Postgres LISTEN/NOTIFY on a
 * dedicated connection per instance; PGlite in process). Two listening instances over one
 * database: one Postgres scratch database opened twice (DATABASE_URL), or one PGlite shared in process.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import type { ChangeEvent } from '../src/db/change-events.js';
import { notifyChange } from '../src/db/change-events.js';
import { backends, postgresBackend } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { WREN_COMMIT, wrenText } from './helpers/graph-fixture.js';
import { createKey } from './helpers/keys.js';
import { rest, type TestServer } from './helpers/server.js';
import { twoInstances } from './helpers/two-instances.js';
import { taskInput } from './helpers/task-input.js';

const ADMIN = 'b'.repeat(40);

/** Resolves with the first event `server` hears that `match` accepts; fails after `timeoutMs` (a failure bound, not a timing claim). */
function nextEvent(server: TestServer, match: (e: ChangeEvent) => boolean, timeoutMs = 20_000): Promise<ChangeEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no matching change event within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = server.app.changes.subscribe((event) => {
      if (!match(event)) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(event);
    });
  });
}

for (const backend of backends) {
  describe(`change bus (${backend.name})`, () => {
    test('a task created and updated on A is heard by a subscriber on B', async () => {
      const { a, b, close } = await twoInstances(backend, ADMIN);
      try {
        const token = await createKey(a.url, ADMIN, 'writer', ['read', 'write']);
        const created = nextEvent(b, (e) => e.type === 'task-changed');
        const answer = await rest(
          a.url,
          'POST',
          '/api/v1/tasks',
          taskInput({ title: 'Heard elsewhere' }),
          bearer(token),
        );
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        const task = answer.body.task;
        assert.deepEqual(await created, { type: 'task-changed', project: task.project, id: task.id });

        const updated = nextEvent(b, (e) => e.type === 'task-changed' && e.id === task.id);
        const memory = nextEvent(b, (e) => e.type === 'memory-changed');
        const patch = await rest(
          a.url,
          'PATCH',
          `/api/v1/tasks/${task.id}`,
          { status: 'active', notes: 'Started on A' },
          bearer(token),
        );
        assert.equal(patch.status, 200, JSON.stringify(patch.body));
        await updated;
        assert.deepEqual(await memory, { type: 'memory-changed', project: task.project, id: patch.body.memory_id });
      } finally {
        await close();
      }
    });

    test('a key revoked over REST on A is refused (401) by B on its next request, and B hears key-revoked', async () => {
      const { a, b, close } = await twoInstances(backend, ADMIN);
      try {
        const token = await createKey(a.url, ADMIN, 'leaver', ['read']);
        assert.equal((await rest(b.url, 'GET', '/api/v1/tasks', undefined, bearer(token))).status, 200);
        const heard = nextEvent(b, (e) => e.type === 'key-revoked');
        const revoked = await rest(a.url, 'DELETE', '/api/v1/keys/leaver', undefined, bearer(ADMIN));
        assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
        const refused = await rest(b.url, 'GET', '/api/v1/tasks', undefined, bearer(token));
        assert.equal(refused.status, 401);
        assert.equal(refused.body.error.code, 'UNAUTHORIZED');
        assert.deepEqual(await heard, { type: 'key-revoked', name: 'leaver' });
      } finally {
        await close();
      }
    });

    test('a memory stored and a graph uploaded on A are heard on B', async () => {
      const { a, b, close } = await twoInstances(backend, ADMIN);
      try {
        const token = await createKey(a.url, ADMIN, 'writer', ['read', 'write']);
        const memory = nextEvent(b, (e) => e.type === 'memory-changed');
        const plan = nextEvent(b, (e) => e.type === 'plan-changed');
        const stored = await rest(
          a.url,
          'POST',
          '/api/v1/memories',
          { content: 'Heard on every instance', content_type: 'context', project: 'Bus' },
          bearer(token),
        );
        assert.equal(stored.status, 201, JSON.stringify(stored.body));
        assert.deepEqual(await memory, { type: 'memory-changed', project: 'Bus', id: stored.body.memory_id });
        assert.equal(((await plan) as { project: string }).project, 'Bus', 'the project it created');
        const deleted = nextEvent(b, (e) => e.type === 'memory-changed');
        const gone = await rest(a.url, 'DELETE', `/api/v1/memories/${stored.body.memory_id}`, undefined, bearer(token));
        assert.equal(gone.status, 200, JSON.stringify(gone.body));
        assert.deepEqual(await deleted, { type: 'memory-changed', project: 'Bus', id: stored.body.memory_id });

        const graph = nextEvent(b, (e) => e.type === 'graph-uploaded');
        const uploaded = await fetch(`${a.url}/api/v1/graphs?repo=wren&branch=main`, {
          method: 'POST',
          body: wrenText,
          headers: { 'content-type': 'application/json', ...bearer(token) },
        });
        const body = (await uploaded.json()) as { graphId: string };
        assert.equal(uploaded.status, 201, JSON.stringify(body));
        assert.deepEqual(await graph, {
          type: 'graph-uploaded',
          graphId: body.graphId,
          repo: 'wren',
          commitHash: WREN_COMMIT,
        });
      } finally {
        await close();
      }
    });

    test('a rolled-back transaction announces nothing; the next committed change is heard', async () => {
      const { b, close, database } = await twoInstances(backend, ADMIN);
      try {
        const seen: ChangeEvent[] = [];
        b.app.changes.subscribe((event) => void seen.push(event));
        await assert.rejects(
          database.db.kysely.transaction().execute(async (trx) => {
            await notifyChange(trx, { type: 'key-changed', name: 'rolled-back' });
            throw new Error('roll back');
          }),
          /roll back/,
        );
        const committed = nextEvent(b, (e) => e.type === 'key-changed' && e.name === 'committed');
        await notifyChange(database.db.kysely, { type: 'key-changed', name: 'committed' });
        await committed;
        // Notifications arrive in commit order: had the rolled-back one been sent, it would be here.
        assert.deepEqual(
          seen.filter((e) => e.type === 'key-changed').map((e) => (e as { name: string }).name),
          ['committed'],
        );
      } finally {
        await close();
      }
    });
  });
}

describe('change bus: a lost listener connection (Postgres)', () => {
  test(
    'a listener killed with pg_terminate_backend reconnects, warns once, and later changes still arrive',
    { skip: postgresBackend ? false : 'needs Postgres (DATABASE_URL): PGlite has no connection to lose' },
    async () => {
      const lines: string[] = [];
      const { a, b, close, database } = await twoInstances(postgresBackend!, ADMIN, lines);
      try {
        const token = await createKey(a.url, ADMIN, 'writer', ['read', 'write']);
        const resynced = nextEvent(b, (e) => e.type === 'resync');
        // The pids first (a WHERE may evaluate pg_terminate_backend before the other conditions).
        const listeners = await sql<{ pid: number }>`
          select pid from pg_stat_activity
          where application_name = 'devstream-hub-changes' and datname = current_database()`.execute(
          database.db.kysely,
        );
        assert.equal(listeners.rows.length, 2, 'each instance has its listener connection');
        for (const { pid } of listeners.rows)
          await sql`select pg_terminate_backend(${pid}::int)`.execute(database.db.kysely);
        await resynced;
        const heard = nextEvent(b, (e) => e.type === 'task-changed');
        const answer = await rest(
          a.url,
          'POST',
          '/api/v1/tasks',
          taskInput({ title: 'After the outage' }),
          bearer(token),
        );
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        assert.deepEqual(await heard, {
          type: 'task-changed',
          project: answer.body.task.project,
          id: answer.body.task.id,
        });
        const warnings = lines.filter((l) => l.includes('change bus: the listener connection to Postgres was lost'));
        assert.equal(warnings.length, 1, `one warning per outage: ${warnings.join('')}`);
        assert.ok(lines.some((l) => l.includes('change bus: listening again')));
      } finally {
        await close();
      }
    },
  );
});
