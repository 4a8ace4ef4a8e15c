/**
 * Issue 25 item 2: `analyze --summarize` asks a chat model for each symbol's technical and business
 * summary and security note, through the real `ollama` client talking to a fake Ollama on loopback
 * (support/fake-ollama.ts's /api/chat); reuses a previous commit file's summaries for unchanged
 * code; falls back to the doc comment when the model fails, is slow or is down.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import { codeHashOf, knownSummaries, summarizeNodes } from '../src/analyzer/summarize.js';
import type { CommitFile, GraphNode } from '../src/commit-file.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { backends, type TestDb, once } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';
import { runCli } from './helpers/service.js';
import { tempDirs } from './helpers/temp-dirs.js';

const MODEL = 'fake-coder';
const FILES: Record<string, string> = {
  'src/retry.ts': [
    '/** Waits longer after each failed attempt. */',
    'export function backoff(attempt: number): number {',
    '  return 2 ** attempt * 100;',
    '}',
    '',
    'export class Retrier {',
    '  run(task: () => Promise<void>): Promise<void> {',
    '    return task().catch(() => new Promise((r) => setTimeout(r, backoff(1))));',
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/main.ts': [
    "import { Retrier } from './retry.js';",
    '',
    'export function start(): Promise<void> {',
    '  return new Retrier().run(async () => {});',
    '}',
    '',
  ].join('\n'),
};
/** The symbols of FILES: what is summarized (files are not). */
const SYMBOLS = ['src/main.ts::start', 'src/retry.ts::Retrier', 'src/retry.ts::Retrier.run', 'src/retry.ts::backoff'];

const tempDir = tempDirs('summarize');

