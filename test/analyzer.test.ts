import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import type { CommitFile } from '../src/commit-file.js';
import { analyzeCommand } from '../src/commands/analyze.js';
import { backends, once } from './helpers/backends.js';
import { rest, startServer } from './helpers/server.js';
import { runCli } from './helpers/service.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The fixture repository: re-exports, a default export, inheritance and an implemented interface,
 * overloads, arrow functions, a React component and hook, an Express route, a test file, and a
 * Python package with classes, relative imports and a package re-export. File path → content.
 */
const FIXTURE: Record<string, string> = {
  '.gitignore': 'generated/\n*.log.ts\n',
  'generated/skip.ts': 'export function generatedThing() {}\n',
  'notes.log.ts': 'export function ignoredByPattern() {}\n',
  'node_modules/dep/index.js': 'export function dependency() {}\n',
  'dist/bundle.js': 'export function built() {}\n',
  'src/shapes.ts': `/** Something with an area. */
export interface Shape {
  area(): number;
}

/** A point on the plane. */
export type Point = { x: number; y: number };

export enum Color {
  Red,
  Green,
}

/** The base of every figure. */
export abstract class Figure implements Shape {
  constructor(protected readonly origin: Point) {}

  abstract area(): number;

  /** Describes the figure in words. */
  describe(): string {
    return \`\${this.constructor.name} of area \${this.area()}\`;
  }
}

export class Circle extends Figure {
  constructor(origin: Point, private readonly radius: number) {
    super(origin);
  }

  area(): number {
    return Math.PI * square(this.radius);
  }
}

// Multiplies a number by itself.
export function square(n: number): number {
  return n * n;
}
`,
  'src/format.ts': `import { square } from './shapes.js';

/** Formats a number or a list of numbers. */
export function format(value: number): string;
export function format(value: number[]): string;
export function format(value: number | number[]): string {
  return Array.isArray(value) ? value.map((v) => format(v)).join(', ') : pad(value.toFixed(2));
}

const pad = (text: string) => text.padStart(8);

/** Squares, then formats. */
export const formatSquare = (n: number): string => format(square(n));

export default function describeAll(values: number[]): string {
  return values.map((v) => formatSquare(v)).join('\\n');
}
`,
  'src/options.ts': `export const Options = { verbose: false };

/** The options a run takes. */
export type Options = typeof Options;

export class Runner {
  /** Starts a runner with the given options, or the defaults. */
  constructor();
  constructor(options: Options);
  constructor(readonly options: Options = Options) {}
}
`,
  'src/index.ts': `export { Circle, square } from './shapes.js';
export * from './format.js';
export { default as describeAll } from './format.js';
export type { Shape as Area } from './shapes.js';
`,
  'src/main.ts': `import { Circle as Round, describeAll, formatSquare } from './index.js';
import * as shapes from './shapes.js';

export function main(): string {
  const circle = new Round({ x: 0, y: 0 }, 2);
  return describeAll([circle.area(), shapes.square(3)]) + formatSquare(1);
}

main();
`,
  'src/ui/Greeting.tsx': `import { useState } from 'react';

/** Counts clicks. */
export function useCounter(start = 0) {
  const [count, setCount] = useState(start);
  return { count, increment: () => setCount(count + 1) };
}

/** Greets the user by name. */
export const Greeting = ({ name }: { name: string }) => {
  const { count, increment } = useCounter();
  return <button onClick={increment}>Hello {name} ({count})</button>;
};

export function App() {
  return <Greeting name="Ada" />;
}
`,
  'src/server.js': `import express from 'express';
import { format } from './format.js';

const app = express();

/** Lists the users. */
async function listUsers(req, res) {
  res.json(await loadUsers());
}

async function loadUsers() {
  return [format(1)];
}

app.get('/users', listUsers);
app.post('/users/:id', (req, res) => {
  res.send(format(Number(req.params.id)));
});

export default app;
`,
  'test/format.test.ts': `import assert from 'node:assert/strict';
import { test } from 'node:test';
import describeAll, { format } from '../src/format.js';

test('formats a list', () => {
  assert.equal(format([1, 2]), '    1.00,     2.00');
});

test('describes every value', () => {
  assert.ok(describeAll([1]));
});
`,
  'py/shop/__init__.py': `"""The shop package."""
from .models import Product
from .pricing import total
`,
  'py/shop/models.py': `class Base:
    """Shared behaviour of stored things."""

    def save(self):
        return self.validate()

    def validate(self):
        return True


class Product(Base):
    """A thing for sale."""

    def __init__(self, name, price):
        self.name = name
        self.price = price

    def save(self):
        super().save()
        return self.validate()

    @staticmethod
    def free(name):
        return Product(name, 0)
`,
  'py/shop/pricing.py': `"""Prices and totals."""
import math
from .models import Product
from . import models as m


def total(products, tax=0.2):
    """Sums the prices, with tax."""
    return round_up(sum(p.price for p in products) * (1 + tax))


def round_up(value):
    return math.ceil(value)


def sample():
    return total([Product("pen", 2), m.Product.free("air")])
`,
  'py/shop/report.py': `from shop.pricing import total
from shop.models import *


def report():
    return total([Base()])
`,
  'py/app.py': `from shop import total
from shop.models import Product


def checkout():
    return total([Product("book", 10)])


@router.get("/checkout")
async def checkout_route():
    return checkout()
`,
  'py/tests/test_pricing.py': `from shop.pricing import total


def test_total():
    assert total([]) == 0
`,
};

