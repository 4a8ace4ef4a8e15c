/**
 * The README and docs/ stay true, both ways: every configuration variable, error code (with its
 * HTTP status), tool and REST route of the code is in a table row of docs/, and every row of those
 * tables names something the code has. Links between the pages resolve, anchors included.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { ENV_VARS } from '../src/config.js';
import { ERROR_CODES } from '../src/errors.js';
import { tools } from '../src/operations/index.js';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** The pages: README.md and every docs/*.md, by path from the repository's root. */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const readme = read('README.md');

/** The text outside fenced code blocks (a table or a link inside one is an example, not the page's). */
function prose(text: string): string {
  return text
    .split('\n')
    .reduce<{ inFence: boolean; lines: string[] }>(
      (state, line) => {
        if (line.startsWith('```')) state.inFence = !state.inFence;
        else if (!state.inFence) state.lines.push(line);
        return state;
      },
      { inFence: false, lines: [] },
    )
    .lines.join('\n');
}

/** A table row's cells, trimmed; `\|` inside a cell is not a separator. */
const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());

/**
 * The body rows (as cells) of every table in `text` whose header's first cell is `first`.
 * @example tableRows(read('docs/configuration.md'), 'variable') // [['`PORT`', '`7000`', 'TCP port.'], …]
 */
function tableRows(text: string, first: string): string[][] {
  const lines = prose(text).split('\n');
  const rows: string[][] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('|') || cells(lines[i]!)[0] !== first || !/^\|\s*-/.test(lines[i + 1] ?? '')) continue;
    for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(cells(lines[i]!));
  }
  return rows;
}

/** The one backticked name a first cell holds: `` `PORT` `` → `PORT`. */
function named(cell: string, where: string): string {
  const m = /^`([^`]+)`$/.exec(cell);
  assert.ok(m, `${where}: the first cell ${cell} is one backticked name`);
  return m[1]!;
}

/** Both ways: what the code has and the page lacks, and what the page names and the code lacks. */
function assertSameNames(documented: string[], inCode: string[], what: string): void {
  const missing = inCode.filter((name) => !documented.includes(name));
  const unknown = documented.filter((name) => !inCode.includes(name));
  assert.deepEqual(missing, [], `${what}: in the code but not documented: ${missing.join(', ')}`);
  assert.deepEqual(unknown, [], `${what}: documented but not in the code: ${unknown.join(', ')}`);
  assert.equal(documented.length, new Set(documented).size, `${what}: no row twice`);
}

/** Where each kind of reference is documented. */
const TABLES = {
  variables: { page: 'docs/configuration.md', header: 'variable' },
  errors: { page: 'docs/rest.md', header: 'code' },
  tools: { page: 'docs/tools.md', header: 'tool' },
  routes: { page: 'docs/rest.md', header: 'route' },
} as const;
const rowsOf = (kind: keyof typeof TABLES) => {
  const { page, header } = TABLES[kind];
  const rows = tableRows(read(page), header);
  assert.ok(rows.length > 0, `${page} has a table headed "${header}"`);
  return rows;
};

describe('docs/ documents the code, and only what the code has', () => {
  test('every environment variable, and no other, is a row of the configuration table', () => {
    const documented = rowsOf('variables').map((row) => named(row[0]!, TABLES.variables.page));
    assertSameNames(documented, ENV_VARS, TABLES.variables.page);
  });

  test('every error code, and no other, is a row of the errors table with its HTTP status first', () => {
    const rows = rowsOf('errors');
    const documented = rows.map((row) => named(row[0]!, TABLES.errors.page));
    assertSameNames(documented, Object.keys(ERROR_CODES), TABLES.errors.page);
    for (const row of rows) {
      const code = named(row[0]!, TABLES.errors.page) as keyof typeof ERROR_CODES;
      const statuses = row[1]!.split('/').map((s) => s.trim());
      assert.ok(
        statuses.every((s) => /^[1-5]\d\d$/.test(s)),
        `${code}'s HTTP cell "${row[1]}" lists statuses`,
      );
      assert.equal(
        Number(statuses[0]),
        ERROR_CODES[code].status,
        `${code} is documented as ${ERROR_CODES[code].status}`,
      );
    }
  });

  test("every tool, and no other, is a row of docs/tools.md's table and of the README's", () => {
    const names = tools.map((op) => op.name);
    for (const [page, text] of [
      [TABLES.tools.page, read(TABLES.tools.page)],
      ['README.md', readme],
    ] as const) {
      const documented = tableRows(text, 'tool').map((row) => named(row[0]!, page));
      assertSameNames(documented, names, `${page}'s tools table`);
    }
  });
});

/** `GET /api/v1/tasks` for each `` `METHOD /path…` `` in a route cell (query strings dropped). */
function routesIn(cell: string): string[] {
  return [...cell.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)[^`]*`/g)].map((m) => `${m[1]} ${m[2]}`);
}