async function repository(files: Record<string, string> = FILES): Promise<string> {
  const root = await tempDir();
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const byId = (nodes: GraphNode[]) => new Map(nodes.map((n) => [n.id, n as GraphNode & Record<string, any>]));

describe('analyze --summarize', once, () => {
  const model = new FakeOllama();
  let root: string;
  let commit: CommitFile;
  before(async () => {
    await model.start();
    root = await repository();
    commit = await analyzeRepository(root);
  });
  after(() => model.stop());

  test('every symbol gets technical, business and security summaries from the model, marked llm with the model', async () => {
    model.chatCalls.length = 0;
    const result = await summarizeNodes(commit.nodes, { host: model.url, model: MODEL, concurrency: 2 });
    assert.deepEqual(
      [result.total, result.asked, result.answered, result.reused, result.failed],
      [SYMBOLS.length, SYMBOLS.length, SYMBOLS.length, 0, 0],
    );
    assert.equal(model.chatCalls.length, SYMBOLS.length);
    assert.ok(model.chatCalls.every((c) => c.model === MODEL));
    const nodes = byId(commit.nodes);
    for (const id of SYMBOLS) {
      const node = nodes.get(id)!;
      assert.match(node.technicalSummary!, new RegExp(`^${node.name} does its work`), id);
      assert.match(node.businessSummary, /matters to users/, id);
      assert.deepEqual(node.security, { severity: 'none', summary: `${node.name} touches nothing sensitive.` });
      assert.equal(node.metadata.summarySource, 'llm');
      assert.equal(node.metadata.summaryModel, MODEL);
      assert.equal(node.codeHash, codeHashOf(node));
    }
    // Files are not summarized; the doc comment went to the model with the code.
    assert.equal(nodes.get('file::src/main.ts')!.businessSummary, undefined);
    const backoffPrompt = model.chatCalls.find((c) => c.prompt.includes('`backoff`'))!.prompt;
    assert.match(backoffPrompt, /Waits longer after each failed attempt\./);
    assert.match(backoffPrompt, /return 2 \*\* attempt \* 100;/);
  });

  test('a re-run reuses the summaries of unchanged code: the same commit asks nothing, a changed function asks once', async () => {
    const known = knownSummaries(commit.nodes);
    assert.equal(known.size, SYMBOLS.length);
    model.chatCalls.length = 0;
    const again = await analyzeRepository(root);
    const same = await summarizeNodes(again.nodes, { host: model.url, model: MODEL, known });
    assert.deepEqual([same.asked, same.reused], [0, SYMBOLS.length]);
    assert.equal(model.chatCalls.length, 0, 'the model was asked nothing');
    assert.equal(
      byId(again.nodes).get('src/retry.ts::backoff')!.businessSummary,
      'backoff matters to users (fake model).',
    );

    const changed = await analyzeRepository(
      await repository({ ...FILES, 'src/main.ts': FILES['src/main.ts']!.replace('async () => {}', 'async () => {};') }),
    );
    const once = await summarizeNodes(changed.nodes, { host: model.url, model: MODEL, known });
    assert.deepEqual([once.asked, once.reused], [1, SYMBOLS.length - 1]);
    assert.equal(model.chatCalls.length, 1);
    assert.match(model.chatCalls[0]!.prompt, /`start`/);
  });

  test('a model that fails, answers other than JSON, or is slow: those nodes keep their doc comment, nothing is invented', async () => {
    for (const [label, set, reset] of [
      ['HTTP 500', () => (model.chatFailWith = 500), () => (model.chatFailWith = null)],
      ['not JSON', () => (model.chatAnswer = () => 'Sure! Here is a summary.'), () => undefined],
      ['slow', () => (model.chatDelayMs = 2_000), () => (model.chatDelayMs = 0)],
    ] as const) {
      const original = model.chatAnswer;
      set();
      try {
        const fresh = await analyzeRepository(root);
        const result = await summarizeNodes(fresh.nodes, { host: model.url, model: MODEL, timeoutMs: 300 });
        assert.equal(result.answered, 0, label);
        assert.equal(result.failed, SYMBOLS.length, label);
        const backoff = byId(fresh.nodes).get('src/retry.ts::backoff')!;
        assert.equal(backoff.technicalSummary, 'Waits longer after each failed attempt.', label);
        assert.equal(backoff.metadata.summarySource, 'doc-comment', label);
        assert.equal(backoff.businessSummary, undefined, label);
        assert.equal(byId(fresh.nodes).get('src/main.ts::start')!.technicalSummary, undefined, label);
      } finally {
        reset();
        model.chatAnswer = original;
      }
    }
  });

  test('a model that is down is given up on after a few refused requests, not asked for every node', async () => {
    const down = new FakeOllama();
    await down.start();
    const url = down.url;
    await down.stop();
    const many: GraphNode[] = Array.from({ length: 200 }, (_, i) => ({
      id: `src/many.ts::f${i}`,
      name: `f${i}`,
      type: 'FUNCTION',
      filePath: 'src/many.ts',
      startLine: i + 1,
      endLine: i + 1,
      rawCode: `function f${i}() {}`,
      parentFile: 'file::src/many.ts',
      metadata: {},
    }));
    const result = await summarizeNodes(many, { host: url, model: MODEL, concurrency: 4 });
    assert.equal(result.answered, 0);
    assert.equal(result.failed, 200);
    assert.ok(result.asked <= 5 + 4, `asked ${result.asked} times`);
    assert.match(result.gaveUp!, /unreachable/);
    assert.ok(many.every((n) => n.technicalSummary === undefined));
  });

  test('the CLI: --summarize writes the summaries; --previous of that file asks the model nothing; bad flags exit 2', async () => {
    const out = join(await tempDir(), 'graph.json');
    const env = { OLLAMA_HOST: model.url.replace('http://', ''), OLLAMA_SUMMARY_MODEL: MODEL };
    model.chatCalls.length = 0;
    const first = await runCli(['analyze', root, '--out', out, '--summarize'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      new RegExp(`Summarized ${SYMBOLS.length} nodes with ${MODEL}: ${SYMBOLS.length} by the model`),
    );
    assert.equal(model.chatCalls.length, SYMBOLS.length);
    const written = JSON.parse(await readFile(out, 'utf8')) as CommitFile;
    const run = byId(written.nodes).get('src/retry.ts::Retrier.run')!;
    assert.equal(run.businessSummary, `${run.name} matters to users (fake model).`);
    assert.equal(run.metadata.summarySource, 'llm');

    const second = await runCli(
      ['analyze', root, '--out', join(root, '..', 'again.json'), '--summarize', '--previous', out],
      env,
    );
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, new RegExp(`0 by the model, ${SYMBOLS.length} reused`));
    assert.equal(model.chatCalls.length, SYMBOLS.length, 'the second run asked the model nothing');

    for (const [args, message] of [
      [['--previous', out], /--previous is read by --summarize only/],
      [['--summarize', '--previous', join(root, 'missing.json')], /--previous .*missing\.json: no such file/],
      [['--summarize', '--previous', join(root, 'src/main.ts')], /--previous .*main\.ts: /],
      [['--summarize', '--summary-concurrency', '0'], /--summary-concurrency must be a whole number from 1 to 64/],
    ] as const) {
      const bad = await runCli(['analyze', root, '--out', out, ...args], env);
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, message);
    }
  });
});