/** Every node of the fixture: id, type, startLine, endLine. */
const EXPECTED_NODES: Array<[string, string, number, number]> = [
  ['file::src/format.ts', 'FILE', 1, 17],
  ['src/format.ts::format', 'FUNCTION', 6, 8], // the implementation of the overloads
  ['src/format.ts::pad', 'FUNCTION', 10, 10],
  ['src/format.ts::formatSquare', 'FUNCTION', 13, 13],
  ['src/format.ts::describeAll', 'FUNCTION', 15, 17],
  ['file::src/index.ts', 'FILE', 1, 4],
  ['file::src/main.ts', 'FILE', 1, 9],
  ['src/main.ts::main', 'FUNCTION', 4, 7],
  ['file::src/options.ts', 'FILE', 1, 11],
  ['src/options.ts::Options', 'INTERFACE', 4, 4], // the type: the value beside it is no definition
  ['src/options.ts::Runner', 'CLASS', 6, 11],
  ['src/options.ts::Runner.constructor', 'METHOD', 10, 10], // the implementation of the overloads
  ['file::src/server.js', 'FILE', 1, 20],
  ['src/server.js::listUsers', 'FUNCTION', 7, 9],
  ['src/server.js::loadUsers', 'FUNCTION', 11, 13],
  ['src/server.js::GET /users', 'ROUTE', 15, 15],
  ['src/server.js::POST /users/:id', 'ROUTE', 16, 18],
  ['file::src/shapes.ts', 'FILE', 1, 39],
  ['src/shapes.ts::Shape', 'INTERFACE', 2, 4],
  ['src/shapes.ts::Point', 'INTERFACE', 7, 7],
  ['src/shapes.ts::Color', 'ENUM', 9, 12],
  ['src/shapes.ts::Figure', 'CLASS', 15, 24],
  ['src/shapes.ts::Figure.constructor', 'METHOD', 16, 16],
  ['src/shapes.ts::Figure.area', 'METHOD', 18, 18],
  ['src/shapes.ts::Figure.describe', 'METHOD', 21, 23],
  ['src/shapes.ts::Circle', 'CLASS', 26, 34],
  ['src/shapes.ts::Circle.constructor', 'METHOD', 27, 29],
  ['src/shapes.ts::Circle.area', 'METHOD', 31, 33],
  ['src/shapes.ts::square', 'FUNCTION', 37, 39],
  ['file::src/ui/Greeting.tsx', 'FILE', 1, 17],
  ['src/ui/Greeting.tsx::useCounter', 'HOOK', 4, 7],
  ['src/ui/Greeting.tsx::Greeting', 'COMPONENT', 10, 13],
  ['src/ui/Greeting.tsx::App', 'COMPONENT', 15, 17],
  ['file::test/format.test.ts', 'TEST', 1, 11],
  ['file::py/app.py', 'FILE', 1, 11],
  ['py/app.py::checkout', 'FUNCTION', 5, 6],
  ['py/app.py::checkout_route', 'FUNCTION', 9, 11], // decorators belong to the definition
  ['py/app.py::GET /checkout', 'ROUTE', 9, 11],
  ['file::py/shop/__init__.py', 'FILE', 1, 3],
  ['file::py/shop/models.py', 'FILE', 1, 24],
  ['py/shop/models.py::Base', 'CLASS', 1, 8],
  ['py/shop/models.py::Base.save', 'METHOD', 4, 5],
  ['py/shop/models.py::Base.validate', 'METHOD', 7, 8],
  ['py/shop/models.py::Product', 'CLASS', 11, 24],
  ['py/shop/models.py::Product.__init__', 'METHOD', 14, 16],
  ['py/shop/models.py::Product.save', 'METHOD', 18, 20],
  ['py/shop/models.py::Product.free', 'METHOD', 22, 24],
  ['file::py/shop/pricing.py', 'FILE', 1, 17],
  ['file::py/shop/report.py', 'FILE', 1, 6],
  ['py/shop/report.py::report', 'FUNCTION', 5, 6],
  ['py/shop/pricing.py::total', 'FUNCTION', 7, 9],
  ['py/shop/pricing.py::round_up', 'FUNCTION', 12, 13],
  ['py/shop/pricing.py::sample', 'FUNCTION', 16, 17],
  ['file::py/tests/test_pricing.py', 'TEST', 1, 5],
  ['py/tests/test_pricing.py::test_total', 'FUNCTION', 4, 5],
];

