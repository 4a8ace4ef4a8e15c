import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { backends, postgresBaseUrl } from './helpers/backends.js';
import { createScratchDatabase } from '../support/postgres.js';
import { CLI, ROOT, serve, type ServedProcess } from './helpers/service.js';

/**
 * Issue 19, defect 3, "regular expressions with quadratic time on the event loop", over HTTP (the
 * ReDoS checker and the scanners' equivalence are in test/unit/text-scanners.test.ts): pathological
 * text in every field a regex reads (node code, name, id, path, summaries, security note; memory content, keywords and queries; search queries; repository
 * files for the analyzer) is answered in bounded time over real HTTP, on both backends, while
 * /healthz keeps answering (within 5 s: a blocked event loop, as the old code's, held it for tens of
 * seconds). Deterministic: fixed seeds.
 *
 * The time bounds are far apart from what the old code took (53 s for 200,000 newlines, a packet
 * over a 200,000-`<` summary ~20 s per node shown) and from what the new code takes (well under a
 * second): a test of a denial of service has to bound time somewhere. HOSTILE_TEXT_LOG=1 prints
 * each request's time and the slowest /healthz beside it.
 */

const SEED = 20_261_219;
/** Longest wait for one answer; the old code took tens of seconds to minutes on these inputs. */
const ANSWER_MS = 20_000;
/**
 * Slowest /healthz allowed while hostile work runs: a bound for failure, far from both what a blocked
 * loop takes (tens of seconds) and what a loaded 2-core machine adds to a healthy one (1 s once failed
 * with three other jobs running). How fast /healthz answers is not this test's claim.
 */
const HEALTHZ_MS = 5_000;
/** Length of each pathological value: big enough that quadratic work takes tens of seconds. */
const SIZE = 200_000;

// ---------------------------------------------------------------------------------------------
// Pathological text: one unit repeated, between a little ordinary text and an ending chosen to
// make a backtracking regex fail late (a lone `x` after blanks, `!` after `#`, `\f` after tabs…).

const UNITS = [
  '\n',
  '\r\n',
  '\u2028',
  ' ',
  '\t',
  ' \t',
  '\n ',
  '\n\t',
  '/*',
  '/*a',
  '/**',
  '*',
  '* ',
  '\n*',
  '#',
  '\n#',
  '# ',
  '"""',
  "'''",
  '"',
  "'",
  '//',
  ':/',
  '<',
  '<a',
  '< ',
  '>',
  '(',
  '{',
  '([{',
  '[',
  '\\',
  '/',
  '.',
  '. ',
  '!',
  '?',
  'A',
  'aA',
  'A1',
  'Ab',
  'AB',
  '1',
  '_',
  '$',
  '@',
  '@a',
  'x',
  ':',
  '-',
  '\u00a0',
  '\f',
];
const TAILS = ['', 'x', '!', '\f', '\u00a0x', '#!', '*/', '>', ')', '}', 'a.', 'a', 'A', '1'];

/** Pathological strings of `size` characters (plus a few), from the units above. */
const hostileText = (size: number) =>
  fc
    .record({
      unit: fc.constantFrom(...UNITS),
      second: fc.constantFrom('', ...UNITS),
      head: fc.string({ maxLength: 8 }),
      tail: fc.constantFrom(...TAILS),
    })
    .map(({ unit, second, head, tail }) => {
      const run = unit + second;
      return head + run.repeat(Math.ceil(size / run.length)).slice(0, size) + tail;
    });

