/**
 * Issue 25 item 3: `repo {action: "analyze", path, summarize: true}` writes the symbols' summaries
 * inside the server's analysis job, with the server's chat model (OLLAMA_SUMMARY_MODEL at
 * OLLAMA_HOST: here a fake Ollama on loopback, through the real `ollama` client), its progress in
 * `devstream_get_job`; a re-run reuses the stored commit's summaries of unchanged code; a failing
 * model leaves the doc comments; bad or unservable `summarize` is refused naming the field.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { FakeOllama } from '../support/fake-ollama.js';
import { testConfig } from '../support/test-config.js';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';

const MODEL = 'fake-coder';
/** A TypeScript and Go project: its symbols are what the model is asked about (files are not). */
const FILES: Record<string, string> = {
  'go.mod': 'module example.com/shop\n\ngo 1.22\n',
  'tax/tax.go': [
    'package tax',
    '',
    '// Rate is the sales tax for a region, as a fraction.',
    'func Rate(region string) float64 {',
    '\tif region == "eu" {',
    '\t\treturn 0.2',
    '\t}',
    '\treturn 0.1',
    '}',
    '',
  ].join('\n'),
  'src/prices.ts': [
    '/** Applies the seasonal discount to a basket total, never below zero. */',
    'export function discountTotal(total: number, rate: number): number {',
    '  return Math.max(0, total - total * rate);',
    '}',
    '',
  ].join('\n'),
  'src/checkout.ts': [
    "import { discountTotal } from './prices.js';",
    '',
    'export function checkout(total: number) {',
    '  return discountTotal(total, 0.1);',
    '}',
    '',
  ].join('\n'),
};
const SYMBOLS = ['src/checkout.ts::checkout', 'src/prices.ts::discountTotal', 'tax/tax.go::Rate'];

async function writeProject(folder: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(folder, path, '..'), { recursive: true });
    await writeFile(join(folder, path), text);
  }
}