/** Every edge of the fixture, as `TYPE from -> to`. */
const EXPECTED_EDGES = [
  'IMPORTS file::src/format.ts -> file::src/shapes.ts',
  'CALLS src/format.ts::format -> src/format.ts::format',
  'CALLS src/format.ts::format -> src/format.ts::pad',
  'CALLS src/format.ts::formatSquare -> src/format.ts::format',
  'CALLS src/format.ts::formatSquare -> src/shapes.ts::square',
  'CALLS src/format.ts::describeAll -> src/format.ts::formatSquare',
  // re-exports: one IMPORTS edge per imported file however many statements name it
  'IMPORTS file::src/index.ts -> file::src/shapes.ts',
  'IMPORTS file::src/index.ts -> file::src/format.ts',
  'IMPORTS file::src/main.ts -> file::src/index.ts',
  'IMPORTS file::src/main.ts -> file::src/shapes.ts',
  // through an alias of a re-export, `export *`, a re-exported default, a namespace import
  'CALLS src/main.ts::main -> src/shapes.ts::Circle',
  'CALLS src/main.ts::main -> src/shapes.ts::Circle.constructor', // `new Round(…)` runs the constructor too
  'CALLS src/main.ts::main -> src/shapes.ts::Circle.area',
  'CALLS src/main.ts::main -> src/format.ts::describeAll',
  'CALLS src/main.ts::main -> src/format.ts::formatSquare',
  'CALLS src/main.ts::main -> src/shapes.ts::square',
  'CALLS file::src/main.ts -> src/main.ts::main', // a top-level call belongs to the file
  'IMPORTS file::src/server.js -> file::src/format.ts',
  'CALLS src/server.js::listUsers -> src/server.js::loadUsers',
  'CALLS src/server.js::loadUsers -> src/format.ts::format',
  'HANDLES src/server.js::GET /users -> src/server.js::listUsers',
  'CALLS src/server.js::POST /users/:id -> src/format.ts::format', // an inline handler's calls belong to its route
  'IMPLEMENTS src/shapes.ts::Figure -> src/shapes.ts::Shape',
  'CALLS src/shapes.ts::Figure.describe -> src/shapes.ts::Figure.area',
  'EXTENDS src/shapes.ts::Circle -> src/shapes.ts::Figure',
  'CALLS src/shapes.ts::Circle.area -> src/shapes.ts::square',
  'CALLS src/ui/Greeting.tsx::Greeting -> src/ui/Greeting.tsx::useCounter',
  'CALLS src/ui/Greeting.tsx::App -> src/ui/Greeting.tsx::Greeting', // JSX
  'IMPORTS file::test/format.test.ts -> file::src/format.ts',
  'TESTS file::test/format.test.ts -> src/format.ts::describeAll',
  'TESTS file::test/format.test.ts -> src/format.ts::format',
  'CALLS file::test/format.test.ts -> src/format.ts::format',
  'CALLS file::test/format.test.ts -> src/format.ts::describeAll',
  'IMPORTS file::py/app.py -> file::py/shop/__init__.py',
  'IMPORTS file::py/app.py -> file::py/shop/models.py',
  'IMPORTS file::py/shop/__init__.py -> file::py/shop/models.py',
  'IMPORTS file::py/shop/__init__.py -> file::py/shop/pricing.py',
  'IMPORTS file::py/shop/pricing.py -> file::py/shop/models.py',
  'IMPORTS file::py/shop/report.py -> file::py/shop/pricing.py', // `shop.pricing`: py/ is on the path, not a package
  'IMPORTS file::py/shop/report.py -> file::py/shop/models.py',
  'IMPORTS file::py/tests/test_pricing.py -> file::py/shop/pricing.py',
  'CALLS py/app.py::checkout -> py/shop/pricing.py::total', // through the package's re-export
  'CALLS py/app.py::checkout -> py/shop/models.py::Product',
  'CALLS py/app.py::checkout_route -> py/app.py::checkout',
  'HANDLES py/app.py::GET /checkout -> py/app.py::checkout_route',
  'EXTENDS py/shop/models.py::Product -> py/shop/models.py::Base',
  'CALLS py/shop/models.py::Base.save -> py/shop/models.py::Base.validate',
  'CALLS py/shop/models.py::Product.save -> py/shop/models.py::Base.save', // super()
  'CALLS py/shop/models.py::Product.save -> py/shop/models.py::Base.validate', // self, found on the base
  'CALLS py/shop/models.py::Product.free -> py/shop/models.py::Product',
  'CALLS py/shop/pricing.py::total -> py/shop/pricing.py::round_up',
  'CALLS py/shop/pricing.py::sample -> py/shop/pricing.py::total',
  'CALLS py/shop/pricing.py::sample -> py/shop/models.py::Product',
  'CALLS py/shop/pricing.py::sample -> py/shop/models.py::Product.free', // module alias, then class attribute
  'CALLS py/shop/report.py::report -> py/shop/pricing.py::total',
  'CALLS py/shop/report.py::report -> py/shop/models.py::Base', // through `import *`
  'CALLS py/tests/test_pricing.py::test_total -> py/shop/pricing.py::total',
  'TESTS file::py/tests/test_pricing.py -> py/shop/pricing.py::total',
];

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function writeFixture(files: Record<string, string> = FIXTURE): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-analyzer-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const byId = (commit: CommitFile) => new Map(commit.nodes.map((n) => [n.id, n]));
const edgeLines = (commit: CommitFile) => commit.edges.map((e) => `${e.type} ${e.from} -> ${e.to}`);