/** The shapes issue 19 saw blow up and the attack strings of the regexes it replaced, always included. */
const known = (size: number): Array<[string, string]> => [
  ['newlines', '\n'.repeat(size)],
  ['/*a repeated', '/*a'.repeat(size / 3)],
  ['a comment full of newlines', `/*${'\n'.repeat(size)}*/`],
  ['an unclosed comment full of newlines', `/**${'\n '.repeat(size / 2)}`],
  ['# lines after blank lines', `${'\n'.repeat(size)}#!`],
  ['< repeated', '<'.repeat(size)],
  ['capitals', `${'A'.repeat(size)}1`],
  ['blanks before a letter', `${' '.repeat(size)}x`],
  ['tabs before a form feed', `${'\t'.repeat(size)}\f`],
  ['slashes before a letter', `${'/'.repeat(size)}x`],
  ['unclosed docstrings', `"""${'"'.repeat(size)}`],
  ['deep brackets', `${'({['.repeat(size / 3)}`],
];

const sample = (size: number, n: number, seed: number) => fc.sample(hostileText(size), { seed, numRuns: n });

// ---------------------------------------------------------------------------------------------
// Over HTTP: a service of its own (a child process, so a blocked event loop cannot stall the test).

/** Runs `work` while probing /healthz back to back; the slowest probe's time comes back with the result. */
async function whileProbing<T>(url: string, work: () => Promise<T>): Promise<{ result: T; slowestProbeMs: number }> {
  let done = false;
  let slowest = 0;
  const probes = (async () => {
    while (!done) {
      const started = performance.now();
      try {
        const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(ANSWER_MS) });
        await response.arrayBuffer();
      } catch {
        /* no answer in time: counted below as the time waited */
      }
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  try {
    return { result: await work(), slowestProbeMs: slowest };
  } finally {
    done = true;
    await probes;
  }
}

/** A request that must be answered within ANSWER_MS, with /healthz answering within HEALTHZ_MS meanwhile. */
async function promptly(
  service: ServedProcess,
  label: string,
  path: string,
  init: RequestInit,
): Promise<{ status: number; body: any }> {
  const started = performance.now();
  const { result, slowestProbeMs } = await whileProbing(service.url, async () => {
    let response: Response;
    try {
      response = await fetch(`${service.url}${path}`, { ...init, signal: AbortSignal.timeout(ANSWER_MS) });
    } catch (error) {
      throw new Error(`${label}: no answer within ${ANSWER_MS} ms (${(error as Error).message})`, { cause: error });
    }
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  });
  const ms = performance.now() - started;
  if (process.env.HOSTILE_TEXT_LOG)
    console.error(`# ${label}: ${Math.round(ms)} ms, slowest /healthz ${Math.round(slowestProbeMs)} ms`);
  assert.ok(
    slowestProbeMs < HEALTHZ_MS,
    `${label}: /healthz took ${Math.round(slowestProbeMs)} ms to answer while it ran (${Math.round(ms)} ms)`,
  );
  return result;
}

const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const tool = (service: ServedProcess, label: string, name: string, args: Record<string, unknown>) =>
  promptly(service, label, `/api/v1/tools/${name}`, json(args));

function upload(service: ServedProcess, label: string, repo: string, file: unknown) {
  return promptly(service, label, `/api/v1/graphs?repo=${repo}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(JSON.stringify(file)),
  });
}

/** The service on a fresh database of `backend`, killed (not asked) afterwards: a blocked one would not hear a SIGTERM. */
async function serveOn(
  backend: (typeof backends)[number],
): Promise<{ service: ServedProcess; dispose(): Promise<void> }> {
  if (backend.name === 'postgres') {
    const scratch = await createScratchDatabase(postgresBaseUrl!);
    const service = await serve({ DATABASE_URL: scratch.url });
    return {
      service,
      dispose: async () => (service.child.kill('SIGKILL'), await service.exited, await scratch.drop()),
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'dsh-hostile-text-'));
  const service = await serve({ DATA_DIR: dir });
  return {
    service,
    dispose: async () => (
      service.child.kill('SIGKILL'),
      await service.exited,
      await rm(dir, { recursive: true, force: true })
    ),
  };
}

const node = (id: string, fields: Record<string, unknown>) => ({
  id,
  name: id.split('::').pop(),
  type: 'FUNCTION',
  filePath: 'src/hostile.ts',
  startLine: 1,
  endLine: 9,
  ...fields,
});

for (const backend of backends) {
  describe(`pathological text over HTTP (${backend.name})`, () => {
    let service: ServedProcess;
    let dispose: () => Promise<void>;
    before(async () => ({ service, dispose } = await serveOn(backend)));
    after(async () => dispose?.());

    test('an upload whose code, names, ids and paths are pathological is indexed in bounded time', async () => {
      const codes = [...known(SIZE), ...sample(SIZE, 12, SEED).map((s, i): [string, string] => [`sample ${i}`, s])];
      const keys = sample(600, 8, SEED + 1); // names and ids: at most 2,000 bytes of UTF-8 (they are index keys)
      const paths = [
        ...known(SIZE)
          .slice(0, 8)
          .map(([, s]) => s),
        ...sample(SIZE, 4, SEED + 2),
      ];
      const nodes = [
        ...codes.map(([, code], i) => node(`src/hostile.ts::codeNode${i}`, { rawCode: code })),
        ...keys.map((key, i) => node(`src/hostile.ts::${key}`, { name: `${key}${i}`, rawCode: key })),
        ...paths.map((path, i) => node(`src/hostile.ts::pathNode${i}`, { filePath: path })),
      ];
      const res = await upload(service, 'upload', 'hostile-code', { commitHash: 'c0de000000', nodes, edges: [] });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.nodes, nodes.length);

      // The documents are what they were: a comment full of newlines is still found by its words.
      const code = `/**\n${' * \n'.repeat(SIZE / 4)} * Retries the hostile request.\n */\nfunction hostileRetry() {}\n${'\n'.repeat(SIZE)}`;
      const more = await upload(service, 'upload of a long doc comment', 'hostile-doc', {
        commitHash: 'd0c0000000',
        nodes: [node('src/doc.ts::hostileRetry', { rawCode: code })],
        edges: [],
      });
      assert.equal(more.status, 201, JSON.stringify(more.body));
      const found = await tool(service, 'find_symbols over the doc comment', 'find_symbols', {
        query: 'retries request',
        repo: 'hostile-doc',
      });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.deepEqual(
        found.body.symbols.map((s: any) => s.nodeId),
        ['src/doc.ts::hostileRetry'],
      );

      for (const [label, query] of [
        ...known(1_900),
        ...sample(1_900, 6, SEED + 3).map((s, i): [string, string] => [`sample ${i}`, s]),
      ]) {
        const res = await tool(service, `find_symbols for ${label}`, 'find_symbols', { query, repo: 'hostile-code' });
        assert.ok(res.status === 200 || res.status === 400, `${label}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      // Packets read the code too: its first declaration (the meta: segment), snippet lines, CODE bodies.
      for (let i = 0; i < codes.length; i += 10) {
        const packet = await tool(service, `resolve_context with code over code nodes ${i}…`, 'resolve_context', {
          task: 'codeNode hostile function',
          focus: nodes.slice(i, i + 10).map((n) => n.id),
          code: true,
          repo: 'hostile-code',
        });
        assert.equal(packet.status, 200, JSON.stringify(packet.body));
        assert.match(packet.body.packet, /^CODE \d+$/m);
      }
    });

    test('packets, nodes and searches over stored pathological summaries and security notes answer in bounded time', async () => {
      const texts = [...known(SIZE), ...sample(SIZE, 8, SEED + 4).map((s, i): [string, string] => [`sample ${i}`, s])];
      const nodes = texts.map(([, text], i) =>
        node(`src/notes.ts::noteNode${i}`, {
          technicalSummary: `noteNode ${text}`,
          businessSummary: i % 2 ? text : null,
          security: { severity: 'high', summary: text },
          rawCode: `function noteNode${i}() {\n${text}\n}`,
        }),
      );
      const edges = nodes.slice(1).map((n) => ({ from: nodes[0]!.id, to: n.id, type: 'CALLS' }));
      const res = await upload(service, 'upload of summaries', 'hostile-notes', {
        commitHash: 'a0be000000',
        nodes,
        edges,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));

      const ids = nodes.map((n) => n.id);
      for (const intent of ['exploratory', 'security-audit', 'pinpoint']) {
        for (let i = 0; i < ids.length; i += 10) {
          const packet = await tool(service, `resolve_context ${intent} on nodes ${i}…`, 'resolve_context', {
            task: 'noteNode hostile function',
            intent,
            focus: ids.slice(i, i + 10),
            tokenBudget: 500,
            code: true,
            repo: 'hostile-notes',
          });
          assert.equal(packet.status, 200, JSON.stringify(packet.body));
          assert.match(packet.body.packet, /^SEC \d+$/m);
        }
      }
      for (const [i, id] of ids.entries()) {
        const got = await tool(service, `get_node ${texts[i]![0]}`, 'get_node', {
          node: id,
          include: ['code', 'technical', 'business', 'security'],
          repo: 'hostile-notes',
        });
        assert.equal(got.status, 200, JSON.stringify(got.body));
      }
      for (const [label, text] of [
        ...known(1_900),
        ...sample(1_900, 6, SEED + 5).map((s, i): [string, string] => [`sample ${i}`, s]),
      ]) {
        const got = await tool(service, `get_node "${label}"`, 'get_node', { node: text, repo: 'hostile-notes' });
        assert.ok([200, 400, 404].includes(got.status), `${label}: ${got.status} ${JSON.stringify(got.body)}`);
        const packet = await tool(service, `resolve_context for "${label}"`, 'resolve_context', {
          task: text,
          repo: 'hostile-notes',
        });
        assert.ok([200, 400].includes(packet.status), `${label}: ${packet.status} ${JSON.stringify(packet.body)}`);
      }
    });

    test('summaries of 200,000 distinct words and a cut through an emoji are stored and searchable, never a database error', async () => {
      const words = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}`).join(' ');
      const nodes = [
        // Postgres refuses a search vector over 1 MB (54000): this answered 500 DATABASE_ERROR.
        node('src/words.ts::manyWords', { technicalSummary: `alphaword ${words}` }),
        node('src/words.ts::manySecurityWords', { security: { severity: 'high', summary: `betaword ${words}` } }),
        // A doc comment whose text is cut (at 4,000 characters) between the halves of an emoji:
        // the lone half used to reach Postgres, which refused the row (22P02, a 400 naming no field).
        node('src/words.ts::emojiCut', { rawCode: `/** gammaword ${'a'.repeat(3_988)}😀 */\nfunction emojiCut() {}` }),
      ];
      const res = await upload(service, 'upload of huge summaries', 'hostile-words', {
        commitHash: 'b0bb000000',
        nodes,
        edges: [],
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      for (const [query, id] of [
        ['alphaword', 'manyWords'],
        ['betaword', 'manySecurityWords'],
        ['gammaword', 'emojiCut'],
      ]) {
        const found = await tool(service, `find_symbols ${query}`, 'find_symbols', { query, repo: 'hostile-words' });
        assert.equal(found.status, 200, JSON.stringify(found.body));
        assert.deepEqual(
          found.body.symbols.map((s: any) => s.nodeId),
          [`src/words.ts::${id}`],
        );
      }
      const whole = await tool(service, 'get_node manyWords', 'get_node', {
        node: 'src/words.ts::manyWords',
        include: ['technical'],
        repo: 'hostile-words',
      });
      assert.equal(whole.body.node.technicalSummary.length, `alphaword ${words}`.length, 'the stored summary is whole');
    });

    test('memories with pathological content, keywords and queries are stored and found in bounded time', async () => {
      const contents = [
        ...known(SIZE),
        ['deep brackets (JSON-like)', '['.repeat(SIZE)],
        ...sample(SIZE, 6, SEED + 6).map((s, i): [string, string] => [`sample ${i}`, s]),
      ];
      const keywords = sample(90, 50, SEED + 7).map((k, i) => `${i}${k}`.slice(0, 100));
      for (const [label, content] of contents) {
        const res = await promptly(
          service,
          `store ${label}`,
          '/api/v1/memories',
          json({ content: `note ${content}`, content_type: 'context', keywords }),
        );
        assert.equal(res.status, 201, `${label}: ${JSON.stringify(res.body)}`);
      }
      for (const [label, query] of [
        ...known(1_900),
        ...sample(1_900, 6, SEED + 8).map((s, i): [string, string] => [`sample ${i}`, s]),
      ]) {
        const res = await promptly(service, `search ${label}`, '/api/v1/memories/search', json({ query }));
        assert.ok(res.status === 200 || res.status === 400, `${label}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The analyzer reads repository files (untrusted: a CI job analyzes whatever a branch holds).

describe('the analyzer reads pathological repository files in bounded time', () => {
  let repo: string;
  before(async () => {
    repo = await mkdtemp(join(tmpdir(), 'dsh-hostile-repo-'));
    const files: Record<string, string> = {
      // Blanks, then a form feed, between a doc comment and its declaration: no longer adjacent.
      'src/spaced.ts': `/** Far away. */${' '.repeat(SIZE)}\f\nexport function spaced() {}\n/** Close by. */\nexport function close() {}\n`,
      // A doc line of blanks that ends in a letter, and one of blanks only.
      'src/blank-lines.ts': `/**\n * Blank lines follow.\n *${' '.repeat(SIZE)}x\n *${'\t'.repeat(SIZE)}\n */\nexport function blanks() {}\n`,
      'src/many-lines.ts': `/**\n${' * line\n'.repeat(SIZE / 8)} */\nexport function manyLines() {}\n`,
      // A docstring of 200,000 lines (its indent was a Math.min over all of them: a stack overflow);
      // files over 1 MiB are not read.
      'pkg/long_doc.py': `def long_doc():\n    """Long.\n${' m\n'.repeat(SIZE)}    """\n    return 1\n`,
      'pkg/blank_doc.py': `def blank_doc():\n    """Blank${' '.repeat(SIZE)}x\n    ${'\t'.repeat(SIZE)}\n    """\n    return 1\n`,
    };
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(repo, path)), { recursive: true });
      await writeFile(join(repo, path), content);
    }
  });
  after(async () => rm(repo, { recursive: true, force: true }));

  test('devstream-hub analyze finishes in bounded time with the doc comments it should find', async () => {
    const out = join(repo, 'graph.json');
    const child = spawn(process.execPath, [...CLI, 'analyze', repo, '--out', out, '--quiet'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
    });
    assert.equal(code, 0, `analyze exited ${code} (killed after 60 s when null): ${stderr.slice(0, 2000)}`);
    const graph = JSON.parse(await readFile(out, 'utf8')) as {
      nodes: Array<{ id: string; technicalSummary?: string }>;
    };
    const summary = (id: string) => graph.nodes.find((n) => n.id === id)?.technicalSummary ?? '(none)';
    const starts = (id: string, prefix: string) =>
      assert.ok(summary(id).startsWith(prefix), `${id}: ${JSON.stringify(summary(id).slice(0, 80))}…`);
    assert.equal(summary('src/spaced.ts::spaced'), '(none)');
    assert.equal(summary('src/spaced.ts::close'), 'Close by.');
    starts('src/blank-lines.ts::blanks', `Blank lines follow.\n${' '.repeat(100)}`); // cut at MAX_DOC_CHARS
    starts('src/many-lines.ts::manyLines', 'line\nline\n');
    starts('pkg/long_doc.py::long_doc', 'Long.\nm\nm\n');
    starts('pkg/blank_doc.py::blank_doc', `Blank${' '.repeat(100)}`);
  });
});
