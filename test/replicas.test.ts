/*
 * Three service processes on one Postgres and one Redis behind nginx (test/helpers/replicas.ts):
 * REST calls spread over them, one rate limit per key across them, a revocation through one
 * refused by all, and a replica SIGKILLed under a stream of writes. Runs in the DATABASE_URL pass;
 * skipped, saying why, without Postgres, redis-server or nginx.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createScratchDatabase } from '../support/postgres.js';
import { postgresBaseUrl } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { createKey } from './helpers/keys.js';
import { replicasSkipReason, startReplicas, type Replicas } from './helpers/replicas.js';
import { rest } from './helpers/server.js';
import { taskInput } from './helpers/task-input.js';

const ADMIN = 'r'.repeat(40);
const REPLICAS = 3;
/** Requests per key per window (one window of 10 minutes: every test runs well within it). */
const LIMIT = 30;

describe('three replicas behind nginx', { skip: replicasSkipReason(postgresBaseUrl) }, () => {
  let replicas: Replicas;
  let dropDatabase: (() => Promise<void>) | undefined;

  before(async () => {
    const scratch = await createScratchDatabase(postgresBaseUrl!);
    dropDatabase = () => scratch.drop();
    replicas = await startReplicas({
      count: REPLICAS,
      databaseUrl: scratch.url,
      env: { ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW: '10 minutes' },
    });
  });
  after(async () => {
    await replicas?.stop();
    await dropDatabase?.();
  });

  /** A REST call through nginx; `upstream` is the replica that answered (nginx's x-upstream). */
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const answer = await rest(replicas.url, method, path, body, bearer(token));
    return { ...answer, upstream: answer.headers.get('x-upstream') ?? '' };
  };

  test('REST calls spread over the three replicas', async () => {
    const token = await createKey(replicas.url, ADMIN, 'spreader', ['read']);
    const upstreams = new Set<string>();
    for (let i = 0; i < 2 * REPLICAS; i++) {
      const answer = await call('GET', '/api/v1/tasks', token);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      upstreams.add(answer.upstream);
    }
    assert.deepEqual(
      [...upstreams].sort(),
      replicas.instances.map((_, i) => replicas.address(i)).sort(),
      'every replica answered',
    );
  });

  test(`a rate limit of ${LIMIT} per key holds across the replicas (at most ${LIMIT} + ${REPLICAS - 1} pass)`, async () => {
    const token = await createKey(replicas.url, ADMIN, 'flooder', ['read']);
    const answers = await Promise.all(
      Array.from({ length: 3 * LIMIT }, () => call('GET', '/api/v1/tasks?limit=1', token)),
    );
    const passed = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(passed.length + refused.length, answers.length, `only 200 and 429: ${answers.map((a) => a.status)}`);
    assert.ok(passed.length <= LIMIT + REPLICAS - 1, `${passed.length} passed of a limit of ${LIMIT}`);
    assert.ok(passed.length >= LIMIT, `the limit itself passes: ${passed.length}`);
    assert.ok(refused.every((a) => a.body.error.code === 'RATE_LIMITED'));
    assert.equal(
      new Set(refused.map((a) => a.upstream)).size,
      REPLICAS,
      'every replica refused once the budget was spent',
    );
  });

  test('a key revoked through one replica is refused by the others on their next request', async () => {
    const token = await createKey(replicas.url, ADMIN, 'leaver', ['read']);
    assert.equal((await call('GET', '/api/v1/tasks', token)).status, 200);
    const revoked = await call('DELETE', '/api/v1/keys/leaver', ADMIN);
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const refusedBy = new Set<string>();
    for (let i = 0; i < 2 * REPLICAS; i++) {
      const answer = await call('GET', '/api/v1/tasks', token);
      assert.equal(answer.status, 401, `${answer.upstream} let a revoked key through`);
      refusedBy.add(answer.upstream);
    }
    assert.ok(
      [...refusedBy].some((u) => u !== revoked.upstream),
      `refused by another replica than the one that revoked it (${revoked.upstream}): ${[...refusedBy]}`,
    );
    assert.equal(refusedBy.size, REPLICAS, `every replica refused it: ${[...refusedBy]}`);
  });

  test('one replica SIGKILLed under a stream of writes: writes carry on through the others, none acknowledged is lost', async () => {
    // Writers with keys of their own (each well under the rate limit), writing until enough have
    // been acknowledged after the kill.
    const WRITERS = 3;
    const tokens = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) => createKey(replicas.url, ADMIN, `writer-${i}`, ['read', 'write'])),
    );
    const acknowledged: Array<{ id: string; upstream: string; afterKill: boolean }> = [];
    const failures: Array<{ status: number; upstream: string; body: unknown }> = [];
    let killed = false;
    const victim = replicas.instances[1]!;
    const victimAddress = replicas.address(1);
    const enoughAfterKill = () => acknowledged.filter((a) => a.afterKill).length >= 2 * REPLICAS;
    const writer = async (w: number) => {
      for (let n = 0; n < LIMIT - 2 && !(killed && enoughAfterKill()); n++) {
        const wasKilled = killed;
        const answer = await call(
          'POST',
          '/api/v1/tasks',
          tokens[w]!,
          taskInput({ title: `write ${w}.${n}`, project: 'Replicas' }),
        );
        if (answer.status === 201)
          acknowledged.push({ id: answer.body.task.id, upstream: answer.upstream, afterKill: wasKilled });
        else failures.push({ status: answer.status, upstream: answer.upstream, body: answer.body });
        if (!killed && acknowledged.length >= 3 * WRITERS) {
          killed = true;
          victim.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    await victim.exited;

    assert.ok(killed, 'the replica was killed');
    assert.ok(enoughAfterKill(), `writes carried on after the kill: ${acknowledged.filter((a) => a.afterKill).length}`);
    assert.ok(
      acknowledged.filter((a) => a.afterKill && a.upstream !== victimAddress).length > 0,
      'the other replicas acknowledged writes after the kill',
    );
    // The only failures: calls in flight on the killed replica (nginx answers 502 for them), at most one per writer.
    assert.ok(
      failures.every((f) => f.status === 502 && f.upstream.includes(victimAddress)),
      `failures other than in-flight calls on the killed replica: ${JSON.stringify(failures).slice(0, 500)}`,
    );
    assert.ok(failures.length <= WRITERS, `${failures.length} failed writes for ${WRITERS} writers`);

    const listed = await call('GET', '/api/v1/tasks?project=Replicas&limit=500', ADMIN);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const stored = new Set((listed.body.tasks as Array<{ id: string }>).map((t) => t.id));
    const lost = acknowledged.filter((a) => !stored.has(a.id));
    assert.deepEqual(lost, [], 'every acknowledged write is stored');
  });
});
