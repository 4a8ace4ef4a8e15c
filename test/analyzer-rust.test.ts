import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import type { CommitFile } from '../src/commit-file.js';
import { analyzeCommand } from '../src/commands/analyze.js';
import { backends, once } from './helpers/backends.js';
import { rest, startServer } from './helpers/server.js';
import { tempDirs } from './helpers/temp-dirs.js';
import { runCli } from './helpers/service.js';

/**
 * The Rust fixture (issue 25): a library crate with a file module, a `x/mod.rs` module and its
 * child, inline modules (one `#[cfg(test)]`), a trait with a supertrait and `impl Trait for Type`,
 * inherent impls, `use` with `crate::`, `super::`, `self::`, `as` and a glob, a re-export, an
 * integration test using the crate by its Cargo.toml name, and a file with a syntax error.
 */
const FIXTURE: Record<string, string> = {
  'Cargo.toml': `[package]
name = "circles"
version = "0.1.0"

[dependencies]
name = "nope"
`,
  'src/lib.rs': `//! Circles and their areas.

pub mod shapes;
mod util;

pub use shapes::Circle;

/// Reports over shapes.
pub mod report {
    use super::util::round as round_to;
    use crate::shapes::{Area, Circle, Kind};

    /// Describes a circle's area.
    pub fn describe(c: &Circle) -> String {
        let area = round_to(c.area());
        let _kind = Kind::Square(2);
        format!("{area}")
    }
}

/// The total area of some circles,
/// rounded.
pub fn total(circles: &[Circle]) -> f64 {
    let sum: f64 = circles.iter().map(|c| c.radius_squared()).sum();
    util::round(sum + Circle::new(0.0).radius_squared())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_of_none() {
        let t = total(&[]);
        assert_eq!(t, 0.0);
    }
}
`,
  'src/shapes.rs': `use crate::util;

/// Something with an area.
pub trait Area: Named {
    /// The area, in square units.
    fn area(&self) -> f64;

    fn describe_area(&self) -> String {
        let name = self.name();
        format!("{name}: {}", self.area())
    }
}

pub trait Named {
    fn name(&self) -> String;
}

/// A circle.
#[derive(Debug, Clone)]
pub struct Circle {
    pub radius: f64,
}

pub enum Kind {
    Round,
    Square(u32),
}

impl Circle {
    /// Makes a circle.
    pub fn new(radius: f64) -> Self {
        Self::checked(radius)
    }

    fn checked(radius: f64) -> Self {
        Circle { radius: util::positive(radius) }
    }

    pub fn radius_squared(&self) -> f64 {
        util::square(self.radius)
    }
}

impl Area for Circle {
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.radius_squared()
    }
}

impl Named for Circle {
    fn name(&self) -> String {
        String::from("circle")
    }
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}
`,
  'src/util/mod.rs': `//! Small numeric helpers.

mod math;
pub use self::math::square;

pub fn positive(x: f64) -> f64 {
    if x < 0.0 { -x } else { x }
}

pub(crate) fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
`,
  'src/util/math.rs': `//! Copyright 2026 The Authors. MIT licence.

/// Multiplies a number by itself.
pub fn square(x: f64) -> f64 {
    x * x
}

pub fn cube(x: f64) -> f64 {
    square(x) * x
}
`,
  'src/broken.rs': `pub fn fine() {}

pub fn oops( {
`,
  'tests/circle.rs': `use circles::Circle;

mod common;

#[test]
fn circle_area() {
    let c = common::unit();
    let r = c.radius_squared();
    assert!(r > 0.0);
}
`,
  'tests/common/mod.rs': `use circles::Circle;

pub fn unit() -> Circle {
    Circle::new(1.0)
}

pub fn show(c: &Circle, f: &mut std::fmt::Formatter) -> std::fmt::Result {
    c.fmt(f)
}
`,
};

