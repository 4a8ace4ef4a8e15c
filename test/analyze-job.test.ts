import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';

/** A folder tree: `root` (ANALYZE_ROOTS) holding a small TypeScript project, and a folder beside it. */
async function fixture() {
  const base = await mkdtemp(join(tmpdir(), 'dsh-analyze-job-'));
  const root = join(base, 'checkouts');
  const shop = join(root, 'shop');
  const outside = join(base, 'private');
  await mkdir(join(shop, 'src'), { recursive: true });
  await mkdir(join(root, 'empty'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(
    join(shop, 'src', 'prices.ts'),
    [
      '/** Applies the seasonal discount to a basket total, never below zero. */',
      'export function discountTotal(total: number, rate: number): number {',
      '  return Math.max(0, total - total * rate);',
      '}',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(shop, 'src', 'checkout.ts'),
    [
      "import { discountTotal } from './prices.js';",
      '',
      'export function checkout(total: number) {',
      '  return discountTotal(total, 0.1);',
      '}',
      '',
    ].join('\n'),
  );
  await writeFile(join(outside, 'secret.ts'), 'export const key = 1;\n');
  await symlink(outside, join(root, 'escape'));
  return { base, root, shop, outside };
}

for (const backend of backends) {
  describe(`analysis on the server (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let dirs: Awaited<ReturnType<typeof fixture>>;
    const tool = (args: Record<string, unknown>) => rest(server.url, 'POST', '/api/v1/tools/repo', args);

    before(async () => {
      database = await backend.open();
      dirs = await fixture();
      server = await startServer(database, {
        graphs: { retention: 5, uploadLimit: 64 * 1024 * 1024, analyzeRoots: [dirs.root] },
      });
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
      if (dirs) await rm(dirs.base, { recursive: true, force: true });
    });

    test('repo analyze queues a job that builds and stores the graph; tools answer from it', async () => {
      const { client } = await connectMcp(server.url);
      try {
        const queued = await client.callTool({
          name: 'repo',
          arguments: { action: 'analyze', path: dirs.shop, branch: 'main' },
        });
        assert.equal(queued.isError, undefined, JSON.stringify(queued.content));
        const job = (queued.structuredContent as any).job;
        assert.match(job.jobId, /^[0-9a-f]{12}$/);
        assert.equal(job.kind, 'analyze');
        assert.equal(job.params.repo, 'shop', 'the repo name defaults to the folder name');
        assert.match((queued.content as any)[0].text, new RegExp(`job ${job.jobId}`));

        const done = await eventually(async () => {
          const r = await rest(server.url, 'GET', `/api/v1/jobs/${job.jobId}`);
          assert.equal(r.status, 200);
          return r.body.job.status === 'succeeded' || r.body.job.status === 'failed' ? r.body.job : undefined;
        }, 60_000);
        assert.equal(done.status, 'succeeded', done.error);
        assert.equal(done.result.repo, 'shop');
        assert.ok(done.result.nodes >= 4, 'two files and two functions');
        assert.ok(done.startedAt && done.finishedAt);
        assert.equal(done.progress.phase, 'storing');

        const viaTool = await client.callTool({ name: 'devstream_get_job', arguments: { jobId: job.jobId } });
        assert.match((viaTool.content as any)[0].text, /SUCCEEDED/);

        // The doc comment is searchable: the question shares no word with the function's name.
        const found = await client.callTool({
          name: 'find_symbols',
          arguments: { query: 'seasonal discount on a basket', repo: 'shop' },
        });
        const hits = (found.structuredContent as any).symbols;
        assert.equal(hits[0]?.nodeId, 'src/prices.ts::discountTotal', JSON.stringify(hits));
        const node = await client.callTool({
          name: 'get_node',
          arguments: { node: 'src/prices.ts::discountTotal', repo: 'shop', include: ['callers'] },
        });
        assert.deepEqual(
          (node.structuredContent as any).callers.map((c: any) => c.nodeId),
          ['src/checkout.ts::checkout'],
        );
      } finally {
        await client.close();
      }
    });

    test('only folders inside ANALYZE_ROOTS: relative, outside, traversal and symlink escapes are refused, nothing queued', async () => {
      const before = await database.db.kysely.selectFrom('jobs').select('id').execute();
      const cases: Array<[string, number, RegExp]> = [
        ['src/shop', 400, /path: must be an absolute path/],
        [dirs.outside, 403, /outside the folders this server may analyze/],
        [join(dirs.root, '..', 'private'), 403, /outside the folders/],
        [join(dirs.root, 'escape'), 403, /outside the folders/],
        [join(dirs.root, 'missing'), 400, /path: .* is not a folder/],
        [join(dirs.shop, 'src', 'prices.ts'), 400, /is not a folder/],
        ['/etc', 403, /outside the folders/],
      ];
      for (const [path, status, message] of cases) {
        const r = await tool({ action: 'analyze', path });
        assert.equal(r.status, status, `${path}: ${JSON.stringify(r.body)}`);
        assert.match(r.body.error.message, message, path);
      }
      const afterRows = await database.db.kysely.selectFrom('jobs').select('id').execute();
      assert.equal(afterRows.length, before.length, 'refused requests queue nothing');
    });

    test('a folder with nothing to analyze fails its job with the reason', async () => {
      const r = await tool({ action: 'analyze', path: join(dirs.root, 'empty') });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const failed = await eventually(async () => {
        const j = (await rest(server.url, 'GET', `/api/v1/jobs/${r.body.job.jobId}`)).body.job;
        return j.status === 'failed' || j.status === 'succeeded' ? j : undefined;
      }, 60_000);
      assert.equal(failed.status, 'failed');
      assert.ok(failed.error.length > 0);
      assert.equal(failed.result, null);
    });

    test('without a path, analyze explains how to build and upload a graph; unknown and bad job ids', async () => {
      const help = await tool({ action: 'analyze' });
      assert.equal(help.status, 200);
      assert.match(help.body.message, /devstream-hub analyze \. --upload/);
      const missing = await rest(server.url, 'GET', '/api/v1/jobs/0123456789ab');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.code, 'NOT_FOUND');
      const bad = await rest(server.url, 'GET', '/api/v1/jobs/..%2f..%2fetc');
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /jobId/);
    });

    test('a server without ANALYZE_ROOTS analyzes nothing', async () => {
      const closed = await startServer(database);
      try {
        const r = await rest(closed.url, 'POST', '/api/v1/tools/repo', { action: 'analyze', path: dirs.shop });
        assert.equal(r.status, 403);
        assert.equal(r.body.error.code, 'FORBIDDEN');
        assert.match(r.body.error.message, /ANALYZE_ROOTS is unset/);
      } finally {
        await closed.close();
      }
    });
  });
}
