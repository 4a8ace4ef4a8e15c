/**
 * Analyzer gaps the code-question benchmark found (issue 21), each pinned on a small repository:
 * nested Python classes are nodes with their methods; a Python method called on a receiver of
 * unknown type links to the one method of that name, and to none when the name is shared, is a
 * built-in type's or lives only in tests; the functions a TypeScript object literal holds (as
 * written or frozen) are METHOD nodes that calls through the object reach. (`new C()` calling C's
 * constructor is pinned in analyzer.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function repository(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-analyzer-gaps-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const PYTHON: Record<string, string> = {
  'lib/jar.py': `class Jar:
    def __init__(self):
        self.items = {}

    def extract_cookies(self, response):
        request = self._Compat(response.request)
        self.items.update(request.headers())

    class _Compat:
        """Looks like a urllib request."""

        def __init__(self, request):
            self.request = request

        def headers(self):
            return self.request.headers
`,
  'lib/client.py': `from lib.jar import Jar


class Client:
    def __init__(self):
        self.cookies = Jar()

    def send(self, request, auth):
        response = request.run()
        self.cookies.extract_cookies(response)
        auth.sign(request)
        auth.render(request)
        self.cookies.keys()
        return response


class HeaderAuth:
    def sign(self, request):
        return request


class TokenAuth:
    def render(self, request):
        return request


class BasicAuth:
    def render(self, request):
        return request
`,
  'tests/test_client.py': `def helper_only_in_tests():
    pass


class FakeAuth:
    def probe(self):
        pass


def test_send(client):
    client.probe()
`,
  'lib/use_probe.py': `def check(auth):
    auth.probe()
`,
};

describe('analyzer gaps (issue 21): Python', () => {
  test('a class nested in a class is a node named after both, with its methods', async () => {
    const commit = await analyzeRepository(await repository(PYTHON));
    const nodes = commit.nodes
      .filter((n) => n.filePath === 'lib/jar.py')
      .map((n) => [n.id, n.name, n.type, n.startLine, n.endLine]);
    assert.deepEqual(
      nodes.sort(),
      [
        ['file::lib/jar.py', 'jar.py', 'FILE', 1, 16],
        ['lib/jar.py::Jar', 'Jar', 'CLASS', 1, 16],
        ['lib/jar.py::Jar.__init__', 'Jar.__init__', 'METHOD', 2, 3],
        ['lib/jar.py::Jar._Compat', 'Jar._Compat', 'CLASS', 9, 16],
        ['lib/jar.py::Jar._Compat.__init__', 'Jar._Compat.__init__', 'METHOD', 12, 13],
        ['lib/jar.py::Jar._Compat.headers', 'Jar._Compat.headers', 'METHOD', 15, 16],
        ['lib/jar.py::Jar.extract_cookies', 'Jar.extract_cookies', 'METHOD', 5, 7],
      ].sort(),
    );
    const nested = commit.nodes.find((n) => n.id === 'lib/jar.py::Jar._Compat')!;
    assert.equal(nested.technicalSummary, 'Looks like a urllib request.');
    assert.equal(nested.metadata.enclosingClass, 'Jar');
  });

  test('a method called on a receiver of unknown type links to the one method of that name, and only then', async () => {
    const commit = await analyzeRepository(await repository(PYTHON));
    const calls = commit.edges
      .filter((e) => e.type === 'CALLS')
      .map((e) => `${e.from} -> ${e.to}${e.metadata?.resolvedBy ? ` (${e.metadata.resolvedBy})` : ''}`);
    assert.deepEqual(calls.sort(), [
      'lib/client.py::Client.__init__ -> lib/jar.py::Jar',
      // self.cookies.extract_cookies(…), auth.sign(…): one class defines each name.
      'lib/client.py::Client.send -> lib/client.py::HeaderAuth.sign (unique-method-name)',
      'lib/client.py::Client.send -> lib/jar.py::Jar.extract_cookies (unique-method-name)',
      // request.headers(): its only definition is the nested class's.
      'lib/jar.py::Jar.extract_cookies -> lib/jar.py::Jar._Compat.headers (unique-method-name)',
      // `self._Compat(…)` is not a module name or a method: no edge. `auth.render` has two
      // definitions, `self.cookies.keys()` is a dict's method, and `auth.probe()` is defined in a
      // test only (a test may call it: `client.probe()`).
      'tests/test_client.py::test_send -> tests/test_client.py::FakeAuth.probe (unique-method-name)',
    ]);
  });
});

const TYPESCRIPT: Record<string, string> = {
  'src/nodes.ts': `function freeze<T>(value: T): Readonly<T> {
  return Object.freeze(value);
}

export interface PointNode {
  readonly x: number;
}

/** Factory and guard of point nodes. */
export const PointNode = freeze({
  is(node: unknown): node is PointNode {
    return typeof node === 'object' && node !== null && 'x' in node;
  },
  /** A point at x. */
  create: (x: number): PointNode => freeze({ x }),
  kind: 'PointNode',
});