/** [id, type, startLine, endLine]: lines of the item's first token, not of its doc comment or attributes. */
const EXPECTED_NODES: Array<[string, string, number, number]> = [
  ['file::src/lib.rs', 'FILE', 1, 37],
  ['src/lib.rs::report', 'MODULE', 9, 19],
  ['src/lib.rs::report.describe', 'FUNCTION', 14, 18],
  ['src/lib.rs::total', 'FUNCTION', 23, 26],
  ['src/lib.rs::tests', 'MODULE', 29, 37],
  ['src/lib.rs::tests.total_of_none', 'FUNCTION', 33, 36],
  ['file::src/shapes.rs', 'FILE', 1, 60],
  ['src/shapes.rs::Area', 'TRAIT', 4, 12],
  ['src/shapes.rs::Area.area', 'METHOD', 6, 6],
  ['src/shapes.rs::Area.describe_area', 'METHOD', 8, 11],
  ['src/shapes.rs::Named', 'TRAIT', 14, 16],
  ['src/shapes.rs::Named.name', 'METHOD', 15, 15],
  ['src/shapes.rs::Circle', 'STRUCT', 20, 22],
  ['src/shapes.rs::Kind', 'ENUM', 24, 27],
  ['src/shapes.rs::impl Circle', 'IMPL_BLOCK', 29, 42],
  ['src/shapes.rs::Circle.new', 'METHOD', 31, 33],
  ['src/shapes.rs::Circle.checked', 'METHOD', 35, 37],
  ['src/shapes.rs::Circle.radius_squared', 'METHOD', 39, 41],
  ['src/shapes.rs::impl Area for Circle', 'IMPL_BLOCK', 44, 48],
  ['src/shapes.rs::Circle.area', 'METHOD', 45, 47],
  ['src/shapes.rs::impl Named for Circle', 'IMPL_BLOCK', 50, 54],
  ['src/shapes.rs::Circle.name', 'METHOD', 51, 53],
  ['src/shapes.rs::impl std::fmt::Display for Circle', 'IMPL_BLOCK', 56, 60],
  ['src/shapes.rs::Circle.fmt', 'METHOD', 57, 59],
  ['file::src/util/mod.rs', 'FILE', 1, 12],
  ['src/util/mod.rs::positive', 'FUNCTION', 6, 8],
  ['src/util/mod.rs::round', 'FUNCTION', 10, 12],
  ['file::src/util/math.rs', 'FILE', 1, 10],
  ['src/util/math.rs::square', 'FUNCTION', 4, 6],
  ['src/util/math.rs::cube', 'FUNCTION', 8, 10],
  ['file::tests/circle.rs', 'TEST', 1, 10],
  ['tests/circle.rs::circle_area', 'FUNCTION', 6, 10],
  ['file::tests/common/mod.rs', 'FILE', 1, 9],
  ['tests/common/mod.rs::unit', 'FUNCTION', 3, 5],
  ['tests/common/mod.rs::show', 'FUNCTION', 7, 9],
];

