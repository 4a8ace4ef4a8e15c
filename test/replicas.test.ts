/*
 * Three service processes on one Postgres and one Redis behind nginx (test/helpers/replicas.ts):
 * REST calls spread over them, one rate limit per key across them, a revocation through one
 * refused by all, and a replica SIGKILLed under a stream of writes. Runs in the DATABASE_URL pass;
 * skipped, saying why, without Postgres, redis-server or nginx.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createScratchDatabase } from '../support/postgres.js';
import { postgresBaseUrl } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { wrenText } from './helpers/graph-fixture.js';
import { createKey } from './helpers/keys.js';
import { nextResourceNotification } from './helpers/mcp-notifications.js';
import { initializeBody, rawMcp } from './helpers/mcp-raw.js';
import { replicasSkipReason, startReplicas, type Replicas } from './helpers/replicas.js';
import { connectMcp, rest } from './helpers/server.js';
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

  /** A raw 2026-07-28 tools/call through nginx (the era needs no affinity); `upstream` answered it. */
  const modernCall = async (token: string, name: string, args: Record<string, unknown>) => {
    const headers: Record<string, string> = {
      ...bearer(token),
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    };
    if (typeof args.project === 'string') headers['mcp-param-project'] = args.project;
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: meta } };
    const answer = await rawMcp(replicas.url, body, { headers });
    return { ...answer, upstream: answer.headers.get('x-upstream') ?? '' };
  };
  /** A 2026-07-28 SDK client through nginx. */
  const modernClient = async (token: string) =>
    (await connectMcp(replicas.url, '/mcp', bearer(token), { era: 'modern', name: 'replica-test' })).client;

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

  test('2026-era MCP calls spread over the three replicas, without sessions; an SDK client works through nginx', async () => {
    const token = await createKey(replicas.url, ADMIN, 'mcp-spreader', ['read']);
    const upstreams = new Set<string>();
    for (let i = 0; i < 2 * REPLICAS; i++) {
      const answer = await modernCall(token, 'devstream_list_plans', {});
      assert.equal(answer.status, 200, answer.text);
      assert.ok(answer.json.result.content[0].text.includes('Plans'), answer.text);
      assert.equal(answer.headers.get('mcp-session-id'), null);
      upstreams.add(answer.upstream);
    }
    assert.equal(upstreams.size, REPLICAS, `every replica answered: ${[...upstreams]}`);
    const client = await modernClient(token);
    try {
      for (let i = 0; i < REPLICAS; i++)
        assert.notEqual((await client.callTool({ name: 'devstream_list_tasks', arguments: {} })).isError, true);
    } finally {
      await client.close();
    }
  });

  test('a graph uploaded through one replica reaches MCP clients of another: a 2026 listen stream and a 2025 session', async () => {
    const token = await createKey(replicas.url, ADMIN, 'listener', ['read', 'write']);
    const heard = (client: Client, label: string) =>
      nextResourceNotification(client, 'notifications/resources/list_changed', label);
    const modern = await modernClient(token);
    const legacyTransport = new StreamableHTTPClientTransport(new URL('/mcp', replicas.url), {
      requestInit: { headers: bearer(token) },
    });
    const legacy = new Client({ name: 'replica-test-legacy', version: '1' });
    try {
      const modernHeard = heard(modern, 'the 2026 client');
      await modern.listen({ resourcesListChanged: true });
      await legacy.connect(legacyTransport);
      const legacyHeard = heard(legacy, 'the 2025 client');
      // The session id names its replica (INSTANCE_NAME=r<i>): upload through another one.
      const home = Number(/^r(\d+)\./.exec(legacyTransport.sessionId ?? '')?.[1]);
      assert.ok(Number.isInteger(home), `a session id that names its replica: ${legacyTransport.sessionId}`);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the session's GET stream opens
      const other = replicas.instances[(home + 1) % REPLICAS]!;
      const uploaded = await fetch(`${other.url}/api/v1/graphs?repo=wren&branch=main`, {
        method: 'POST',
        body: wrenText,
        headers: { 'content-type': 'application/json', ...bearer(token) },
      });
      assert.equal(uploaded.status, 201, await uploaded.text());
      await Promise.all([modernHeard, legacyHeard]);
    } finally {
      await Promise.allSettled([modern.close(), legacy.close()]);
    }
  });

  test('a task changed through one replica reaches clients subscribed to it on another, in both eras', async () => {
    const token = await createKey(replicas.url, ADMIN, 'watcher', ['read', 'write']);
    const made = await call('POST', '/api/v1/tasks', token, taskInput({ title: 'watched', project: 'Replicas' }));
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const uri = `devstream://task/${made.body.task.id}`;
    const updated = (client: Client, label: string) =>
      nextResourceNotification(client, 'notifications/resources/updated', label);
    const modern = await modernClient(token);
    const legacyTransport = new StreamableHTTPClientTransport(new URL('/mcp', replicas.url), {
      requestInit: { headers: bearer(token) },
    });
    const legacy = new Client({ name: 'replica-test-watcher', version: '1' });
    try {
      const modernHeard = updated(modern, 'the 2026 client');
      await modern.listen({ resourceSubscriptions: [uri] });
      await legacy.connect(legacyTransport);
      await legacy.subscribeResource({ uri });
      const legacyHeard = updated(legacy, 'the 2025 client');
      const home = Number(/^r(\d+)\./.exec(legacyTransport.sessionId ?? '')?.[1]);
      await new Promise((resolve) => setTimeout(resolve, 300)); // the session's GET stream opens
      const other = replicas.instances[(home + 1) % REPLICAS]!;
      const changed = await rest(
        other.url,
        'PATCH',
        `/api/v1/tasks/${made.body.task.id}`,
        { status: 'active' },
        bearer(token),
      );
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.deepEqual(await Promise.all([modernHeard, legacyHeard]), [uri, uri]);
    } finally {
      await Promise.allSettled([modern.close(), legacy.close()]);
    }
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
    const acknowledged: Array<{ id: string; upstream: string; afterKill: boolean; via: 'rest' | 'mcp' }> = [];
    const failures: Array<{ status: number; upstream: string; body: unknown }> = [];
    let killed = false;
    const victim = replicas.instances[1]!;
    const victimAddress = replicas.address(1);
    const enoughAfterKill = () => acknowledged.filter((a) => a.afterKill).length >= 2 * REPLICAS;
    // A 2025-era session held by the victim (initialize until nginx's round robin lands on it): its
    // requests keep to it (nginx routes on the replica name that starts the session id).
    let sessionId = '';
    for (let i = 0; i < 2 * REPLICAS && !sessionId.startsWith('r1.'); i++) {
      const init = await rawMcp(replicas.url, initializeBody, { headers: bearer(tokens[0]!) });
      assert.equal(init.status, 200, init.text);
      sessionId = init.headers.get('mcp-session-id') ?? '';
    }
    assert.ok(sessionId.startsWith('r1.'), `a session on the victim: ${sessionId}`);
    for (let i = 0; i < REPLICAS; i++) {
      const ping = await rawMcp(
        replicas.url,
        { jsonrpc: '2.0', id: 2 + i, method: 'ping' },
        { sessionId, headers: bearer(tokens[0]!) },
      );
      assert.equal(ping.status, 200, ping.text);
      assert.equal(ping.headers.get('x-upstream'), victimAddress, 'a session keeps to its replica');
    }
    // Writers 0 and 1 write over REST, writer 2 over MCP in the 2026 era.
    type Written = { id: string; upstream: string } | { failure: { status: number; upstream: string; body: unknown } };
    const write = async (w: number, n: number): Promise<Written> => {
      const input = taskInput({ title: `write ${w}.${n}`, project: 'Replicas' });
      if (w < 2) {
        const answer = await call('POST', '/api/v1/tasks', tokens[w]!, input);
        return answer.status === 201
          ? { id: answer.body.task.id as string, upstream: answer.upstream }
          : { failure: { status: answer.status, upstream: answer.upstream, body: answer.body } };
      }
      const answer = await modernCall(tokens[w]!, 'devstream_create_task', input);
      const result = answer.json?.result;
      return answer.status === 200 && result && !result.isError
        ? { id: result.structuredContent.task.id as string, upstream: answer.upstream }
        : { failure: { status: answer.status, upstream: answer.upstream, body: answer.text.slice(0, 300) } };
    };
    const writer = async (w: number) => {
      for (let n = 0; n < LIMIT - 2 * REPLICAS - 2 && !(killed && enoughAfterKill()); n++) {
        const wasKilled = killed;
        const answer = await write(w, n);
        if ('id' in answer)
          acknowledged.push({
            id: answer.id,
            upstream: answer.upstream,
            afterKill: wasKilled,
            via: w < 2 ? 'rest' : 'mcp',
          });
        else failures.push(answer.failure);
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
    for (const via of ['rest', 'mcp'])
      assert.ok(
        acknowledged.some((a) => a.afterKill && a.via === via),
        `${via} writes were acknowledged after the kill`,
      );

    // The victim's session: another replica answers 404, and the client initializes again there.
    const orphan = await rawMcp(
      replicas.url,
      { jsonrpc: '2.0', id: 9, method: 'ping' },
      { sessionId, headers: bearer(tokens[0]!) },
    );
    assert.equal(orphan.status, 404, orphan.text);
    assert.notEqual(orphan.headers.get('x-upstream'), victimAddress);
    const again = await rawMcp(replicas.url, initializeBody, { headers: bearer(tokens[0]!) });
    assert.equal(again.status, 200, again.text);
    assert.ok(!again.headers.get('mcp-session-id')!.startsWith('r1.'));
  });
});