/** The job once it has finished (either way). */
async function finished(url: string, jobId: string): Promise<any> {
  return eventually(async () => {
    const r = await rest(url, 'GET', `/api/v1/jobs/${jobId}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.job.status === 'succeeded' || r.body.job.status === 'failed' ? r.body.job : undefined;
  }, 60_000);
}

for (const backend of backends) {
  describe(`analysis on the server with summarize (${backend.name})`, () => {
    const model = new FakeOllama();
    let database: TestDb;
    let server: TestServer;
    let base: string;
    let root: string;
    let client: Client;
    const repoTool = (args: Record<string, unknown>) => rest(server.url, 'POST', '/api/v1/tools/repo', args);
    /** Queues an analysis over MCP; the job's id. */
    const analyze = async (args: Record<string, unknown>): Promise<string> => {
      const queued = await client.callTool({ name: 'repo', arguments: { action: 'analyze', ...args } });
      assert.equal(queued.isError, undefined, JSON.stringify(queued.content));
      return (queued.structuredContent as any).job.jobId;
    };
    const node = async (id: string, repo: string) => {
      const got = await client.callTool({ name: 'get_node', arguments: { node: id, repo } });
      assert.equal(got.isError, undefined, JSON.stringify(got.content));
      return (got.structuredContent as any).node;
    };

    before(async () => {
      await model.start();
      database = await backend.open();
      base = await mkdtemp(join(tmpdir(), 'dsh-analyze-summarize-'));
      root = join(base, 'checkouts');
      await writeProject(join(root, 'shop'), FILES);
      server = await startServer(database, {
        graphs: { retention: 5, uploadLimit: 64 * 1024 * 1024, analyzeRoots: [root] },
        // A long timeout per node: the first test holds the model's answers until it has seen the progress.
        summaries: { model: MODEL, ollamaHost: model.url, concurrency: 2, timeoutMs: 120_000 },
      });
      ({ client } = await connectMcp(server.url));
    });
    after(async () => {
      await client?.close();
      await server?.close();
      await database?.dispose();
      await model.stop();
      if (base) await rm(base, { recursive: true, force: true });
    });

    test('summarize: true writes every symbol summaries in the job; devstream_get_job shows the summarizing phase', async () => {
      let release!: () => void;
      model.chatGate = new Promise<void>((resolve) => (release = resolve));
      model.chatCalls.length = 0;
      let jobId: string;
      try {
        const queued = await client.callTool({
          name: 'repo',
          arguments: { action: 'analyze', path: join(root, 'shop'), summarize: true },
        });
        assert.equal(queued.isError, undefined, JSON.stringify(queued.content));
        const job = (queued.structuredContent as any).job;
        jobId = job.jobId;
        assert.equal(job.params.summarize, true);
        assert.match((queued.content as any)[0].text, new RegExp(`with summaries by ${MODEL}`));

        // While the model holds its answers, the job says it is summarizing, and how far it is.
        const running = await eventually(async () => {
          const got = await client.callTool({ name: 'devstream_get_job', arguments: { jobId } });
          const j = (got.structuredContent as any).job;
          return j.progress?.phase === 'summarizing' ? { j, text: (got.content as any)[0].text as string } : undefined;
        }, 60_000);
        assert.equal(running.j.status, 'running');
        assert.equal(running.j.progress.model, MODEL);
        assert.equal(running.j.progress.total, SYMBOLS.length);
        assert.ok(running.j.progress.done < SYMBOLS.length, JSON.stringify(running.j.progress));
        assert.match(running.text, /Progress: .*"phase":"summarizing"/);
      } finally {
        release();
        model.chatGate = null;
      }

      const done = await finished(server.url, jobId);
      assert.equal(done.status, 'succeeded', done.error);
      assert.deepEqual(done.result.summaries, {
        model: MODEL,
        total: SYMBOLS.length,
        asked: SYMBOLS.length,
        answered: SYMBOLS.length,
        reused: 0,
        failed: 0,
      });
      assert.deepEqual(
        model.chatCalls.map((c) => c.model).sort(),
        SYMBOLS.map(() => MODEL),
      );
      for (const id of SYMBOLS) {
        const got = await node(id, 'shop');
        assert.equal(got.businessSummary, `${got.name} matters to users (fake model).`, id);
        assert.equal(got.technicalSummary, `${got.name} does its work (fake model).`, id);
        assert.equal(got.security.severity, 'none', id);
        assert.equal(got.metadata.summarySource, 'llm', id);
        assert.equal(got.metadata.summaryModel, MODEL, id);
      }
      // The model saw the Go doc comment with the code.
      assert.match(model.chatCalls.find((c) => c.prompt.includes('`Rate`'))!.prompt, /Rate is the sales tax/);
    });

    test('a re-run reuses the stored summaries of unchanged code: the same folder asks nothing, a changed function once', async () => {
      model.chatCalls.length = 0;
      const again = await finished(server.url, await analyze({ path: join(root, 'shop'), summarize: true }));
      assert.equal(again.status, 'succeeded', again.error);
      assert.deepEqual(
        [again.result.summaries.asked, again.result.summaries.reused, again.result.summaries.failed],
        [0, SYMBOLS.length, 0],
      );
      assert.equal(model.chatCalls.length, 0, 'the model was asked nothing');

      await writeFile(join(root, 'shop', 'src', 'checkout.ts'), FILES['src/checkout.ts']!.replace('0.1', '0.15'));
      const changed = await finished(server.url, await analyze({ path: join(root, 'shop'), summarize: true }));
      assert.equal(changed.status, 'succeeded', changed.error);
      assert.deepEqual([changed.result.summaries.asked, changed.result.summaries.reused], [1, SYMBOLS.length - 1]);
      assert.equal(model.chatCalls.length, 1);
      assert.match(model.chatCalls[0]!.prompt, /`checkout`/);
      assert.equal((await node('tax/tax.go::Rate', 'shop')).metadata.summarySource, 'llm');
    });

    test('without summarize the job asks the model nothing and its result has no summaries', async () => {
      await writeProject(join(root, 'plain'), FILES);
      model.chatCalls.length = 0;
      const done = await finished(server.url, await analyze({ path: join(root, 'plain') }));
      assert.equal(done.status, 'succeeded', done.error);
      assert.equal(done.result.summaries, undefined);
      assert.equal(model.chatCalls.length, 0);
      const prices = await node('src/prices.ts::discountTotal', 'plain');
      assert.equal(prices.metadata.summarySource, 'doc-comment');
    });

    test('a model that fails every request: the job still succeeds, the nodes keep their doc comments, the result counts the failures', async () => {
      await writeProject(join(root, 'billing'), FILES);
      model.chatFailWith = 503;
      try {
        const done = await finished(server.url, await analyze({ path: join(root, 'billing'), summarize: true }));
        assert.equal(done.status, 'succeeded', done.error);
        assert.deepEqual(
          [done.result.summaries.answered, done.result.summaries.failed, done.result.summaries.reused],
          [0, SYMBOLS.length, 0],
        );
        const prices = await node('src/prices.ts::discountTotal', 'billing');
        assert.equal(prices.technicalSummary, 'Applies the seasonal discount to a basket total, never below zero.');
        assert.equal(prices.metadata.summarySource, 'doc-comment');
        assert.equal(prices.businessSummary, null);
        assert.equal((await node('src/checkout.ts::checkout', 'billing')).technicalSummary, null);
      } finally {
        model.chatFailWith = null;
      }
    });

    test('summarize must be a boolean, and only with action "analyze" and a path: VALIDATION_ERROR naming it', async () => {
      const jobsBefore = await database.db.kysely.selectFrom('jobs').select('id').execute();
      for (const [args, message] of [
        [{ action: 'analyze', path: join(root, 'shop'), summarize: 'yes' }, /^summarize: must be true or false/],
        [{ action: 'analyze', path: join(root, 'shop'), summarize: 1 }, /^summarize: must be true or false/],
        [{ action: 'list', summarize: true }, /^summarize: only with action "analyze" and a path/],
        [{ action: 'analyze', summarize: true }, /^summarize: only with action "analyze" and a path/],
      ] as const) {
        const r = await repoTool(args);
        assert.equal(r.status, 400, JSON.stringify(r.body));
        assert.equal(r.body.error.code, 'VALIDATION_ERROR');
        assert.match(r.body.error.message, message, JSON.stringify(args));
        assert.equal(r.body.error.details.issues[0].field, 'summarize');
      }
      const viaMcp = await client.callTool({
        name: 'repo',
        arguments: { action: 'analyze', path: join(root, 'shop'), summarize: 'yes' },
      });
      assert.equal(viaMcp.isError, true);
      assert.match((viaMcp.content as any)[0].text, /VALIDATION_ERROR: summarize: must be true or false/);
      const jobsAfter = await database.db.kysely.selectFrom('jobs').select('id').execute();
      assert.equal(jobsAfter.length, jobsBefore.length, 'nothing queued');
    });

    test('a server without OLLAMA_SUMMARY_MODEL refuses summarize: true (403 naming it), queues nothing, and says what to do', async () => {
      // Its own server over the same database; no job is queued while it runs (its runner would take it).
      const bare = await startServer(database, {
        graphs: { retention: 5, uploadLimit: 64 * 1024 * 1024, analyzeRoots: [root] },
        summaries: testConfig().summaries,
      });
      try {
        const jobsBefore = await database.db.kysely.selectFrom('jobs').select('id').execute();
        const r = await rest(bare.url, 'POST', '/api/v1/tools/repo', {
          action: 'analyze',
          path: join(root, 'shop'),
          summarize: true,
        });
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.error.code, 'FORBIDDEN');
        assert.match(
          r.body.error.message,
          /^summarize: this server has no summary model \(OLLAMA_SUMMARY_MODEL is unset\)/,
        );
        assert.match(r.body.error.message, /analyze <folder> --summarize --upload/);
        const { client: bareClient } = await connectMcp(bare.url);
        try {
          const viaMcp = await bareClient.callTool({
            name: 'repo',
            arguments: { action: 'analyze', path: join(root, 'shop'), summarize: true },
          });
          assert.equal(viaMcp.isError, true);
          assert.match((viaMcp.content as any)[0].text, /FORBIDDEN: summarize: this server has no summary model/);
        } finally {
          await bareClient.close();
        }
        const jobsAfter = await database.db.kysely.selectFrom('jobs').select('id').execute();
        assert.equal(jobsAfter.length, jobsBefore.length, 'nothing queued');
      } finally {
        await bare.close();
      }
    });
  });
}
