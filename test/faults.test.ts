import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { openDb } from '../src/db/client.js';
import { toAppError } from '../src/operations/invoke.js';
import { postgresBaseUrl, once } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { clusterSupport, createCluster, type PgCluster } from '../support/pg-cluster.js';
import { initializeBody, rawInitialize, rawMcp, sessionHeaders } from './helpers/mcp-raw.js';
import { connectMcp, rest } from './helpers/server.js';
import { runCli, serve, type ServedProcess } from './helpers/service.js';

const TASK = { description: 'd', task_type: 'coding', priority: 5, phase_name: 'Faults', project: 'Faults' };

/** The tool call's text, for tool errors (`❌ Error …: CODE: …`). */
const textOf = (result: Record<string, unknown>): string =>
  (result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';

// A cluster of its own, stopped and started under the service: only with the Postgres half of the
// suite (DATABASE_URL set), and where Postgres binaries can run one.
const skipOutage = !postgresBaseUrl ? 'Postgres tests are off (no DATABASE_URL)' : (clusterSupport() ?? false);

describe('Postgres outage under a running service', { skip: skipOutage }, () => {
  let cluster: PgCluster;
  let fake: FakeOllama;
  let service: ServedProcess | undefined;
  // Every service a test started: a test that fails leaves its own running, and a child process
  // left running keeps this file's process (and so the whole run) from ending.
  const started: ServedProcess[] = [];
  const start = async (...args: Parameters<typeof serve>) => {
    const served = await serve(...args);
    started.push(served);
    return served;
  };
  /** A service on the cluster with the fake Ollama as its embedder. */
  const startEmbedding = (env: Record<string, string>) =>
    start({ DATABASE_URL: cluster.url, EMBEDDING_PROVIDER: 'ollama', OLLAMA_HOST: fake.url, ...env });

  before(async () => {
    cluster = await createCluster();
    fake = await new FakeOllama().start();
  });
  after(async () => {
    for (const served of started) await served.stop();
    await fake?.stop();
    await cluster?.destroy();
  });

  test('503 DATABASE_ERROR while it is down, readyz 503, recovery without a restart, no acknowledged write lost', async () => {
    service = await startEmbedding({
      OLLAMA_TIMEOUT_MS: '1000',
      // Every 503 gets its warning (the 5 s throttle is test/fault-log.test.ts's): no waiting it out.
      DEVSTREAM_TEST_UNAVAILABLE_LOG_EVERY_MS: '0',
    });
    const api = (method: string, path: string, body?: unknown) => rest(service!.url, method, path, body);
    const { client } = await connectMcp(service.url);
    // A client sending a malformed request id: the tool call's log lines carry the id that replaced it.
    const traced = (await connectMcp(service.url, '/mcp', { 'x-request-id': 'not a token' })).client;

    // Acknowledged writes before the outage, over REST and MCP; one memory while Ollama fails (queued).
    const tasks: Array<{ id: string; title: string }> = [];
    for (let i = 0; i < 3; i++) {
      const created = await api('POST', '/api/v1/tasks', { ...TASK, title: `Before outage ${i}` });
      assert.equal(created.status, 201);
      tasks.push({ id: created.body.task.id, title: created.body.task.title });
    }
    const viaMcp = await client.callTool({
      name: 'devstream_store_memory',
      arguments: { content: 'Stored over MCP before the outage.', content_type: 'decision', project: 'Faults' },
    });
    assert.notEqual(viaMcp.isError, true);
    fake.failWith = 500;
    const queued = await api('POST', '/api/v1/memories', {
      content: 'Stored text-only before the outage.',
      content_type: 'context',
      project: 'Faults',
    });
    assert.equal(queued.status, 201);
    assert.equal(queued.body.embedding_generated, false);

    // Writers keep going through the stop: transactions hold connections between statements, and a
    // connection lost there must not crash the process (pg emits 'error' on a checked-out client).
    let writing = true;
    const acknowledged: Array<{ id: string; title: string }> = [];
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const r = await api('POST', '/api/v1/tasks', {
          ...TASK,
          title: `Writer ${w}.${i}`,
          phase_name: `Writers ${i % 3}`,
        }).catch(() => null);
        if (r?.status === 201) acknowledged.push({ id: r.body.task.id, title: r.body.task.title });
        else if (r && r.status !== 503)
          assert.fail(`a write during the stop got ${r.status}: ${JSON.stringify(r.body)}`);
      }
    });
    await eventually(async () => (acknowledged.length >= 20 ? true : undefined), 20_000);
    await cluster.stop('fast');
    writing = false;
    await Promise.all(writers);
    fake.failWith = null;

    const started = Date.now();
    const traceStart = service.output().length;
    const tracedCall = await traced.callTool({ name: 'devstream_list_tasks', arguments: { project: 'Faults' } });
    assert.match(textOf(tracedCall), /DATABASE_ERROR/);
    const warning = await eventually(async () =>
      service!
        .output()
        .slice(traceStart)
        .split('\n')
        .find((l) => l.includes('answering 503') && l.includes('devstream_list_tasks')),
    );
    assert.match(JSON.parse(warning).reqId, /^[0-9a-f-]{36}$/, "the request id, not the client's malformed one");
    assert.ok(!service.output().includes('not a token'));
    await traced.close();
    const read = await api('GET', '/api/v1/tasks?project=Faults');
    assert.equal(read.status, 503);
    assert.equal(read.body.error.code, 'DATABASE_ERROR');
    assert.equal(read.headers.get('retry-after'), '5');
    const write = await api('POST', '/api/v1/tasks', { ...TASK, title: 'During outage' });
    assert.equal(write.status, 503);
    assert.equal(write.body.error.code, 'DATABASE_ERROR');
    const tool = await client.callTool({ name: 'devstream_list_tasks', arguments: { project: 'Faults' } });
    assert.equal(tool.isError, true);
    assert.match(textOf(tool), /DATABASE_ERROR: the database is unreachable/);
    const stored = await client.callTool({
      name: 'devstream_store_memory',
      arguments: { content: 'Refused during the outage.', content_type: 'context', project: 'Faults' },
    });
    assert.equal(stored.isError, true);
    assert.ok(Date.now() - started < 20_000, 'each refusal is quick: the pool does not wait for a dead database');
    const ready = await api('GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal((await api('GET', '/healthz')).status, 200, 'the process is up');
    // Starting a session needs no database: clients can connect and get clear tool errors.
    const raw = await rawMcp(service.url, initializeBody);
    assert.equal(raw.status, 200, raw.text);

    await cluster.start();
    await eventually(
      async () => ((await api('GET', '/api/v1/tasks?project=Faults')).status === 200 ? true : undefined),
      30_000,
    );
    assert.equal((await api('GET', '/readyz')).status, 200);
    assert.equal(service.child.exitCode, null, 'the service never exited');

    // Every acknowledged write is there; the refused ones are not.
    const found = new Map<string, string>();
    for (let offset = 0; ; offset += 500) {
      const listed = await api('GET', `/api/v1/tasks?project=Faults&limit=500&offset=${offset}`);
      for (const t of listed.body.tasks as Array<{ id: string; title: string }>) found.set(t.id, t.title);
      if (offset + 500 >= listed.body.total) break;
    }
    for (const t of [...tasks, ...acknowledged])
      assert.equal(found.get(t.id), t.title, `acknowledged task ${t.title} is stored`);
    assert.ok(![...found.values()].includes('During outage'));
    const mcpId = (viaMcp.structuredContent as { memory_id: string }).memory_id;
    assert.equal((await api('GET', `/api/v1/memories/${mcpId}`)).status, 200);
    const search = await api('POST', '/api/v1/memories/search', {
      query: 'refused during the outage',
      project: 'Faults',
    });
    assert.ok(search.body.results.every((r: { content: string }) => !r.content.includes('Refused during')));

    // The same MCP session and the embedding worker carry on: the queued memory gets its vector.
    const again = await client.callTool({
      name: 'devstream_create_task',
      arguments: { ...TASK, title: 'After outage' },
    });
    assert.notEqual(again.isError, true, textOf(again));
    const embedded = await eventually(async () => {
      const memory = (await api('GET', `/api/v1/memories/${queued.body.memory_id}`)).body.memory;
      return memory?.embedding_dimensions === 768 ? memory : undefined;
    }, 30_000);
    assert.equal(embedded.embedding_model, 'nomic-embed-text');
    await client.close();
    assert.equal(await service.stop(), 0);
    service = undefined;
  });

  test("vectors the embedder made while the database went away are written when it is back, not after the jobs' lease", async () => {
    // A 20 s embedder timeout leases a claimed job for 70 s (two calls and 30 s): far past the wait below.
    service = await startEmbedding({ OLLAMA_TIMEOUT_MS: '20000' });
    const api = (method: string, path: string, body?: unknown) => rest(service!.url, method, path, body);
    fake.failWith = 500;
    const content = 'Embedded while the database restarted.';
    const queued = await api('POST', '/api/v1/memories', { content, content_type: 'context', project: 'Faults' });
    assert.equal(queued.status, 201);
    assert.equal(queued.body.embedding_generated, false);
    // The worker claims the job and calls the embedder, which answers only after the database has stopped.
    const calls = fake.calls.length;
    fake.failWith = null;
    fake.delayMs = 6_000;
    try {
      await eventually(async () =>
        fake.calls.slice(calls).some((c) => c.input.some((t) => t.includes(content))) ? true : undefined,
      );
      const inFlight = Date.now();
      await cluster.stop('fast');
      assert.ok(Date.now() - inFlight < 5_000, 'the database stopped while the embedder call was in flight');
      const logged = service.output().length;
      await eventually(async () =>
        service!.output().slice(logged).includes('embedding worker could not reach the database') ? true : undefined,
      );
    } finally {
      fake.delayMs = 0;
      await cluster.start();
    }
    const callsBefore = fake.calls.length;
    const memory = await eventually(async () => {
      const got = (await api('GET', `/api/v1/memories/${queued.body.memory_id}`)).body.memory;
      return got?.embedding_dimensions === 768 ? got : undefined;
    });
    assert.equal(memory.embedding_model, 'nomic-embed-text');
    assert.ok(
      !fake.calls.slice(callsBefore).some((c) => c.input.some((t) => t.includes(content))),
      'the vector made before is the one written: the embedder is not asked again',
    );
    assert.equal(await service.stop(), 0);
    service = undefined;
  });

  test('a transaction whose connection breaks between statements fails as 503, and the process lives', async () => {
    const db = await openDb({ databaseUrl: cluster.url, poolSize: 2 });
    try {
      const failure = await db.kysely
        .transaction()
        .execute(async (trx) => {
          await sql`select 1`.execute(trx);
          await cluster.stop('fast'); // the client is checked out, idle in the transaction
          await sql`select 1`.execute(trx);
        })
        .then(
          () => assert.fail('the transaction cannot commit'),
          (error: unknown) => error,
        );
      const mapped = toAppError(failure, 'a transaction'); // the path every operation's error takes
      assert.equal(mapped.status, 503, `${(failure as Error).message} → ${mapped.code} ${mapped.status}`);
      assert.equal(mapped.code, 'DATABASE_ERROR');
    } finally {
      await cluster.start();
      await db.close();
    }
  });

  test('start-up waits for the database (DB_CONNECT_TIMEOUT_S) and gives up with a clear error', async () => {
    await cluster.stop('fast');
    service = await start({ DATABASE_URL: cluster.url, DB_CONNECT_TIMEOUT_S: '60' }, { waitReady: false });
    await eventually(async () => (service!.output().includes('waiting for the database') ? true : undefined), 20_000);
    assert.equal(service.child.exitCode, null);
    await cluster.start();
    await service.ready(60_000);
    assert.equal(await service.stop(), 0);
    service = undefined;

    await cluster.stop('fast');
    const url = new URL(cluster.url);
    url.password = 'never-print-me';
    const gaveUp = await runCli(['serve'], { DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT_S: '1' });
    assert.equal(gaveUp.code, 1);
    assert.match(gaveUp.stderr, /ECONNREFUSED|connect/);
    assert.ok(!`${gaveUp.stdout}${gaveUp.stderr}`.includes('never-print-me'), 'the URL password is not printed');
    await cluster.start();
  });
});

