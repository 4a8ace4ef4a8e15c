import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_LISTED_ISSUES } from '../src/errors.js';
import { MAX_BODY_DEPTH, MAX_BODY_VALUES } from '../src/http/json-body.js';
import { backends, type TestDb, once } from './helpers/backends.js';
import { MCP_HEADERS, rest, startServer, type TestServer } from './helpers/server.js';
import { serve } from './helpers/service.js';
import { tempDirs } from './helpers/temp-dirs.js';

// Issue 19, defect 9: a body cannot buy much more work, or a much bigger answer, than it costs to
// send. 2 MB of nested arrays cost 0.4–0.6 s of CPU each (four clients pushed /healthz to 1.4 s),
// and 1.7 MB of unknown fields answered a 10 MB error.

/** Bodies of about `bytes` that hold far more JSON values than any input needs, or nest far deeper. */
const shapes = (size: number): Record<string, string> => {
  const bytes = Math.floor(size / 12) * 12;
  return {
    'nested arrays': `{"content":"x","content_type":"context","keywords":${'['.repeat(bytes / 2)}${']'.repeat(bytes / 2)}}`,
    'nested objects': `{"content":"x","content_type":"context","keywords":${'{"a":'.repeat(bytes / 6)}1${'}'.repeat(bytes / 6)}}`,
    'wide arrays': `{"content":"x","content_type":"context","keywords":[${Array(bytes / 3)
      .fill('[]')
      .join(',')}]}`,
    numbers: `{"content":"x","content_type":"context","keywords":[${Array(bytes / 2)
      .fill('1')
      .join(',')}]}`,
    'unknown fields': `{"content":"x","content_type":"context",${Array.from({ length: bytes / 12 }, (_, i) => `"k${i}":1`).join(',')}}`,
  };
};

describe('amplification: bounded work and bounded answers for any body (issue 19)', once, () => {
  let database: TestDb;
  let server: TestServer;
  const tempDir = tempDirs('amplification');
  before(async () => {
    database = await backends[0]!.open();
    server = await startServer(database);
  });
  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  for (const [shape, body] of Object.entries(shapes(1_800_000))) {
    test(`~1.8 MB of ${shape}: a small 400 naming where, over REST and MCP; nothing stored`, async () => {
      const r = await rest(server.url, 'POST', '/api/v1/memories', body);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      const [issue] = r.body.error.details.issues;
      if (shape.startsWith('nested')) {
        assert.match(issue.field, /^keywords\.(0|a)\./);
        assert.match(issue.message, new RegExp(`nested more than ${MAX_BODY_DEPTH} levels deep`));
      } else {
        assert.equal(issue.field, '(body)');
        assert.match(issue.message, new RegExp(`holds more than ${MAX_BODY_VALUES} values`));
      }
      assert.ok(JSON.stringify(r.body).length < 2_000, 'the answer is small');

      const rpc = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"devstream_store_memory","arguments":${body}}}`;
      const m = await fetch(`${server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: rpc });
      assert.equal(m.status, 400);
      const answer = await m.text();
      assert.ok(answer.length < 2_000);
      assert.match(JSON.parse(answer).error.message, /VALIDATION_ERROR|nested more than|holds more than/);

      const stored = await rest(server.url, 'POST', '/api/v1/memories/search', { query: 'x' });
      assert.equal(stored.body.total, 0);
    });
  }

  test('an error lists at most MAX_LISTED_ISSUES problems and counts the rest', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: MAX_LISTED_ISSUES + 1, max: 4_000 }), async (n) => {
        const fields = Object.fromEntries(Array.from({ length: n }, (_, i) => [`unknown_${i}`, i]));
        const r = await rest(server.url, 'POST', '/api/v1/memories', {
          content: 'x',
          content_type: 'context',
          ...fields,
        });
        assert.equal(r.status, 400);
        assert.equal(r.body.error.details.issues.length, MAX_LISTED_ISSUES);
        assert.equal(r.body.error.details.more, n - MAX_LISTED_ISSUES);
        assert.match(r.body.error.message, new RegExp(`; and ${n - MAX_LISTED_ISSUES} more problem\\(s\\)$`));
        assert.ok(JSON.stringify(r.body).length < 4_000, `${n} unknown fields: a small answer`);
      }),
      { numRuns: 8 },
    );
    // A long unknown key is named, cut.
    const long = await rest(server.url, 'POST', '/api/v1/memories', {
      content: 'x',
      content_type: 'context',
      ['k'.repeat(100_000)]: 1,
    });
    assert.equal(long.status, 400);
    assert.ok(JSON.stringify(long.body).length < 1_000);
    assert.match(long.body.error.details.issues[0].field, /^k{100}…$/);
  });

  test('bodies just within the bounds still reach validation and name their field', async () => {
    const deepOk = `{"content":"x","content_type":"context","keywords":${'['.repeat(MAX_BODY_DEPTH - 1)}${']'.repeat(MAX_BODY_DEPTH - 1)}}`;
    const r = await rest(server.url, 'POST', '/api/v1/memories', deepOk);
    assert.equal(r.status, 400);
    assert.equal(r.body.error.details.issues[0].field, 'keywords.0');
    // A big memory is one long string: 1,000,000 characters are one value.
    const big = await rest(server.url, 'POST', '/api/v1/memories', {
      content: 'word '.repeat(199_999),
      content_type: 'context',
    });
    assert.equal(big.status, 201, JSON.stringify(big.body).slice(0, 300));
  });

  test('/healthz answers within a second while four clients send 2 MB bodies of nested arrays (the service in its own process)', async () => {
    const dataDir = await tempDir();
    const service = await serve({ DATA_DIR: dataDir });
    const body = shapes(2_000_000)['nested arrays']!;
    let stop = false;
    const senders = Array.from({ length: 4 }, async () => {
      let sent = 0;
      while (!stop) {
        const r = await fetch(`${service.url}/api/v1/memories`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        assert.equal(r.status, 400);
        await r.arrayBuffer();
        sent += 1;
      }
      return sent;
    });
    const took: number[] = [];
    try {
      await new Promise((r) => setTimeout(r, 200)); // the senders are under way
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
        took.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      stop = true;
      const sent = (await Promise.all(senders)).reduce((a, b) => a + b, 0);
      await service.stop();
      assert.ok(sent >= 4, 'the bodies were sent meanwhile');
    }
    const sorted = [...took].sort((a, b) => a - b);
    assert.ok(
      sorted[sorted.length - 1]! < 1_000,
      `/healthz took ${Math.round(sorted[10]!)} ms (median), up to ${Math.round(sorted[sorted.length - 1]!)} ms`,
    );
  });
});