for (const backend of backends)
  describe(`an upload keeps the previous commit's model summaries for unchanged code (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    before(async () => {
      database = await backend.open();
      server = await startServer(database);
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    const node = (name: string, code: string | undefined, summaries: Record<string, unknown> = {}) => ({
      id: `src/a.ts::${name}`,
      name,
      type: 'FUNCTION',
      filePath: 'src/a.ts',
      startLine: 1,
      endLine: 3,
      ...(code === undefined ? {} : { rawCode: code }),
      parentFile: 'file::src/a.ts',
      metadata: {},
      ...summaries,
    });
    const llm = (name: string) => ({
      technicalSummary: `${name}: technical, by the model`,
      businessSummary: `${name}: business, by the model`,
      security: { severity: 'low', summary: `${name}: security note` },
      metadata: { summarySource: 'llm', summaryModel: MODEL },
    });
    const upload = async (commitHash: string, nodes: unknown[]) => {
      const answer = await rest(server.url, 'POST', '/api/v1/graphs?repo=carry', { commitHash, nodes });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      return answer.body;
    };
    /** The node as get_node shows it in the graph's latest commit. */
    const got = async (name: string) => {
      const answer = await rest(server.url, 'POST', '/api/v1/tools/get_node', {
        node: `src/a.ts::${name}`,
        repo: 'carry',
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.node;
    };

    test('same id and code: the summaries stay; changed code, no code or a doc comment of its own at a changed node: not', async () => {
      const first = await upload('c1', [
        node('same', 'function same() {}', llm('same')),
        node('changed', 'function changed() {}', llm('changed')),
        node('docOnly', 'function docOnly() {}', llm('docOnly')),
      ]);
      assert.equal(first.summariesKept, 0);
      const second = await upload('c2', [
        node('same', 'function same() {}'),
        node('changed', 'function changed() { return 1; }'),
        node('docOnly', 'function docOnly() {}', {
          technicalSummary: 'Its doc comment.',
          metadata: { summarySource: 'doc-comment' },
        }),
      ]);
      assert.equal(second.summariesKept, 2);
      const same = await got('same');
      assert.equal(same.businessSummary, 'same: business, by the model');
      assert.equal(same.technicalSummary, 'same: technical, by the model');
      assert.equal(same.metadata.summaryCarriedFrom, 'c1');
      const changed = await got('changed');
      assert.equal(changed.businessSummary, null);
      assert.equal(changed.technicalSummary, null);
      // A doc comment alone is no model's summary: the unchanged node takes the model's.
      assert.equal((await got('docOnly')).businessSummary, 'docOnly: business, by the model');
      // Code search finds the kept summary's words (the search document was built with it).
      const found = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
        query: 'business by the model',
        repo: 'carry',
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      const ids = JSON.stringify(found.body);
      assert.match(ids, /src\/a\.ts::same/, ids);
      assert.doesNotMatch(ids, /src\/a\.ts::changed/, ids);
    });
  });

for (const backend of backends)
  describe(`analyze --summarize --upload reuses the summaries the server stores (${backend.name})`, () => {
    const model = new FakeOllama();
    let database: TestDb;
    let server: TestServer;
    let root: string;
    before(async () => {
      await model.start();
      database = await backend.open();
      server = await startServer(database);
      root = await repository();
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
      await model.stop();
    });

    test('the same commit again asks the model nothing, a changed function once: the rest come from the server', async () => {
      const env = { OLLAMA_HOST: model.url, OLLAMA_SUMMARY_MODEL: MODEL };
      const analyze = () => runCli(['analyze', root, '--upload', server.url, '--repo', 'reuse', '--summarize'], env);
      model.chatCalls.length = 0;
      const first = await analyze();
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stderr, new RegExp(`${SYMBOLS.length} by the model, 0 reused from ${server.url},`));
      assert.equal(model.chatCalls.length, SYMBOLS.length);

      const second = await analyze();
      assert.equal(second.code, 0, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(`0 by the model, ${SYMBOLS.length} reused from ${server.url} \\(commit [0-9a-f]{12}\\)`),
      );
      assert.equal(model.chatCalls.length, SYMBOLS.length, 'the second run asked the model nothing');

      await writeFile(join(root, 'src/main.ts'), FILES['src/main.ts']!.replace('async () => {}', 'async () => {};'));
      const third = await analyze();
      assert.equal(third.code, 0, third.stderr);
      assert.match(third.stderr, new RegExp(`1 by the model, ${SYMBOLS.length - 1} reused`));
      assert.equal(model.chatCalls.length, SYMBOLS.length + 1);
      assert.match(model.chatCalls.at(-1)!.prompt, /`start`/);

      // Every symbol of the stored commit has the model's summaries, reused or new.
      for (const id of SYMBOLS) {
        const got = await rest(server.url, 'POST', '/api/v1/tools/get_node', { node: id, repo: 'reuse' });
        assert.equal(got.status, 200, JSON.stringify(got.body));
        assert.equal(got.body.node.metadata.summarySource, 'llm', id);
        assert.equal(got.body.node.businessSummary, `${got.body.node.name} matters to users (fake model).`, id);
      }
    });

    test('POST /api/v1/graphs/summaries: the summaries of the hashes asked for; none for a repo without a graph; bad input is 400 naming it', async () => {
      const commit = await analyzeRepository(root);
      const hashes = commit.nodes.map((n) => codeHashOf(n)).filter((h): h is string => h !== undefined);
      const answer = await rest(server.url, 'POST', '/api/v1/graphs/summaries', { repo: 'REUSE', codeHashes: hashes });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.match(answer.body.commitHash, /^[0-9a-f]+$/);
      const backoff = commit.nodes.find((n) => n.id === 'src/retry.ts::backoff')!;
      const found = answer.body.summaries.find((s: any) => s.codeHash === codeHashOf(backoff));
      assert.deepEqual(found, {
        codeHash: codeHashOf(backoff),
        technicalSummary: 'backoff does its work (fake model).',
        businessSummary: 'backoff matters to users (fake model).',
        security: { severity: 'none', summary: 'backoff touches nothing sensitive.' },
        model: MODEL,
      });
      assert.equal(answer.body.summaries.length, SYMBOLS.length, 'files have no model summaries');

      const none = await rest(server.url, 'POST', '/api/v1/graphs/summaries', {
        repo: 'nothing-here',
        codeHashes: hashes,
      });
      assert.equal(none.status, 200);
      assert.deepEqual(none.body, { repo: 'nothing-here', commitHash: null, summaries: [] });

      for (const [body, field] of [
        [{ repo: 'reuse', codeHashes: ['XYZ'] }, 'codeHashes.0'],
        [{ repo: 'reuse', codeHashes: Array.from({ length: 5_001 }, () => hashes[0]) }, 'codeHashes'],
        [{ codeHashes: [] }, 'repo'],
      ] as const) {
        const bad = await rest(server.url, 'POST', '/api/v1/graphs/summaries', body);
        assert.equal(bad.status, 400, JSON.stringify(bad.body));
        assert.equal(bad.body.error.code, 'VALIDATION_ERROR');
        assert.equal(bad.body.error.details.issues[0].field, field, JSON.stringify(bad.body));
      }
    });
  });