const EXPECTED_EDGES = [
  // `mod x;` → x.rs or x/mod.rs, from a crate root's folder or the declaring module's own.
  'IMPORTS file::src/lib.rs -> file::src/shapes.rs',
  'IMPORTS file::src/lib.rs -> file::src/util/mod.rs',
  'IMPORTS file::src/util/mod.rs -> file::src/util/math.rs',
  'IMPORTS file::tests/circle.rs -> file::tests/common/mod.rs',
  // `use` of another file's items (`use crate::util`; `circles::` is the crate's Cargo.toml name).
  'IMPORTS file::src/shapes.rs -> file::src/util/mod.rs',
  'IMPORTS file::tests/circle.rs -> file::src/shapes.rs',
  'IMPORTS file::tests/common/mod.rs -> file::src/shapes.rs',
  'IMPLEMENTS src/shapes.rs::Circle -> src/shapes.rs::Area',
  'IMPLEMENTS src/shapes.rs::Circle -> src/shapes.rs::Named',
  'EXTENDS src/shapes.rs::Area -> src/shapes.rs::Named',
  'CALLS src/lib.rs::report.describe -> src/util/mod.rs::round', // `super::util::round as round_to`
  'CALLS src/lib.rs::total -> src/shapes.rs::Circle.radius_squared', // the one method of that name
  'CALLS src/lib.rs::total -> src/util/mod.rs::round',
  'CALLS src/lib.rs::total -> src/shapes.rs::Circle.new', // through the re-export `pub use shapes::Circle`
  'CALLS src/lib.rs::tests.total_of_none -> src/lib.rs::total', // `use super::*`
  'CALLS src/shapes.rs::Area.describe_area -> src/shapes.rs::Named.name', // self., on the supertrait
  'CALLS src/shapes.rs::Circle.new -> src/shapes.rs::Circle.checked', // Self::
  'CALLS src/shapes.rs::Circle.checked -> src/util/mod.rs::positive',
  'CALLS src/shapes.rs::Circle.radius_squared -> src/util/math.rs::square', // re-exported by `pub use self::math::square`
  'CALLS src/shapes.rs::Circle.area -> src/shapes.rs::Circle.radius_squared', // self., another impl block
  'CALLS src/shapes.rs::Circle.fmt -> src/shapes.rs::Circle.name',
  'CALLS src/util/math.rs::cube -> src/util/math.rs::square',
  'CALLS tests/circle.rs::circle_area -> tests/common/mod.rs::unit',
  'CALLS tests/circle.rs::circle_area -> src/shapes.rs::Circle.radius_squared',
  'CALLS tests/common/mod.rs::unit -> src/shapes.rs::Circle.new',
  // Not edges: `c.area()` (Area.area and Circle.area share the name), `Kind::Square(2)` (a variant),
  // `String::from`, `circles.iter()`, `c.fmt(f)` (the one `fmt` of the repository, but a method of
  // std's Display, which any type may have), and calls inside macros (`format!("…", self.area())`).
];

const newDir = tempDirs('rust');

async function writeFixture(files: Record<string, string> = FIXTURE): Promise<string> {
  const dir = await newDir();
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const nodeLines = (commit: CommitFile) => commit.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]);
const edgeLines = (commit: CommitFile) => commit.edges.map((e) => `${e.type} ${e.from} -> ${e.to}`);
const byId = (commit: CommitFile) => new Map(commit.nodes.map((n) => [n.id, n]));

