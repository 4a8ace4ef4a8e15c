/*
 * REDIS_URL: rate limits counted in one Redis, shared by every instance on it. A real redis-server
 * (started per suite on a free loopback port, no persistence), two listening instances of the service;
 * skipped, saying why, when redis-server is not installed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Authenticator } from '../src/auth/authenticator.js';
import { openDb } from '../src/db/client.js';
import { registerAuth } from '../src/http/auth.js';
import { closeRateLimitRedis, connectRateLimitRedis, rateLimitRedis } from '../src/http/rate-limit-redis.js';
import { freePort } from '../support/free-port.js';
import { postgresBackend, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { eventually } from './helpers/eventually.js';
import { pglite } from './helpers/pglite.js';
import { NO_REDIS_REASON, REDIS_SERVER, startRedis, type TestRedis } from './helpers/redis.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

const ADMIN = 'a'.repeat(40);
const LIMIT = 5;

/** Two databases for two instances: one Postgres scratch database opened twice (DATABASE_URL), else a PGlite each. */
async function twoDatabases(): Promise<[TestDb, TestDb]> {
  if (postgresBackend) {
    const first = await postgresBackend.open();
    const db = await openDb({ databaseUrl: first.url });
    return [first, { db, schemaVersion: first.schemaVersion, dispose: () => db.close() }];
  }
  return [await pglite.open(), await pglite.open()];
}

/** One instance with auth required (ADMIN_TOKEN is the caller: a key both instances know), LIMIT per minute. */
function instance(database: TestDb, redisUrl: string | undefined, lines?: string[]): Promise<TestServer> {
  return startServer(
    database,
    {
      auth: { mode: 'required', adminToken: ADMIN },
      limits: {
        rateLimitMax: LIMIT,
        rateLimitWindowMs: 60_000,
        bodyLimit: 2 * 1024 * 1024,
        requestTimeoutMs: 300_000,
        maxSessions: 1000,
        maxSessionsPerKey: 100,
      },
      ...(redisUrl ? { redisUrl } : {}),
      ...(lines ? { logLevel: 'info' as const } : {}),
    },
    lines ? { logStream: { write: (line: string) => void lines.push(line) } } : {},
  );
}

/** `count` requests of the admin key, alternating between the servers; the statuses in order. */
async function alternate(servers: TestServer[], count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const server = servers[i % servers.length]!;
    const answer = await rest(server.url, 'GET', '/api/v1/keys', undefined, bearer(ADMIN));
    if (answer.status === 429) assert.equal(answer.body.error.code, 'RATE_LIMITED');
    statuses.push(answer.status);
  }
  return statuses;
}

/** Names of the rate limiter's connections Redis sees (CLIENT LIST), from a connection of the test's own. */
async function limiterConnections(url: string): Promise<number> {
  const probe = new Redis(url, { lazyConnect: true });
  await probe.connect();
  try {
    const list = (await probe.call('CLIENT', 'LIST')) as string;
    return list.split('\n').filter((l) => l.includes('name=devstream-hub-rate-limit')).length;
  } finally {
    probe.disconnect();
  }
}

describe('rate limits across instances (REDIS_URL)', { skip: REDIS_SERVER ? false : NO_REDIS_REASON }, () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  test(`two instances on one Redis let at most ${LIMIT} requests of a key through in one window, in all`, async () => {
    const databases = await twoDatabases();
    const servers = [await instance(databases[0], redis.url), await instance(databases[1], redis.url)];
    try {
      assert.equal(await limiterConnections(redis.url), 2, 'each instance holds one connection to Redis');
      const statuses = await alternate(servers, 4 * LIMIT);
      assert.equal(statuses.filter((s) => s === 200).length, LIMIT, `statuses: ${statuses.join(' ')}`);
      assert.deepEqual([...new Set(statuses)].sort(), [200, 429], `only passes and refusals: ${statuses.join(' ')}`);
      // Both instances refuse once the shared budget is spent.
      assert.deepEqual(statuses.slice(LIMIT, LIMIT + 2), [429, 429]);
    } finally {
      for (const s of servers) await s.close();
      for (const d of databases) await d.dispose();
    }
    assert.equal(await limiterConnections(redis.url), 0, 'closing the apps closed their Redis connections');
  });

  test('without REDIS_URL each instance counts its own (the control: twice the limit passes)', async () => {
    const databases = await twoDatabases();
    const servers = [await instance(databases[0], undefined), await instance(databases[1], undefined)];
    try {
      const statuses = await alternate(servers, 4 * LIMIT);
      assert.equal(statuses.filter((s) => s === 200).length, 2 * LIMIT, `statuses: ${statuses.join(' ')}`);
    } finally {
      for (const s of servers) await s.close();
      for (const d of databases) await d.dispose();
    }
  });

  test("a JSON-RPC batch's further messages (countMore, the plugin's createRateLimit) are counted in Redis too", async () => {
    // Two bare apps with the service's auth hook and a route that counts a batch as the MCP transport does.
    const apps: FastifyInstance[] = [];
    const urls: string[] = [];
    const db = await pglite.open();
    try {
      for (let i = 0; i < 2; i++) {
        const app = Fastify();
        const client = rateLimitRedis(redis.url, app.log);
        app.addHook('onReady', () => connectRateLimitRedis(client));
        app.addHook('onClose', () => closeRateLimitRedis(client));
        const { countMore } = await registerAuth(app, {
          authenticator: new Authenticator(db.db.kysely, 'off', undefined, app.log),
          rateLimit: { max: LIMIT, windowMs: 60_000, redis: client },
          isDashboardFile: () => false,
        });
        app.post('/batch', async (request, reply) => {
          await countMore(request, reply, (request.body as { messages: number }).messages - 1);
          return { ok: true };
        });
        await app.listen({ port: 0, host: '127.0.0.1' });
        apps.push(app);
        const address = app.server.address();
        urls.push(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
      }
      const batch = async (i: number, messages: number) =>
        (await rest(urls[i]!, 'POST', '/batch', { messages })).status;
      assert.equal(await batch(0, 3), 200, 'a batch of 3 on A: 3 of 5 spent');
      assert.equal(await batch(1, 4), 429, 'a batch of 4 on B does not fit the 2 left (its POST spends one)');
      assert.equal(await batch(1, 1), 200, 'the last one, on B');
      assert.equal(await batch(0, 1), 429, 'A sees the budget spent on B');
    } finally {
      for (const app of apps) await app.close();
      await db.dispose();
    }
  });

  test('Redis down: requests are served uncounted and one warning is logged; once it is back, they are counted again', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const database = await pglite.open();
    const server = await instance(database, `redis://127.0.0.1:${port}`, lines);
    let revived: TestRedis | undefined;
    try {
      const statuses = await alternate([server], 3 * LIMIT);
      assert.deepEqual([...new Set(statuses)], [200], `served while Redis is down: ${statuses.join(' ')}`);
      const warnings = lines.filter((l) => l.includes('Redis unreachable'));
      assert.equal(warnings.length, 1, `one warning per outage: ${lines.join('')}`);
      assert.doesNotMatch(lines.join(''), new RegExp(`redis://127\\.0\\.0\\.1:${port}`), 'the URL is not logged');
      revived = await startRedis(port);
      await eventually(async () => ((await alternate([server], 1))[0] === 429 ? true : undefined));
      assert.ok(
        lines.some((l) => l.includes('Redis reachable again')),
        'its return is logged',
      );
    } finally {
      await server.close();
      await database.dispose();
      await revived?.stop();
    }
  });
});
