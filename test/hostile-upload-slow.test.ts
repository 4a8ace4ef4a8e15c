import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { backends, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { createKey } from './helpers/keys.js';
import { eventually } from './helpers/eventually.js';
import { rest, startServer, type TestServer } from './helpers/server.js';
import { testConfig } from '../support/test-config.js';

// Issue 19, defects 4 and 5: an upload that stalls (headers, then a trickle or nothing) must not
// hold a database connection — with Postgres's pool of 10, ten of them turned every other request
// into a 503 after 5 s; with PGlite's one connection a single one stopped the service. Uploads in
// flight are capped per key and in all (429), a body must keep up a minimum rate (408), and an
// answer given before the body has arrived leaves no keep-alive connection with the rest of the
// body unread in it (the next request on it hung ~72 s).

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghijklmnop';
/** What "other requests keep answering promptly" means while uploads stall. */
const PROMPT_MS = 1_000;
/** Longest wait for an answer that must come (a failure detector, not a performance bound). */
const ANSWER_MS = 15_000;

/** A small, valid commit file. */
const commitFile = (commit: string) =>
  JSON.stringify({
    commitHash: commit,
    nodes: Array.from({ length: 20 }, (_, i) => ({
      id: `src/m${i}.ts::f${i}`,
      name: `f${i}`,
      type: 'FUNCTION',
      filePath: `src/m${i}.ts`,
      rawCode: `function f${i}() {}`,
    })),
    edges: [],
  });

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * One raw HTTP/1.1 connection (node:net), so that a test decides exactly which bytes go when, and
 * sees every answer on the connection and whether the server closed it.
 */
class RawConnection {
  readonly socket: Socket;
  private buffer = Buffer.alloc(0);
  private readonly answers: RawAnswer[] = [];
  private waiting: Array<() => void> = [];
  closed = false;
  /** Errors on the socket: EPIPE / ECONNRESET when writing after the server closed, or a reset. */
  readonly errors: Error[] = [];
  readonly ended: Promise<void>;

  /** `allowHalfOpen`: go on sending after the server's FIN, as an HTTP client still sending its body does. */
  constructor(url: string, allowHalfOpen = false) {
    const { hostname, port } = new URL(url);
    this.socket = connect({ port: Number(port), host: hostname, allowHalfOpen });
    this.socket.on('error', (error) => this.errors.push(error));
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    this.ended = new Promise((resolve) =>
      this.socket.once('close', () => {
        this.closed = true;
        this.wake();
        resolve();
      }),
    );
  }

  private wake() {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  private parse() {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (this.buffer.length < end + 4 + length) return;
      const text = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(end + 4 + length);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      this.answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
      this.wake();
    }
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  /** The `n`th answer on this connection (0 first); null if the connection closed first, or after `ms`. */
  async answer(n = 0, ms = ANSWER_MS): Promise<RawAnswer | null> {
    const deadline = Date.now() + ms;
    while (this.answers.length <= n && !this.closed && Date.now() < deadline) {
      await Promise.race([
        new Promise<void>((resolve) => this.waiting.push(resolve)),
        sleep(Math.max(0, deadline - Date.now())),
      ]);
    }
    return this.answers[n] ?? null;
  }

  /** Whether an answer has come yet. */
  get answered(): boolean {
    return this.answers.length > 0;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Sends an upload's request line and headers (and `first` bytes of body): the rest is the test's to send, or not. */
function startUpload(
  url: string,
  options: {
    token?: string;
    repo: string;
    length?: number;
    first?: string | Buffer;
    headers?: Record<string, string>;
    query?: string;
    allowHalfOpen?: boolean;
  },
): RawConnection {
  const connection = new RawConnection(url, options.allowHalfOpen);
  const { host } = new URL(url);
  const headers: Record<string, string> = {
    host,
    'content-type': 'application/json',
    connection: 'keep-alive',
    ...(options.length === undefined
      ? { 'transfer-encoding': 'chunked' }
      : { 'content-length': String(options.length) }),
    ...(options.token ? bearer(options.token) : {}),
    ...options.headers,
  };
  const query = options.query ?? `repo=${options.repo}`;
  connection.write(
    `POST /api/v1/graphs?${query} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  );
  if (options.first !== undefined)
    connection.write(options.length === undefined ? chunk(options.first) : options.first);
  return connection;
}

/** One chunk of a chunked body. */
const chunk = (data: string | Buffer) => {
  const bytes = Buffer.from(data);
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
};

/** A request that must answer `status` within PROMPT_MS (aborted otherwise). */
async function prompt(url: string, path: string, headers: Record<string, string>, status = 200): Promise<void> {
  const started = Date.now();
  let got: number;
  try {
    const response = await fetch(new URL(path, url), { headers, signal: AbortSignal.timeout(PROMPT_MS) });
    await response.text();
    got = response.status;
  } catch (error) {
    assert.fail(`GET ${path} did not answer within ${PROMPT_MS} ms while uploads stall (${(error as Error).name})`);
  }
  assert.equal(got, status, `GET ${path} answered ${got} after ${Date.now() - started} ms while uploads stall`);
}

/** Graph uploads receiving their body, from /metrics. */
async function receiving(url: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url), { headers: bearer(ADMIN_TOKEN) })).text();
  const m = /^devstream_graph_uploads\{phase="receiving"\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : -1;
}

const upload = (url: string, token: string, repo: string, body: string) =>
  rest(url, 'POST', `/api/v1/graphs?repo=${repo}`, body, { 'content-type': 'application/json', ...bearer(token) });

const storedRepos = async (url: string) =>
  ((await rest(url, 'GET', '/api/v1/graphs', undefined, bearer(ADMIN_TOKEN))).body.graphs as Array<{ repo: string }>)
    .map((g) => g.repo)
    .sort();

for (const backend of backends) {
  describe(`graph uploads that stall (${backend.name}; issue 19: defects 4 and 5)`, () => {
    let database: TestDb;
    const tokens: Record<string, string> = {};
    const servers: TestServer[] = [];
    /** The service on the shared database, AUTH=required. */
    const serve = async (overrides: Parameters<typeof startServer>[1] = {}) => {
      const server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN }, ...overrides });
      servers.push(server);
      return server;
    };

    before(async () => {
      database = await backend.open();
      const server = await serve();
      for (const [name, scopes] of [
        ['reader', ['read']],
        ['writer-1', ['read', 'write']],
        ['writer-2', ['read', 'write']],
        ['writer-3', ['read', 'write']],
        ['writer-4', ['read', 'write']],
      ] as const) {
        tokens[name] = await createKey(server.url, ADMIN_TOKEN, name, scopes);
      }
    });
    after(async () => {
      for (const server of servers) await server.close();
      await database?.dispose();
    });

    test('stalled uploads, more than the pool and the caps, from one key and from several: every other request keeps answering; over the caps 429', async () => {
      // A long window: the stalls last the whole test (the rate rule is the next test's).
      const server = await serve({
        graphUploads: { ...testConfig().graphUploads, max: 4, perKey: 2, rateWindowMs: 120_000 },
      });
      const stalled: RawConnection[] = [];
      try {
        const stall = (token: string, repo: string) => {
          // Headers and 27 bytes of a body announced as 100,000.
          const c = startUpload(server.url, { token, repo, length: 100_000, first: '{"commitHash":"c0ffee0001",' });
          stalled.push(c);
          return c;
        };
        const others = async () => {
          await prompt(server.url, '/healthz', {});
          await prompt(server.url, '/api/v1/tasks', bearer(tokens.reader!));
          await prompt(server.url, '/api/v1/me', bearer(tokens['writer-1']!)); // a key check
        };

        // 14 at once from four keys, more than the pool's 10 connections: four are let in, the rest are
        // refused, and every other request goes on being answered.
        const crowd = [
          ...Array.from({ length: 3 }, (_, i) => stall(tokens['writer-1']!, `crowd-a${i}`)),
          ...Array.from({ length: 2 }, (_, i) => stall(tokens['writer-2']!, `crowd-b${i}`)),
          ...Array.from({ length: 4 }, (_, i) => stall(tokens['writer-3']!, `crowd-c${i}`)),
          ...Array.from({ length: 5 }, (_, i) => stall(tokens['writer-4']!, `crowd-d${i}`)),
        ];
        await sleep(300); // they have all arrived
        for (let round = 0; round < 3; round++) await others();
        await eventually(async () => (crowd.filter((c) => c.answered).length >= 10 ? true : undefined), ANSWER_MS);
        assert.equal(await receiving(server.url), 4, 'GRAPH_UPLOADS_MAX of them wait for their bodies');
        const refused = (await Promise.all(crowd.filter((c) => c.answered).map((c) => c.answer()))).filter(
          (a) => a !== null,
        );
        assert.equal(refused.length, 10, 'the others are answered');
        for (const answer of refused) {
          assert.equal(answer.status, 429, JSON.stringify(answer.body));
          assert.match(answer.body.error.message, /GRAPH_UPLOADS_MAX|GRAPH_UPLOADS_PER_KEY/);
        }
        for (const c of crowd) c.destroy();
        await eventually(async () => ((await receiving(server.url)) === 0 ? true : undefined));

        // One key, three at once: one of them is over the key's share.
        const mine = [
          stall(tokens['writer-1']!, 'stall-a1'),
          stall(tokens['writer-1']!, 'stall-a2'),
          stall(tokens['writer-1']!, 'stall-a3'),
        ];
        const first = await Promise.race(mine.map((c) => c.answer()));
        assert.ok(first, 'one of the three uploads of one key is answered');
        assert.equal(first.status, 429, JSON.stringify(first.body));
        assert.equal(first.body.error.code, 'RATE_LIMITED');
        assert.match(
          first.body.error.message,
          /key "writer-1" already has 2 graph uploads in flight.*GRAPH_UPLOADS_PER_KEY/,
        );
        assert.equal(first.headers['retry-after'], '5');
        assert.equal(first.headers.connection, 'close', 'the unread body is not left on a kept-alive connection');
        await eventually(async () => ((await receiving(server.url)) === 2 ? true : undefined));
        await others();

        // Another key takes the other two places.
        stall(tokens['writer-2']!, 'stall-b1');
        stall(tokens['writer-2']!, 'stall-b2');
        await eventually(async () => ((await receiving(server.url)) === 4 ? true : undefined));
        await others();

        // Beyond GRAPH_UPLOADS_MAX, from keys with none in flight: 429 for each; 14 stalled in all, more than the pool's 10.
        const over = [
          ...Array.from({ length: 4 }, (_, i) => stall(tokens['writer-3']!, `stall-c${i}`)),
          ...Array.from({ length: 5 }, (_, i) => stall(tokens['writer-4']!, `stall-d${i}`)),
        ];
        for (const c of over) {
          const answer = await c.answer();
          assert.ok(answer, 'an upload over GRAPH_UPLOADS_MAX is answered');
          assert.equal(answer.status, 429, JSON.stringify(answer.body));
          assert.match(answer.body.error.message, /4 graph uploads are in flight.*GRAPH_UPLOADS_MAX/);
          assert.equal(answer.headers['retry-after'], '5');
          assert.equal(answer.headers.connection, 'close');
        }
        assert.equal(stalled.length, 28);
        const whole = await upload(server.url, tokens['writer-3']!, 'whole', commitFile('c0ffee0002'));
        assert.equal(whole.status, 429, 'a whole upload waits for a place too');
        for (let round = 0; round < 3; round++) await others();
        assert.equal(await receiving(server.url), 4, 'the four in flight are still waiting for their bodies');
        assert.equal(stalled.filter((c) => c.answered).length, 20);
      } finally {
        for (const c of stalled) c.destroy();
      }
      // Their places are given back once the clients hang up; nothing of theirs was stored.
      await eventually(async () => ((await receiving(server.url)) === 0 ? true : undefined));
      const whole = await upload(server.url, tokens['writer-1']!, 'whole', commitFile('c0ffee0003'));
      assert.equal(whole.status, 201, JSON.stringify(whole.body));
      assert.deepEqual(await storedRepos(server.url), ['whole']);
    });

    test('a body slower than GRAPH_UPLOAD_MIN_RATE (headers and nothing, a few bytes, a trickle) is cut with 408 naming (body); nothing stored; the place is freed', async () => {
      const server = await serve({ graphUploads: { max: 4, perKey: 2, minRate: 1024, rateWindowMs: 1_000 } });
      const nothing = startUpload(server.url, { token: tokens['writer-1']!, repo: 'slow-nothing', length: 5_000 });
      const few = startUpload(server.url, {
        token: tokens['writer-1']!,
        repo: 'slow-few',
        length: 5_000,
        first: '{"commitHash":"c0ffee0004",',
      });
      // ~330 bytes a second, in chunks: under 1 KiB/s.
      const trickle = startUpload(server.url, { token: tokens['writer-2']!, repo: 'slow-trickle' });
      const body = commitFile('c0ffee0005');
      let sent = 0;
      const timer = setInterval(() => {
        if (sent >= body.length) return;
        trickle.write(chunk(body.slice(sent, sent + 100)));
        sent += 100;
      }, 300);
      try {
        for (const c of [nothing, few, trickle]) {
          const answer = await c.answer();
          assert.ok(answer, 'a stalled upload is answered, not left to REQUEST_TIMEOUT_S');
          assert.equal(answer.status, 408, JSON.stringify(answer.body));
          assert.equal(answer.body.error.code, 'VALIDATION_ERROR');
          assert.equal(answer.body.error.details.issues[0].field, '(body)');
          assert.match(
            answer.body.error.message,
            /^\(body\): the body arrived too slowly: \d+ bytes in 1 s, under the 1 KiB\/s an upload must keep up \(GRAPH_UPLOAD_MIN_RATE\)/,
          );
          assert.equal(answer.headers.connection, 'close');
          await c.ended; // and the connection is closed
        }
      } finally {
        clearInterval(timer);
        for (const c of [nothing, few, trickle]) c.destroy();
      }
      assert.ok(sent < body.length, 'the trickle was cut before its body ended');
      // A body sent at once is not held to the rule; the key's places were given back.
      const whole = await upload(server.url, tokens['writer-1']!, 'fast', commitFile('c0ffee0006'));
      assert.equal(whole.status, 201, JSON.stringify(whole.body));
      const repos = await storedRepos(server.url);
      assert.ok(repos.includes('fast'));
      assert.deepEqual(
        repos.filter((r) => r.startsWith('slow-')),
        [],
        'nothing stored from the cut uploads',
      );
    });

    test('an upload refused before its body has arrived leaves no dead keep-alive connection: the next request is answered, or the connection was closed with Connection: close', async () => {
      const server = await serve({
        graphs: { ...testConfig().graphs, uploadLimit: 64 * 1024 },
        graphUploads: { ...testConfig().graphUploads, perKey: 1 },
      });
      const writer = tokens['writer-3']!;
      const held: RawConnection[] = [];
      // Under the limit when declared; the chunked one goes over it as it arrives.
      const big = Buffer.from(commitFile('c0ffee0007').padEnd(60_000, ' '));
      const huge = Buffer.from(commitFile('c0ffee0009').padEnd(200_000, ' '));
      const gz = gzipSync(commitFile('c0ffee0008'));
      const cases: Array<{
        label: string;
        status: number;
        start: () => RawConnection | Promise<RawConnection>;
        rest: Buffer;
      }> = [
        {
          label: 'gzip without Content-Encoding (400, mid-body)',
          status: 400,
          start: () =>
            startUpload(server.url, {
              token: tokens['writer-1']!,
              repo: 'ka-gzip',
              length: gz.length + 50_000,
              first: gz,
            }),
          rest: Buffer.alloc(50_000, 0x20),
        },
        {
          label: 'over GRAPH_UPLOAD_LIMIT as it arrives (413, chunked)',
          status: 413,
          start: () =>
            startUpload(server.url, { token: tokens['writer-1']!, repo: 'ka-big', first: huge.subarray(0, 100_000) }),
          rest: Buffer.concat([chunk(huge.subarray(100_000)), Buffer.from('0\r\n\r\n')]),
        },
        {
          label: 'a bad query string (400)',
          status: 400,
          start: () =>
            startUpload(server.url, {
              token: tokens['writer-1']!,
              repo: '',
              query: 'repo=',
              length: big.length,
              first: big.subarray(0, 1000),
            }),
          rest: big.subarray(1000),
        },
        {
          label: 'an unknown key (401)',
          status: 401,
          start: () =>
            startUpload(server.url, {
              token: 'dsh_not-a-key',
              repo: 'ka-401',
              length: big.length,
              first: big.subarray(0, 1000),
            }),
          rest: big.subarray(1000),
        },
        {
          label: 'a read-only key (403)',
          status: 403,
          start: () =>
            startUpload(server.url, {
              token: tokens.reader!,
              repo: 'ka-403',
              length: big.length,
              first: big.subarray(0, 1000),
            }),
          rest: big.subarray(1000),
        },
        {
          label: 'over the key’s uploads in flight (429)',
          status: 429,
          async start() {
            // Another upload of the key holds its one place.
            held.push(startUpload(server.url, { token: writer, repo: 'held', length: 50_000, first: '{' }));
            await eventually(async () => ((await receiving(server.url)) === 1 ? true : undefined));
            return startUpload(server.url, {
              token: writer,
              repo: 'ka-429',
              length: big.length,
              first: big.subarray(0, 1000),
            });
          },
          rest: big.subarray(1000),
        },
      ];
      const { host } = new URL(server.url);
      try {
        for (const { label, status, start, rest: remainder } of cases) {
          const c = await start();
          try {
            const first = await c.answer();
            assert.ok(first, `${label}: answered`);
            assert.equal(first.status, status, `${label}: ${JSON.stringify(first.body)}`);
            // A client (a proxy) sends the rest of the body anyway, then its next request.
            c.write(remainder);
            c.write(`GET /healthz HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
            const second = await c.answer(1, 5_000);
            if (second) {
              assert.equal(second.status, 200, `${label}: the next request on the connection`);
            } else {
              assert.ok(
                c.closed,
                `${label}: the next request on the connection got no answer, and the connection is still open`,
              );
              assert.equal(
                first.headers.connection,
                'close',
                `${label}: the connection was closed without Connection: close`,
              );
            }
          } finally {
            c.destroy();
          }
        }
      } finally {
        for (const c of held) c.destroy();
      }
      assert.deepEqual(
        (await storedRepos(server.url)).filter((r) => r.startsWith('ka-') || r === 'held'),
        [],
      );
    });

    test('a client still sending its body when it is refused may finish sending: the connection is closed after the body, not reset under it', async () => {
      const server = servers[0]!;
      const body = Buffer.from(commitFile('c0ffee0010').padEnd(60_000, ' '));
      const c = startUpload(server.url, {
        token: 'dsh_not-a-key',
        repo: 'linger',
        length: body.length,
        first: body.subarray(0, 1000),
        allowHalfOpen: true,
      });
      try {
        const answer = await c.answer();
        assert.ok(answer);
        assert.equal(answer.status, 401);
        assert.equal(answer.headers.connection, 'close');
        // The rest comes after the answer, in pieces, as a streaming client sends it.
        for (let at = 1000; at < body.length; at += 20_000) {
          await sleep(100);
          c.write(body.subarray(at, at + 20_000));
        }
        c.socket.end();
        await c.ended;
        assert.deepEqual(
          c.errors.map((e) => (e as NodeJS.ErrnoException).code ?? e.message),
          [],
          'no EPIPE or reset while the body was still being sent',
        );
      } finally {
        c.destroy();
      }
    });

    test('a client that hangs up at any moment of its upload, even before the body is staged, costs nothing: the service answers and stores nothing', async () => {
      const server = await serve({ graphUploads: { ...testConfig().graphUploads, max: 200, perKey: 200 } });
      const writer = tokens['writer-4']!;
      // Hang-ups spread over the first milliseconds: before, while and after the staging file opens.
      const uploads = Array.from({ length: 120 }, async (_, i) => {
        const c = startUpload(server.url, { token: writer, repo: `gone-${i}`, length: 50_000, first: '{"nodes": [' });
        await sleep(i % 12);
        c.destroy();
        await c.ended;
      });
      await Promise.all(uploads);
      await prompt(server.url, '/healthz', {});
      await eventually(async () => ((await receiving(server.url)) === 0 ? true : undefined));
      assert.deepEqual(
        (await storedRepos(server.url)).filter((r) => r.startsWith('gone-')),
        [],
      );
    });
  });
}