describe('analyzer: a Rust crate', once, () => {
  test('every node with its exact id, type and lines; the file with a syntax error skipped, with its line', async () => {
    const commit = await analyzeRepository(await writeFixture());
    assert.deepEqual(nodeLines(commit).sort(), [...EXPECTED_NODES].sort());
    assert.deepEqual(commit.stats.skippedFiles, [
      { filePath: 'src/broken.rs', reason: 'syntax error at line 3, column 1' },
    ]);
    assert.equal(commit.stats.files.rust, 7);
    assert.equal(commit.stats.files.total, 7);
  });

  test('every edge: mod and use imports, calls through use paths, Self:: and self., impls and supertraits', async () => {
    const commit = await analyzeRepository(await writeFixture());
    assert.deepEqual(edgeLines(commit).sort(), [...EXPECTED_EDGES].sort());
  });

  test('/// and //! become technicalSummary, flagged as such; a licence header and plain comments do not', async () => {
    const nodes = byId(await analyzeRepository(await writeFixture()));
    const summaries = [...nodes.values()].flatMap((n) =>
      n.technicalSummary ? [[n.id, n.technicalSummary, n.metadata.summarySource]] : [],
    );
    assert.deepEqual(
      summaries.sort(),
      [
        ['file::src/lib.rs', 'Circles and their areas.', 'doc-comment'],
        ['src/lib.rs::report', 'Reports over shapes.', 'doc-comment'],
        ['src/lib.rs::report.describe', "Describes a circle's area.", 'doc-comment'],
        ['src/lib.rs::total', 'The total area of some circles,\nrounded.', 'doc-comment'],
        ['src/shapes.rs::Area', 'Something with an area.', 'doc-comment'],
        ['src/shapes.rs::Area.area', 'The area, in square units.', 'doc-comment'],
        ['src/shapes.rs::Circle', 'A circle.', 'doc-comment'], // above #[derive(…)]
        ['src/shapes.rs::Circle.new', 'Makes a circle.', 'doc-comment'],
        ['file::src/util/mod.rs', 'Small numeric helpers.', 'doc-comment'],
        ['src/util/math.rs::square', 'Multiplies a number by itself.', 'doc-comment'],
      ].sort(),
    );
  });

  test('code and metadata: signature, visibility, kinds, tests', async () => {
    const commit = await analyzeRepository(await writeFixture());
    const node = (id: string) => byId(commit).get(id)!;
    assert.equal(node('src/util/math.rs::square').rawCode, 'pub fn square(x: f64) -> f64 {\n    x * x\n}');
    assert.equal(node('src/util/math.rs::square').parentFile, 'file::src/util/math.rs');
    assert.deepEqual(node('src/shapes.rs::Circle.new').metadata, {
      language: 'rust',
      signature: 'pub fn new(radius: f64) -> Self',
      visibility: 'pub',
      params: ['radius'],
      isAsync: false,
      typeName: 'Circle',
      isStatic: true,
      summarySource: 'doc-comment',
    });
    assert.deepEqual(node('src/shapes.rs::Area.area').metadata, {
      language: 'rust',
      signature: 'fn area(&self) -> f64',
      visibility: 'private',
      params: ['self'],
      isAsync: false,
      traitName: 'Area',
      isStatic: false,
      isAbstract: true,
      summarySource: 'doc-comment',
    });
    assert.equal(node('src/util/mod.rs::round').metadata.visibility, 'pub(crate)');
    assert.deepEqual(node('src/shapes.rs::impl Area for Circle').metadata, {
      language: 'rust',
      typeName: 'Circle',
      traitName: 'Area',
    });
    assert.deepEqual(node('src/shapes.rs::Circle').metadata, {
      language: 'rust',
      visibility: 'pub',
      kind: 'struct',
      summarySource: 'doc-comment',
    });
    assert.deepEqual(node('src/shapes.rs::Kind').metadata.variants, ['Round', 'Square']);
    assert.deepEqual(node('src/shapes.rs::Area').metadata.supertraits, ['Named']);
    assert.equal(node('src/lib.rs::tests.total_of_none').metadata.isTest, true);
    assert.deepEqual(node('file::tests/circle.rs').metadata, { language: 'rust', testCases: ['circle_area'] });

    const edge = (line: string) => commit.edges.find((e) => `${e.type} ${e.from} -> ${e.to}` === line)!;
    assert.deepEqual(edge('CALLS src/lib.rs::report.describe -> src/util/mod.rs::round').metadata, {
      calledName: 'round_to',
    });
    assert.deepEqual(edge('IMPORTS file::src/lib.rs -> file::src/shapes.rs').metadata, { importPath: 'mod shapes' });
    assert.deepEqual(edge('IMPORTS file::tests/circle.rs -> file::src/shapes.rs').metadata, {
      importPath: 'circles::Circle',
    });
  });

  test('progress is reported per file through parsing and resolving', async () => {
    const seen: string[] = [];
    await analyzeRepository(await writeFixture(), {
      onProgress: (p) => seen.push(`${p.phase} ${p.filesDone}/${p.filesTotal}`),
    });
    assert.ok(seen.includes('parsing 7/7'));
    assert.ok(seen.includes('resolving 6/7'), 'the file with the syntax error is not resolved');
    assert.equal(seen[seen.length - 1], 'done 7/7');
  });
});