/** Ids unique, and every edge between two nodes of the file. */
function assertWellFormed(commit: CommitFile): void {
  const ids = commit.nodes.map((n) => n.id);
  assert.equal(new Set(ids).size, ids.length, 'node ids are unique');
  const known = new Set(ids);
  const dangling = commit.edges.filter((e) => !known.has(e.from) || !known.has(e.to));
  assert.deepEqual(dangling, [], 'no edge names a node the file lacks');
  assert.equal(commit.allNodes, commit.nodes);
  assert.equal(commit.allEdges, commit.edges);
  assert.deepEqual(Object.keys(commit.nodeScores).sort(), [...ids].sort());
}

describe('analyzer: the fixture repository', once, () => {
  let repo: string;
  let commit: CommitFile;
  before(async () => {
    repo = await writeFixture();
    commit = await analyzeRepository(repo, { now: () => new Date('2026-01-02T03:04:05Z') });
  });

  test('every node with its exact id, type and lines; ignored, vendored and built files left out', () => {
    const actual = commit.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]);
    assert.deepEqual(actual.sort(), [...EXPECTED_NODES].sort());
    assertWellFormed(commit);
    assert.equal(commit.analyzedAt, '2026-01-02T03:04:05.000Z');
    assert.deepEqual(commit.stats.files, {
      total: 14,
      typescript: 7,
      javascript: 1,
      python: 6,
      go: 0,
      rust: 0,
      java: 0,
    });
    assert.equal(commit.stats.hasGit, false);
  });

  test('every edge: calls through re-exports and aliases, imports, inheritance, routes, tests', () => {
    assert.deepEqual(edgeLines(commit).sort(), [...EXPECTED_EDGES].sort());
  });

  test('doc comments become technicalSummary, flagged as such; none is invented', () => {
    const nodes = byId(commit);
    const summary = (id: string) => nodes.get(id)?.technicalSummary;
    assert.equal(
      summary('src/format.ts::format'),
      'Formats a number or a list of numbers.',
      'from above the first overload',
    );
    assert.equal(summary('src/shapes.ts::square'), 'Multiplies a number by itself.', 'a // comment counts');
    assert.equal(summary('src/shapes.ts::Figure.describe'), 'Describes the figure in words.');
    assert.equal(
      summary('src/ui/Greeting.tsx::Greeting'),
      'Greets the user by name.',
      'an arrow function bound to a const',
    );
    assert.equal(summary('py/shop/pricing.py::total'), 'Sums the prices, with tax.');
    assert.equal(summary('file::py/shop/pricing.py'), 'Prices and totals.', 'a module docstring');
    assert.equal(summary('file::src/shapes.ts'), undefined, 'the first comment documents Shape, not the file');
    assert.equal(summary('src/format.ts::describeAll'), undefined);
    assert.equal(summary('src/options.ts::Options'), 'The options a run takes.');
    assert.equal(
      summary('src/options.ts::Runner.constructor'),
      'Starts a runner with the given options, or the defaults.',
    );
    assert.equal(nodes.get('src/shapes.ts::square')!.metadata.summarySource, 'doc-comment');
    assert.equal(nodes.get('src/format.ts::describeAll')!.metadata.summarySource, undefined);
  });

  test('code, metadata and scores as DevLens has them', () => {
    const nodes = byId(commit);
    const node = (id: string) => nodes.get(id)!;
    assert.equal(
      node('src/shapes.ts::square').rawCode,
      'export function square(n: number): number {\n  return n * n;\n}',
    );
    assert.equal(node('src/shapes.ts::square').parentFile, 'file::src/shapes.ts');
    assert.match(node('src/format.ts::formatSquare').rawCode!, /^export const formatSquare = /);
    assert.deepEqual(node('src/server.js::listUsers').metadata, {
      params: ['req', 'res'],
      isAsync: true,
      exported: false,
      summarySource: 'doc-comment',
    });
    assert.equal(node('src/format.ts::describeAll').metadata.exportType, 'default');
    assert.equal(node('src/shapes.ts::Point').metadata.kind, 'type');
    assert.equal(node('src/shapes.ts::Figure.area').metadata.isAbstract, true);
    assert.equal(node('src/shapes.ts::Circle.constructor').metadata.isConstructor, true);
    assert.deepEqual(node('src/server.js::POST /users/:id').metadata, {
      urlPath: '/users/:id',
      httpMethod: 'POST',
      isDynamic: true,
      params: ['id'],
      routeKind: 'backend',
    });
    assert.deepEqual(node('file::test/format.test.ts').metadata.testCases, ['formats a list', 'describes every value']);
    assert.deepEqual(node('file::py/tests/test_pricing.py').metadata.testCases, ['test_total']);
    assert.deepEqual(node('py/shop/models.py::Product.free').metadata.decorators, ['staticmethod']);
    assert.equal(node('py/app.py::checkout_route').metadata.isAsync, true);

    const edge = (line: string) => commit.edges.find((e) => `${e.type} ${e.from} -> ${e.to}` === line)!;
    assert.deepEqual(edge('CALLS src/main.ts::main -> src/shapes.ts::Circle').metadata, {
      calledName: 'Round',
      isNew: true,
    });
    assert.deepEqual(edge('CALLS src/main.ts::main -> src/shapes.ts::Circle.constructor').metadata, {
      calledName: 'Round',
      isNew: true,
    });
    assert.deepEqual(edge('CALLS src/main.ts::main -> src/shapes.ts::square').metadata, {
      calledName: 'shapes.square',
    });
    assert.deepEqual(edge('EXTENDS py/shop/models.py::Product -> py/shop/models.py::Base').metadata, {
      extendsType: 'Base',
    });
    assert.deepEqual(edge('IMPORTS file::py/app.py -> file::py/shop/models.py').metadata, {
      importPath: 'shop.models',
      importedName: 'Product',
    });
    assert.deepEqual(edge('IMPORTS file::py/shop/pricing.py -> file::py/shop/models.py').metadata, {
      importPath: '.models',
      importedName: 'Product',
    });

    // Called from three places and calling one: format outranks pad, which only it calls.
    assert.ok(node('src/format.ts::format').score! > node('src/format.ts::pad').score!);
    assert.equal(commit.nodeScores['src/format.ts::format'], node('src/format.ts::format').score);
    assert.equal(node('src/shapes.ts::Color').score, 0);
  });

  test('include and exclude globs narrow the files', async () => {
    const python = await analyzeRepository(repo, { include: ['py/'], exclude: ['tests/'] });
    assert.deepEqual(
      python.nodes
        .filter((n) => n.type === 'FILE' || n.type === 'TEST')
        .map((n) => n.id)
        .sort(),
      [
        'file::py/app.py',
        'file::py/shop/__init__.py',
        'file::py/shop/models.py',
        'file::py/shop/pricing.py',
        'file::py/shop/report.py',
      ],
    );
    assertWellFormed(python);
    // The package analyzed on its own: its modules are known by the folder's name too.
    const shop = await analyzeRepository(join(repo, 'py/shop'));
    assert.ok(edgeLines(shop).includes('CALLS report.py::report -> pricing.py::total'));
    const noTsx = await analyzeRepository(repo, { exclude: ['*.tsx', 'py/'] });
    assert.equal(noTsx.stats.files.total, 7);
    assert.ok(!noTsx.nodes.some((n) => n.filePath.endsWith('.tsx')));
  });

  test('progress is reported per file through parsing and resolving', async () => {
    const seen: string[] = [];
    await analyzeRepository(repo, { onProgress: (p) => seen.push(`${p.phase} ${p.filesDone}/${p.filesTotal}`) });
    assert.equal(seen[0], 'listing 0/0');
    assert.equal(seen[seen.length - 1], 'done 14/14');
    for (const phase of ['parsing', 'resolving']) {
      assert.ok(seen.includes(`${phase} 8/14`), `${phase}: the TypeScript files`);
      assert.ok(seen.includes(`${phase} 14/14`), `${phase}: then the Python files`);
    }
  });

  test('the commit hash: a content hash outside git, HEAD inside; git decides what is ignored', async () => {
    const again = await analyzeRepository(repo);
    assert.match(commit.commitHash, /^[0-9a-f]{40}$/);
    assert.equal(again.commitHash, commit.commitHash, 'same sources, same hash');
    const changed = await writeFixture({ ...FIXTURE, 'src/main.ts': `${FIXTURE['src/main.ts']}// changed\n` });
    assert.notEqual((await analyzeRepository(changed)).commitHash, commit.commitHash);

    const git = (...args: string[]) =>
      execFileSync('git', ['-C', changed, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        encoding: 'utf8',
      }).trim();
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'fixture');
    await writeFile(join(changed, 'src/extra.ts'), 'export const extra = () => 1;\n'); // untracked, not ignored
    const inGit = await analyzeRepository(changed);
    assert.equal(inGit.commitHash, git('rev-parse', 'HEAD'));
    assert.equal(inGit.stats.hasGit, true);
    assert.ok(byId(inGit).has('src/extra.ts::extra'));
    assert.ok(
      !inGit.nodes.some(
        (n) => n.filePath.startsWith('generated/') || n.filePath.startsWith('dist/') || n.filePath === 'notes.log.ts',
      ),
    );
    assert.equal(inGit.nodes.length, commit.nodes.length + 2);
  });

  test('a path that is not a folder is refused', async () => {
    await assert.rejects(analyzeRepository(join(repo, 'nope')), { name: 'AnalyzeError', message: /is not a folder/ });
  });
});