describe('graceful shutdown', once, () => {
  let fake: FakeOllama;
  const dirs: string[] = [];
  before(async () => {
    fake = await new FakeOllama().start();
  });
  after(async () => {
    await fake?.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const dataDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-shutdown-'));
    dirs.push(dir);
    return dir;
  };
  const env = (dir: string, extra: Record<string, string> = {}) => ({
    DATA_DIR: dir,
    EMBEDDING_PROVIDER: 'ollama',
    OLLAMA_HOST: fake.url,
    OLLAMA_TIMEOUT_MS: '20000',
    LOG_LEVEL: 'info',
    ...extra,
  });
  /**
   * SIGTERM to `service` once the fake Ollama has two embedding calls whose input includes `text` (both
   * writes are in flight); when it was sent (Date.now()).
   */
  const terminateOnceEmbedding = async (service: ServedProcess, text: string) => {
    await eventually(
      async () => (fake.calls.filter((c) => c.input.some((t) => t.includes(text))).length === 2 ? true : undefined),
      10_000,
    );
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    return signalled;
  };

  test('SIGTERM: requests in flight (REST and MCP) complete, SSE streams close, exit 0; the writes are durable', async () => {
    const dir = await dataDir();
    const service = await serve(env(dir));
    const { client } = await connectMcp(service.url);
    // A second session, by hand, whose SSE stream is watched to see it end.
    const sessionId = await rawInitialize(service.url);
    const stream = await fetch(`${service.url}/mcp`, {
      headers: { accept: 'text/event-stream', ...sessionHeaders(sessionId) },
    });
    assert.equal(stream.status, 200);
    const streamEnded = (async () => {
      const reader = stream.body!.getReader();
      for (;;) if ((await reader.read()).done) return true;
    })().catch(() => true);

    fake.delayMs = 1_500; // each store now takes 1.5 s (its embedding)
    try {
      const restStore = rest(service.url, 'POST', '/api/v1/memories', {
        content: 'Stored over REST during shutdown.',
        content_type: 'context',
        project: 'Shutdown',
      });
      const mcpStore = client.callTool({
        name: 'devstream_store_memory',
        arguments: { content: 'Stored over MCP during shutdown.', content_type: 'context', project: 'Shutdown' },
      });
      const signalled = await terminateOnceEmbedding(service, 'during shutdown');

      const [restAnswer, mcpAnswer] = await Promise.all([restStore, mcpStore]);
      assert.equal(restAnswer.status, 201);
      assert.equal(restAnswer.body.embedding_generated, true, 'it finished its work, embedding included');
      assert.notEqual(mcpAnswer.isError, true, textOf(mcpAnswer));
      assert.equal(await streamEnded, true, 'the SSE stream was closed');
      assert.equal(await service.exited, 0);
      assert.ok(Date.now() - signalled < 10_000, 'within SHUTDOWN_TIMEOUT_S');
      assert.match(service.output(), /shutting down/);
      await assert.rejects(fetch(`${service.url}/healthz`), 'no longer listening');

      fake.delayMs = 0;
      const reopened = await serve(env(dir));
      try {
        const memoryId = (mcpAnswer.structuredContent as { memory_id: string }).memory_id;
        for (const id of [restAnswer.body.memory_id, memoryId]) {
          const got = await rest(reopened.url, 'GET', `/api/v1/memories/${id}`);
          assert.equal(got.status, 200, `memory ${id} is durable`);
          assert.equal(got.body.memory.embedding_dimensions, 768);
        }
      } finally {
        assert.equal(await reopened.stop(), 0);
      }
    } finally {
      fake.delayMs = 0;
      await client.close().catch(() => {});
    }
  });

  test('SHUTDOWN_TIMEOUT_S bounds the wait: a request still running then is cut, and the process exits', async () => {
    const service = await serve(env(await dataDir(), { SHUTDOWN_TIMEOUT_S: '1' }));
    fake.delayMs = 15_000;
    try {
      const slow = rest(service.url, 'POST', '/api/v1/memories', {
        content: 'Too slow for the shutdown.',
        content_type: 'context',
        project: 'Shutdown',
      }).then(
        (r) => r.status,
        () => 'cut' as const,
      );
      // An MCP tool call too: the shutdown waits for it before closing sessions, but not past the bound.
      const { client } = await connectMcp(service.url);
      const slowTool = client
        .callTool({
          name: 'devstream_store_memory',
          arguments: { content: 'Too slow over MCP.', content_type: 'context', project: 'Shutdown' },
        })
        .then(
          (r) => (r.isError ? textOf(r) : 'answered'),
          () => 'cut' as const,
        );
      const signalled = await terminateOnceEmbedding(service, 'Too slow');
      const code = await service.exited;
      assert.ok(
        Date.now() - signalled < 8_000,
        `exited ${Date.now() - signalled} ms after SIGTERM (bound 1 s + closing)`,
      );
      assert.equal(code, 0);
      assert.equal(await slow, 'cut', 'its connection was closed, not answered as a success');
      // The SDK client notices a cut stream only at its own timeout: closing it ends the call now.
      // Had the service answered before exiting, the call would have resolved already.
      await client.close().catch(() => {});
      assert.equal(await slowTool, 'cut');
      assert.match(service.output(), /shutdown timeout/);
    } finally {
      fake.delayMs = 0;
      await sleep(0);
    }
  });
});