describe('analyzer: hostile Rust', once, () => {
  test('deep nesting and cycles of glob imports take bounded work', { timeout: 60_000 }, async () => {
    const glued = Array.from({ length: 40 }, (_, i) => {
      const globs = Array.from({ length: 40 }, (_, j) => `use super::m${j}::*;`).join(' ');
      return `mod m${i} { use super::*; ${globs} pub fn g${i}() { missing(); g${(i + 1) % 40}(); } }`;
    });
    const repo = await writeFixture({
      // 5,000 nested inline modules: the first 64 levels are read.
      'src/lib.rs': `${'mod a { '.repeat(5000)}fn f() { f() }${' }'.repeat(5000)}\nmod glued;\nmod deep;\n`,
      // Forty modules each gluing all the others with globs, and a name none of them has.
      'src/glued.rs': `${glued.join('\n')}\n`,
      'src/deep.rs': `fn f() { ${'('.repeat(20_000)}g()${')'.repeat(20_000)}; }\nfn g() {}\n`,
    });
    const commit = await analyzeRepository(repo);
    const types = commit.stats.nodeTypes;
    assert.deepEqual(types, { FILE: 3, MODULE: 64 + 40, FUNCTION: 40 + 2 });
    const calls = edgeLines(commit).filter((e) => e.startsWith('CALLS'));
    assert.equal(calls.length, 41, 'each g_i calls g_i+1 through the globs; f calls g; missing() resolves to nothing');
    assert.ok(calls.includes('CALLS src/glued.rs::m0.g0 -> src/glued.rs::m1.g1'));
    assert.ok(calls.includes('CALLS src/deep.rs::f -> src/deep.rs::g'));
  });
});

/** `devstream-hub <args>` in this checkout. */
const cli = (args: string[]) => runCli(args, {});

describe('devstream-hub analyze on a Rust crate', () => {
  test('the CLI writes the exact nodes and edges to --out', once, async () => {
    const repo = await writeFixture();
    const out = join(repo, 'graph.json');
    const run = await cli(['analyze', repo, '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    const written = JSON.parse(await readFile(out, 'utf8')) as CommitFile;
    assert.deepEqual(nodeLines(written).sort(), [...EXPECTED_NODES].sort());
    assert.deepEqual(edgeLines(written).sort(), [...EXPECTED_EDGES].sort());
    assert.match(
      run.stderr,
      new RegExp(
        `Analyzed 7 files \\(0 TypeScript, 0 JavaScript, 0 Python, 7 Rust\\) in [\\d.]+ s: ${EXPECTED_NODES.length} nodes, ${EXPECTED_EDGES.length} edges`,
      ),
    );
  });

  for (const backend of backends) {
    test(`--upload: the server stores the graph and the DevLens tools answer from it (${backend.name})`, async () => {
      const repo = await writeFixture();
      const database = await backend.open();
      const server = await startServer(database);
      try {
        const code = await analyzeCommand([
          repo,
          '--upload',
          server.url,
          '--repo',
          'circles',
          '--branch',
          'main',
          '--quiet',
        ]);
        assert.equal(code, 0);
        const graphs = await rest(server.url, 'GET', '/api/v1/graphs');
        assert.deepEqual(
          graphs.body.graphs.map((g: { repo: string }) => g.repo),
          ['circles'],
        );
        // Found by the words of its doc comment alone.
        const byDoc = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'multiplies itself',
          repo: 'circles',
        });
        assert.equal(byDoc.status, 200, JSON.stringify(byDoc.body));
        assert.equal(byDoc.body.symbols[0].nodeId, 'src/util/math.rs::square');
        const node = await rest(server.url, 'POST', '/api/v1/tools/get_node', {
          node: 'src/shapes.rs::Circle.new',
          repo: 'circles',
        });
        assert.equal(node.status, 200, JSON.stringify(node.body));
        assert.equal(node.body.node.startLine, 31);
        assert.deepEqual(node.body.callers.map((c: { nodeId: string }) => c.nodeId).sort(), [
          'src/lib.rs::total',
          'tests/common/mod.rs::unit',
        ]);
        assert.deepEqual(
          node.body.callees.map((c: { nodeId: string }) => c.nodeId),
          ['src/shapes.rs::Circle.checked'],
        );
      } finally {
        await server.close();
        await database.dispose();
      }
    });
  }
});