describe('analyzer: compiled output beside its sources', once, () => {
  /** A package folder as it is after `tsc`: its TypeScript and what the compiler wrote from it. */
  const PACKAGE: Record<string, string> = {
    // tsc reads comments and trailing commas in a tsconfig; outDir is relative to the tsconfig.
    'pkg/tsconfig.json':
      '{\n  // build to lib/\n  "compilerOptions": { "outDir": "./lib", "declaration": true, },\n}\n',
    'pkg/src/index.ts': 'export function greet(name: string): string {\n  return `hi ${name}`;\n}\n',
    'pkg/lib/index.js': 'export function greet(name) {\n  return `hi ${name}`;\n}\n',
    'pkg/lib/index.d.ts': 'export declare function greet(name: string): string;\n',
    'pkg/lib/index.js.map': '{}',
    // Compiled in place: foo.js next to foo.ts (and .mjs next to .mts, .cjs next to .cts).
    'tool/util.ts': 'export const twice = (n: number) => 2 * n;\n',
    'tool/util.js': 'export const twice = (n) => 2 * n;\n',
    'tool/util.js.map': '{}',
    'tool/esm.mts': 'export const esm = 1;\n',
    'tool/esm.mjs': 'export const esm = 1;\n',
    'tool/cjs.cts': 'export const cjs = 1;\n',
    'tool/cjs.cjs': 'exports.cjs = 1;\n',
    'tool/view.tsx': 'export const View = () => null;\n',
    'tool/view.js': 'export const View = () => null;\n',
    // JavaScript no TypeScript explains is source: kept.
    'tool/legacy.js': 'export function legacy() {}\n',
    'tool/esm.js': 'export const notFromEsmMts = 1;\n',
    // An outDir set through `extends`, resolved against the config that names it.
    'app/tsconfig.json': '{ "extends": "./tsconfig.base", "include": ["src"] }\n',
    'app/tsconfig.base.json': '{ "compilerOptions": { "outDir": "built" } }\n',
    'app/src/main.ts': 'export function main() {}\n',
    'app/built/main.js': 'export function main() {}\n',
    // An outDir of "." or outside the repository drops nothing by itself.
    'lib2/tsconfig.json': '{ "compilerOptions": { "outDir": "." } }\n',
    'lib2/a.js': 'export const a = 1;\n',
    'lib3/tsconfig.build.json': '{ "compilerOptions": { "outDir": "../../elsewhere" } }\n',
    'lib3/b.js': 'export const b = 1;\n',
  };
  const KEPT = [
    'app/src/main.ts',
    'lib2/a.js',
    'lib3/b.js',
    'pkg/src/index.ts',
    'tool/cjs.cts',
    'tool/esm.js',
    'tool/esm.mts',
    'tool/legacy.js',
    'tool/util.ts',
    'tool/view.tsx',
  ];
  const files = (commit: CommitFile) =>
    commit.nodes
      .filter((n) => n.id.startsWith('file::'))
      .map((n) => n.filePath)
      .sort();

  test("a tsconfig's outDir and JavaScript beside its TypeScript are left out, walked or listed by git", async () => {
    const repo = await writeFixture(PACKAGE);
    const walked = await analyzeRepository(repo);
    assert.deepEqual(files(walked), KEPT);
    assert.equal(walked.stats.files.javascript, 4, 'the hand-written JavaScript only: legacy.js, esm.js, a.js, b.js');

    execFileSync('git', ['init', '-q'], { cwd: repo });
    execFileSync('git', ['add', '.'], { cwd: repo });
    const listed = await analyzeRepository(repo);
    assert.deepEqual(files(listed), KEPT);
  });
});

