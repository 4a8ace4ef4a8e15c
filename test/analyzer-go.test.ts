import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import type { CommitFile } from '../src/commit-file.js';
import { analyzeCommand } from '../src/commands/analyze.js';
import { backends, once } from './helpers/backends.js';
import { rest, startServer } from './helpers/server.js';
import { runCli } from './helpers/service.js';

/**
 * A Go module of three packages (the root's `main`, `shapes`, `report`) over several files:
 * imports between them (one aliased, one blank, and the standard library's), calls in a package, across
 * packages and on receivers of known type, an interface that embeds another, a struct that embeds
 * one and so implements both interfaces, doc comments (a `//go:` directive and a licence header
 * left out), a test file, and a file with a syntax error. File path → content.
 */
const FIXTURE: Record<string, string> = {
  'go.mod': 'module example.com/shop // the shop\n\ngo 1.22\n',
  'main.go': `package main

import (
	"fmt"

	"example.com/shop/report"
	"example.com/shop/shapes"
)

func main() {
	fmt.Println(report.Summary())
	fmt.Println(figure().String())
	run()
}

// figure makes the figure the program shows.
func figure() *shapes.Circle { return shapes.NewCircle(1) }
`,
  'run.go': `package main

import _ "example.com/shop/report"

func run() {}
`,
  'shapes/shape.go': `// Package shapes measures figures.
package shapes

import "math"

// Shape is anything with an area.
type Shape interface {
	Area() float64
	Named
}

// Named things have a name.
type Named interface {
	Name() string
}

// Base holds what every figure shares.
type Base struct {
	label string
}

// Name returns the figure's label.
func (b Base) Name() string { return b.label }

// Circle is a round figure.
type Circle struct {
	Base
	R float64
}

// Area is pi times the radius squared.
func (c *Circle) Area() float64 {
	return math.Pi * square(c.R)
}

func (c *Circle) String() string {
	return c.Name() + " " + c.Base.Name()
}

// square multiplies x by itself.
//go:noinline
func square(x float64) float64 { return x * x }
`,
  'shapes/new.go': `// Copyright 2026 The Shop Authors. Licensed under the MIT licence.
package shapes

// NewCircle makes a circle of radius r.
func NewCircle(r float64) *Circle {
	return &Circle{Base: Base{label: "circle"}, R: r}
}

type (
	// Unit names a unit of length.
	Unit string
	scale float64
)
`,
  'shapes/shape_test.go': `package shapes

import "testing"

func TestArea(t *testing.T) {
	c := NewCircle(1)
	if c.Area() < 3 {
		t.Fatal("too small")
	}
}
`,
  'report/report.go': `package report

import (
	"fmt"
	"strings"

	geo "example.com/shop/shapes"
)

// Describe prints a shape's name and area.
func Describe(s geo.Shape) string {
	var b strings.Builder
	b.WriteString(s.Name())
	return fmt.Sprintf("%s: %.2f", b.String(), s.Area())
}

// Summary describes a circle of radius 2.
func Summary() string {
	c := geo.NewCircle(2)
	total := c.Area()
	return Describe(c) + format(total)
}
`,
  'report/format.go': `package report

import "strconv"

func format(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

type fileSink struct{}

func (fileSink) Close() error { return nil }

type netSink struct{}

func (*netSink) Close() error { return nil }

func closeAll(sinks []interface{ Close() error }) {
	for _, s := range sinks {
		s.Close()
	}
}
`,
  'report/broken.go': `package report

func Broken( {
`,
};

const EXPECTED_NODES: Array<[string, string, number, number]> = [
  ['file::main.go', 'FILE', 1, 17],
  ['main.go::main', 'FUNCTION', 10, 14],
  ['main.go::figure', 'FUNCTION', 17, 17],
  ['file::report/format.go', 'FILE', 1, 19],
  ['report/format.go::format', 'FUNCTION', 5, 5],
  ['report/format.go::fileSink', 'STRUCT', 7, 7],
  ['report/format.go::fileSink.Close', 'METHOD', 9, 9],
  ['report/format.go::netSink', 'STRUCT', 11, 11],
  ['report/format.go::netSink.Close', 'METHOD', 13, 13],
  ['report/format.go::closeAll', 'FUNCTION', 15, 19],
  ['file::report/report.go', 'FILE', 1, 22],
  ['report/report.go::Describe', 'FUNCTION', 11, 15],
  ['report/report.go::Summary', 'FUNCTION', 18, 22],
  ['file::run.go', 'FILE', 1, 5],
  ['run.go::run', 'FUNCTION', 5, 5],
  ['file::shapes/new.go', 'FILE', 1, 13],
  ['shapes/new.go::NewCircle', 'FUNCTION', 5, 7],
  ['shapes/new.go::Unit', 'INTERFACE', 11, 11],
  ['shapes/new.go::scale', 'INTERFACE', 12, 12],
  ['file::shapes/shape.go', 'FILE', 1, 42],
  ['shapes/shape.go::Shape', 'INTERFACE', 7, 10],
  ['shapes/shape.go::Named', 'INTERFACE', 13, 15],
  ['shapes/shape.go::Base', 'STRUCT', 18, 20],
  ['shapes/shape.go::Base.Name', 'METHOD', 23, 23],
  ['shapes/shape.go::Circle', 'STRUCT', 26, 29],
  ['shapes/shape.go::Circle.Area', 'METHOD', 32, 34],
  ['shapes/shape.go::Circle.String', 'METHOD', 36, 38],
  ['shapes/shape.go::square', 'FUNCTION', 42, 42],
  ['file::shapes/shape_test.go', 'TEST', 1, 10],
  ['shapes/shape_test.go::TestArea', 'FUNCTION', 5, 10],
];