/** Routes the OpenAPI document does not describe (`schema.hide`), each documented in docs/rest.md. */
const HIDDEN_ROUTES = [
  'POST /mcp',
  'GET /mcp',
  'DELETE /mcp',
  'GET /openapi.json',
  'GET /',
  'POST /api/v1/tools/{name}',
];

describe('docs/rest.md lists the routes the server serves, and only those', () => {
  let database: TestDb;
  let server: TestServer;
  let served: Set<string>;
  before(async () => {
    database = await backends[0]!.open();
    server = await startServer(database);
    const openapi = await rest(server.url, 'GET', '/openapi.json');
    assert.equal(openapi.status, 200);
    served = new Set();
    for (const [path, item] of Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item).filter((m) => !['head', 'options', 'parameters'].includes(m))) {
        // Each tool's own POST /api/v1/tools/<name> is the one documented row POST /api/v1/tools/{name}.
        const documentedPath = path.startsWith('/api/v1/tools/') ? '/api/v1/tools/{name}' : path;
        served.add(`${method.toUpperCase()} ${documentedPath}`);
      }
    }
  });
  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  test('every route of the served OpenAPI document, and every hidden one, is in the routes table', () => {
    const documented = new Set(rowsOf('routes').flatMap((row) => routesIn(row[0]!)));
    for (const route of [...served, ...HIDDEN_ROUTES]) assert.ok(documented.has(route), `${route} is documented`);
  });

  test('every route in the routes table is served, as the OpenAPI document names it', () => {
    for (const route of HIDDEN_ROUTES) {
      const [method, path] = route.split(' ') as [string, string];
      assert.ok(server.app.hasRoute({ method, url: path.replace(/\{(\w+)\}/g, ':$1') }), `${route} is served`);
    }
    const documented = rowsOf('routes').flatMap((row) => {
      const routes = routesIn(row[0]!);
      assert.ok(routes.length > 0, `the row ${row[0]} names a route`);
      return routes;
    });
    // Exact paths, parameter names included: `/jobs/{id}` is not the served `/jobs/{jobId}`.
    for (const route of documented)
      assert.ok(served.has(route) || HIDDEN_ROUTES.includes(route), `${route} is a route of the server`);
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of prose(text).split('\n')) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (!heading) continue;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

describe('links between the README and docs/ resolve', () => {
  for (const page of PAGES) {
    test(`${page}: every relative link's file exists, and its #anchor is a heading there`, () => {
      const links = [...prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
      for (const link of links.filter((l) => !/^[a-z]+:/i.test(l))) {
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file === '' ? page : relative(ROOT, join(ROOT, dirname(page), file));
        assert.ok(!target.startsWith('..') && existsSync(join(ROOT, target)), `${page}: ${link} → ${target} exists`);
        if (anchor === undefined) continue;
        assert.ok(statSync(join(ROOT, target)).isFile() && target.endsWith('.md'), `${page}: ${link} anchors a page`);
        assert.ok(anchorsOf(read(target)).has(anchor), `${page}: ${link}: ${target} has a heading #${anchor}`);
      }
    });
  }
});

describe('README.md is a front page', () => {
  test('shows the two set-up commands', () => {
    assert.ok(readme.includes('npm ci && npm start'));
    assert.ok(readme.includes('npm test'));
  });

  test('is at most 300 lines and links every page of docs/', () => {
    assert.ok(readme.split('\n').length <= 300, `the README has ${readme.split('\n').length} lines`);
    for (const page of PAGES.filter((p) => p !== 'README.md'))
      assert.ok(readme.includes(`](${page})`), `the README links ${page}`);
  });
});

/** The real ky graph DevLens wrote: in ../shared beside the checkout (benchmarks and CI have it), not in a clone. */
const KY = new URL('../../shared/fixtures/graphs/ky/3419113b48e034fdcf8fa6bd3be3da7b3d0d758f.json', import.meta.url);
const noKy = existsSync(KY)
  ? false
  : `the example packet in docs/tools.md is rendered from DevLens's ky graph, and ${KY.pathname} is absent (it lives in ../shared beside the checkout)`;

describe("docs/tools.md's packet example is what the service answers", { skip: noKy }, () => {
  let database: TestDb;
  let server: TestServer;
  before(async () => {
    database = await backends[0]!.open();
    server = await startServer(database);
    const up = await rest(server.url, 'POST', '/api/v1/graphs?repo=ky', readFileSync(KY, 'utf8'));
    assert.equal(up.status, 201);
  });
  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  test("resolve_context with the arguments the page names renders the page's packet, line for line", async () => {
    // "A packet (`resolve_context {…}` on ky, …):" followed by the packet in a ```text block.
    const example = /A packet \(`resolve_context (\{[^`]+\})` on ky[^]*?```text\n([^]*?)```/.exec(
      read('docs/tools.md'),
    );
    assert.ok(example, 'docs/tools.md shows a packet after "A packet (`resolve_context {…}` on ky"');
    const args = JSON.parse(example[1]!);
    const answer = await rest(server.url, 'POST', '/api/v1/tools/resolve_context', { ...args, repo: 'ky' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.packet, example[2]!.trimEnd());
  });
});