describe("analyzer: this project's own source", once, () => {
  test('src/: unique ids, no dangling edge, calls resolved across modules, doc comments kept', async () => {
    const commit = await analyzeRepository(ROOT, { include: ['/src/'] }); // anchored: web/src is another src/
    assertWellFormed(commit);
    assert.ok(commit.nodes.every((n) => n.filePath.startsWith('src/')));
    assert.equal(
      commit.commitHash,
      execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim(),
    );
    const nodes = byId(commit);
    const analyze = nodes.get('src/analyzer/analyze-repository.ts::analyzeRepository')!;
    assert.equal(analyze.type, 'FUNCTION');
    assert.match(analyze.technicalSummary!, /^Builds the DevLens commit file of the repository/);
    const lines = new Set(edgeLines(commit));
    assert.ok(
      lines.has(
        'CALLS src/analyzer/analyze-repository.ts::analyzeRepository -> src/analyzer/source-files.ts::listSourceFiles',
      ),
    );
    assert.ok(
      lines.has('CALLS src/commands/analyze.ts::analyzeCommand -> src/commands/upload.ts::postGraphReportingFailure'),
    );
    assert.ok(lines.has('IMPORTS file::src/main.ts -> file::src/commands/analyze.ts'));
    assert.ok(commit.stats.documentedNodes > commit.nodes.length / 4, 'this code base documents its exports');
  });
});