/**
 * Left out, as they must be: `fmt.Println`, `strings.Builder.WriteString` and `t.Fatal` (outside the
 * repository), `s.Name()` / `s.Area()` on an interface value (no method body to call), and
 * `s.Close()` in closeAll (two Close methods: no guess).
 */
const EXPECTED_EDGES: string[] = [
  'IMPORTS file::main.go -> file::report/report.go', // report.Summary's file, not format.go
  'IMPORTS file::main.go -> file::shapes/new.go', // shapes.NewCircle
  'IMPORTS file::main.go -> file::shapes/shape.go', // shapes.Circle
  'IMPORTS file::run.go -> file::report/format.go', // a blank import: every non-test file
  'IMPORTS file::run.go -> file::report/report.go',
  'IMPORTS file::report/report.go -> file::shapes/new.go', // aliased
  'IMPORTS file::report/report.go -> file::shapes/shape.go',
  'EXTENDS shapes/shape.go::Shape -> shapes/shape.go::Named', // an embedded interface
  'EXTENDS shapes/shape.go::Circle -> shapes/shape.go::Base', // an embedded struct
  'IMPLEMENTS shapes/shape.go::Base -> shapes/shape.go::Named',
  'IMPLEMENTS shapes/shape.go::Circle -> shapes/shape.go::Shape', // Name promoted from Base
  'IMPLEMENTS shapes/shape.go::Circle -> shapes/shape.go::Named',
  'CALLS main.go::main -> report/report.go::Summary', // package-qualified
  'CALLS main.go::main -> shapes/shape.go::Circle.String', // figure().String(): the only String method
  'CALLS main.go::main -> main.go::figure',
  'CALLS main.go::main -> run.go::run', // another file of the package
  'CALLS main.go::figure -> shapes/new.go::NewCircle',
  'CALLS report/report.go::Summary -> shapes/new.go::NewCircle', // through the alias
  'CALLS report/report.go::Summary -> shapes/shape.go::Circle.Area', // c := geo.NewCircle(2), which returns *Circle
  'CALLS report/report.go::Summary -> report/report.go::Describe',
  'CALLS report/report.go::Summary -> report/format.go::format',
  'CALLS shapes/shape.go::Circle.Area -> shapes/shape.go::square',
  'CALLS shapes/shape.go::Circle.String -> shapes/shape.go::Base.Name', // c.Name(), promoted from the embedded Base
  'CALLS shapes/shape_test.go::TestArea -> shapes/new.go::NewCircle',
  'CALLS shapes/shape_test.go::TestArea -> shapes/shape.go::Circle.Area',
];

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function writeFixture(files: Record<string, string> = FIXTURE): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-analyzer-go-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const edgeLines = (commit: CommitFile) => commit.edges.map((e) => `${e.type} ${e.from} -> ${e.to}`);