export const defaults = { limit: 2, methods: ['get'] };
`,
  'src/use.ts': `import { PointNode, defaults } from './nodes';

export function make(): PointNode {
  return PointNode.create(defaults.limit);
}
`,
};

describe('analyzer gaps (issue 21): TypeScript', () => {
  test('functions an object literal holds, frozen or not, are METHOD nodes that calls through the object reach', async () => {
    const commit = await analyzeRepository(await repository(TYPESCRIPT));
    assert.deepEqual(
      commit.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]).sort(),
      [
        ['file::src/nodes.ts', 'FILE', 1, 19],
        ['file::src/use.ts', 'FILE', 1, 5],
        ['src/nodes.ts::PointNode', 'INTERFACE', 5, 7],
        ['src/nodes.ts::PointNode.create', 'METHOD', 15, 15],
        ['src/nodes.ts::PointNode.is', 'METHOD', 11, 13],
        ['src/nodes.ts::freeze', 'FUNCTION', 1, 3],
        ['src/use.ts::make', 'FUNCTION', 3, 5],
      ].sort(),
    );
    const create = commit.nodes.find((n) => n.id === 'src/nodes.ts::PointNode.create')!;
    assert.equal(create.metadata.kind, 'object-method');
    assert.equal(create.metadata.className, 'PointNode');
    assert.equal(create.technicalSummary, 'A point at x.');
    const calls = commit.edges.filter((e) => e.type === 'CALLS').map((e) => `${e.from} -> ${e.to}`);
    assert.deepEqual(calls.sort(), [
      'file::src/nodes.ts -> src/nodes.ts::freeze',
      'src/nodes.ts::PointNode.create -> src/nodes.ts::freeze',
      'src/use.ts::make -> src/nodes.ts::PointNode.create',
    ]);
  });
});

describe('analyzer gaps (issue 21): routes', () => {
  test("a test's stub server makes no ROUTE nodes; the application's routes stay", async () => {
    const commit = await analyzeRepository(
      await repository({
        'src/server.ts': `import express from 'express';
const app = express();
app.get('/users', (req, res) => res.json([]));
`,
        'test/stub.test.ts': `import express from 'express';
const stub = express();
stub.get('/retry', (req, res) => res.sendStatus(429));
`,
        'app/views.py': `@app.get("/items")
def items():
    return []
`,
        'test/helpers/server.ts': `import express from 'express';
export const helper = express();
helper.post('/echo', (req, res) => res.json(req.body));
`,
        'tests/test_views.py': `@app.get("/stub")
def stub():
    return []
`,
      }),
    );
    assert.deepEqual(
      commit.nodes
        .filter((n) => n.type === 'ROUTE')
        .map((n) => n.id)
        .sort(),
      ['app/views.py::GET /items', 'src/server.ts::GET /users'],
    );
  });
});