/** `devstream-hub <args>` in this checkout. */
const cli = (args: string[]) => runCli(args, {});

describe('devstream-hub analyze (the command)', () => {
  test('main.ts runs it: the commit file on stdout, progress and the summary on stderr', once, async () => {
    const repo = await writeFixture();
    const out = await cli(['analyze', repo, '--out', '/dev/stdout', '--include', 'src/shapes.ts']);
    assert.equal(out.code, 0, out.stderr);
    const written = JSON.parse(out.stdout) as CommitFile;
    assert.deepEqual(
      written.nodes.map((n) => n.id).sort(),
      EXPECTED_NODES.filter(([id]) => id.includes('src/shapes.ts'))
        .map(([id]) => id)
        .sort(),
    );
    assert.match(out.stderr, /analyze: parsing 1\/1 files/);
    assert.match(
      out.stderr,
      /Analyzed 1 files \(1 TypeScript, 0 JavaScript, 0 Python\) in [\d.]+ s: 12 nodes, 4 edges, commit [0-9a-f]{40}/,
    );
  });

  test('bad arguments and missing folders are refused with an exit code, not a stack trace', once, async () => {
    const repo = await writeFixture();
    const errors: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args.join(' '));
    try {
      assert.equal(await analyzeCommand([repo]), 2);
      assert.equal(await analyzeCommand([repo, '--out', 'x.json', '--frobnicate']), 2);
      assert.equal(await analyzeCommand([repo, repo, '--out', 'x.json']), 2);
      assert.equal(await analyzeCommand([join(repo, 'nope'), '--out', join(repo, 'x.json'), '--quiet']), 1);
    } finally {
      console.error = original;
    }
    assert.match(errors[0]!, /^Give --out, --upload or both\.\n\ndevstream-hub analyze <path>/);
    assert.match(errors[1]!, /Unknown option '--frobnicate'/);
    assert.match(errors[2]!, /Give one repository folder/);
    assert.match(errors[3]!, /analyze failed: .*nope is not a folder/);
  });

  for (const backend of backends) {
    test(`--out and --upload: the file is written, the server stores it, the DevLens tools answer from it (${backend.name})`, async () => {
      const repo = await writeFixture();
      const database = await backend.open();
      const server = await startServer(database);
      try {
        const out = join(repo, 'graph.json.gz');
        const code = await analyzeCommand([
          repo,
          '--out',
          out,
          '--upload',
          server.url,
          '--repo',
          'fixture',
          '--branch',
          'main',
          '--quiet',
        ]);
        assert.equal(code, 0);
        const written = JSON.parse(gunzipSync(await readFile(out)).toString('utf8')) as CommitFile;
        assert.equal(written.nodes.length, EXPECTED_NODES.length);
        assert.equal(written.edges.length, EXPECTED_EDGES.length);

        const graphs = await rest(server.url, 'GET', '/api/v1/graphs');
        assert.equal(graphs.status, 200);
        assert.equal(graphs.body.graphs.length, 1);
        assert.equal(graphs.body.graphs[0].repo, 'fixture');

        // Found by the words of its doc comment alone: the analyzer keeps the documentation.
        const byDoc = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'multiplies itself',
          repo: 'fixture',
        });
        assert.equal(byDoc.status, 200, JSON.stringify(byDoc.body));
        assert.equal(byDoc.body.commitHash, written.commitHash);
        assert.equal(byDoc.body.symbols[0].nodeId, 'src/shapes.ts::square');
        const byName = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'Product.free',
          repo: 'fixture',
        });
        assert.deepEqual(
          {
            nodeId: byName.body.symbols[0].nodeId,
            startLine: byName.body.symbols[0].startLine,
            exactMatch: byName.body.symbols[0].exactMatch,
          },
          { nodeId: 'py/shop/models.py::Product.free', startLine: 22, exactMatch: true },
        );

        const context = await rest(server.url, 'POST', '/api/v1/tools/resolve_context', {
          task: 'formatSquare',
          intent: 'pinpoint',
          repo: 'fixture',
        });
        assert.equal(context.status, 200, JSON.stringify(context.body));
        const packet: string = context.body.packet;
        assert.match(packet, /^ANSWER formatSquare .*src\/format\.ts:13$/m);
        assert.match(packet, /IDMAP .*=src\/format\.ts::formatSquare/);
        assert.match(packet, /-calls->/, 'FLOW shows the resolved calls');

        // An upload the server refuses is exit code 1 with the server's reason.
        const errors: string[] = [];
        const original = console.error;
        console.error = (...args: unknown[]) => void errors.push(args.join(' '));
        try {
          assert.equal(await analyzeCommand([repo, '--upload', server.url, '--repo', ' ', '--quiet']), 1);
        } finally {
          console.error = original;
        }
        assert.deepEqual(errors, ['upload failed: 400 VALIDATION_ERROR: repo: repo must not be empty']);
      } finally {
        await server.close();
        await database.dispose();
      }
    });
  }
});