describe('analyzer: a Go module (issue 25)', once, () => {
  let commit: CommitFile;
  before(async () => {
    commit = await analyzeRepository(await writeFixture(), { now: () => new Date('2026-01-02T03:04:05Z') });
  });

  test('every node with its exact id, type and lines; the file with a syntax error skipped', () => {
    assert.deepEqual(
      commit.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]).sort(),
      [...EXPECTED_NODES].sort(),
    );
    assert.deepEqual(commit.stats.files, {
      total: 8,
      typescript: 0,
      javascript: 0,
      python: 0,
      go: 8,
      rust: 0,
      java: 0,
    });
    assert.deepEqual(commit.stats.skippedFiles, [{ filePath: 'report/broken.go', reason: 'syntax error at line 3' }]);
  });

  test('every edge: imports through go.mod, calls in and across packages and on known receivers, embedding', () => {
    assert.deepEqual(edgeLines(commit).sort(), [...EXPECTED_EDGES].sort());
  });

  test('the // lines directly above a declaration are its technicalSummary; directives and licences are not', () => {
    const docs = Object.fromEntries(
      commit.nodes.filter((n) => n.technicalSummary).map((n) => [n.id, n.technicalSummary]),
    );
    assert.deepEqual(docs, {
      'main.go::figure': 'figure makes the figure the program shows.',
      'report/report.go::Describe': "Describe prints a shape's name and area.",
      'report/report.go::Summary': 'Summary describes a circle of radius 2.',
      'shapes/new.go::NewCircle': 'NewCircle makes a circle of radius r.',
      'shapes/new.go::Unit': 'Unit names a unit of length.',
      'file::shapes/shape.go': 'Package shapes measures figures.',
      'shapes/shape.go::Shape': 'Shape is anything with an area.',
      'shapes/shape.go::Named': 'Named things have a name.',
      'shapes/shape.go::Base': 'Base holds what every figure shares.',
      'shapes/shape.go::Base.Name': "Name returns the figure's label.",
      'shapes/shape.go::Circle': 'Circle is a round figure.',
      'shapes/shape.go::Circle.Area': 'Area is pi times the radius squared.',
      'shapes/shape.go::square': 'square multiplies x by itself.',
    });
    for (const n of commit.nodes)
      assert.equal(n.metadata.summarySource, n.technicalSummary ? 'doc-comment' : undefined, n.id);
  });

  test('code, parent file and metadata', () => {
    const node = (id: string) => commit.nodes.find((n) => n.id === id)!;
    const area = node('shapes/shape.go::Circle.Area');
    assert.equal(area.rawCode, 'func (c *Circle) Area() float64 {\n\treturn math.Pi * square(c.R)\n}');
    assert.equal(area.parentFile, 'file::shapes/shape.go');
    assert.deepEqual(area.metadata, {
      language: 'go',
      signature: 'func (c *Circle) Area() float64',
      className: 'Circle',
      pointerReceiver: true,
      visibility: 'exported',
      summarySource: 'doc-comment',
    });
    assert.equal(area.name, 'Circle.Area');
    assert.deepEqual(node('report/format.go::format').metadata, {
      language: 'go',
      signature: 'func format(x float64) string',
      visibility: 'package',
    });
    assert.deepEqual(node('shapes/shape.go::Shape').metadata, {
      language: 'go',
      kind: 'interface',
      methodNames: ['Area'],
      visibility: 'exported',
      summarySource: 'doc-comment',
    });
    assert.deepEqual(node('shapes/new.go::scale').metadata, { language: 'go', kind: 'type', visibility: 'package' });
    assert.equal(node('shapes/new.go::Unit').rawCode, 'Unit string');
    assert.deepEqual(node('file::shapes/shape_test.go').metadata, { language: 'go', testCases: ['TestArea'] });
  });
});

/** `devstream-hub <args>` in this checkout. */
const cli = (args: string[]) => runCli(args, {});

describe('devstream-hub analyze on a Go module', () => {
  test('the CLI writes the nodes and edges above', once, async () => {
    const repo = await writeFixture();
    const out = join(repo, 'graph.json');
    const run = await cli(['analyze', repo, '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    const written = JSON.parse(await readFile(out, 'utf8')) as CommitFile;
    assert.deepEqual(
      written.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]).sort(),
      [...EXPECTED_NODES].sort(),
    );
    assert.deepEqual(edgeLines(written).sort(), [...EXPECTED_EDGES].sort());
    assert.match(run.stderr, /analyze: parsing 8\/8 files/);
  });

  for (const backend of backends) {
    test(`--upload: the server stores the graph and find_symbols answers from it (${backend.name})`, async () => {
      const repo = await writeFixture();
      const database = await backend.open();
      const server = await startServer(database);
      try {
        const out = join(repo, 'graph.json.gz');
        const args = [repo, '--out', out, '--upload', server.url, '--repo', 'shop', '--branch', 'main', '--quiet'];
        assert.equal(await analyzeCommand(args), 0);
        const written = JSON.parse(gunzipSync(await readFile(out)).toString('utf8')) as CommitFile;
        assert.equal(written.nodes.length, EXPECTED_NODES.length);
        assert.equal(written.edges.length, EXPECTED_EDGES.length);

        const byDoc = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'pi times the radius',
          repo: 'shop',
        });
        assert.equal(byDoc.status, 200, JSON.stringify(byDoc.body));
        assert.equal(byDoc.body.commitHash, written.commitHash);
        assert.equal(byDoc.body.symbols[0].nodeId, 'shapes/shape.go::Circle.Area');
        const byName = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'Circle.String',
          repo: 'shop',
        });
        assert.deepEqual(
          {
            nodeId: byName.body.symbols[0].nodeId,
            startLine: byName.body.symbols[0].startLine,
            exactMatch: byName.body.symbols[0].exactMatch,
          },
          { nodeId: 'shapes/shape.go::Circle.String', startLine: 36, exactMatch: true },
        );
      } finally {
        await server.close();
        await database.dispose();
      }
    });
  }
});
