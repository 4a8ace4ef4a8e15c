import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { analyzeRepository } from '../src/analyzer/analyze-repository.js';
import type { CommitFile } from '../src/commit-file.js';
import { analyzeCommand } from '../src/commands/analyze.js';
import { backends, once } from './helpers/backends.js';
import { rest, startServer } from './helpers/server.js';
import { runCli } from './helpers/service.js';

const MAIN = 'src/main/java/com/acme';

/**
 * The Java fixture (issue 25): three packages; a single-type, a `*` and a static import, and a
 * class used from its own package without one; an interface extending another, an abstract class
 * implementing it, a subclass calling `super(…)` and `super.m()`; a nested class, an enum and a
 * record with a compact constructor; an overload; an anonymous class; Javadoc; a JUnit test file;
 * a file with a syntax error. File path → content.
 */
const FIXTURE: Record<string, string> = {
  [`${MAIN}/geo/Named.java`]: `package com.acme.geo;

/** A thing with a name. */
public interface Named {
  String name();
}
`,
  [`${MAIN}/geo/Shape.java`]: `package com.acme.geo;

/**
 * Something with an area.
 *
 * @see Named
 */
public interface Shape extends Named {
  double area();

  default String describe() {
    return name() + " of area " + area();
  }
}
`,
  [`${MAIN}/geo/Figure.java`]: `package com.acme.geo;

import com.acme.util.MathUtil;

/** The base of every figure. */
public abstract class Figure implements Shape {
  protected final Point origin;

  protected Figure(Point origin) {
    this.origin = origin;
  }

  /**
   * Moves the figure along x.
   * @param dx how far
   */
  @Deprecated
  public Point moved(double dx) {
    return origin.shift(MathUtil.square(dx));
  }

  /** A point on the plane. */
  public static final class Point {
    final double x;

    public Point(double x) {
      this.x = x;
    }

    Point shift(double dx) {
      return new Point(x + dx);
    }
  }
}
`,
  [`${MAIN}/geo/Circle.java`]: `package com.acme.geo;

import static com.acme.util.MathUtil.square;

public class Circle extends Figure {
  private final double radius;

  public Circle(Point origin, double radius) {
    super(origin);
    this.radius = radius;
  }

  @Override
  public double area() {
    return Math.PI * square(radius);
  }

  @Override
  public String name() {
    return "circle";
  }

  @Override
  public String describe() {
    return "round " + super.describe();
  }
}
`,
  [`${MAIN}/util/MathUtil.java`]: `package com.acme.util;

/** Small numeric helpers. */
public final class MathUtil {
  private MathUtil() {}

  /** Multiplies a number by itself. */
  public static double square(double x) {
    return x * x;
  }

  public static int square(int x) {
    return x * x;
  }

  public static double sum(double... xs) {
    double total = 0;
    for (double x : xs) total += x;
    return round(total);
  }

  static double round(double x) {
    return Math.round(x);
  }
}
`,
  [`${MAIN}/app/Main.java`]: `package com.acme.app;

import com.acme.geo.*;
import com.acme.util.MathUtil;
import java.util.List;

public class Main {
  private final Report report = new Report();

  public static void main(String[] args) {
    new Main().run(List.of(args));
  }

  void run(List<String> names) {
    Shape shape = new Circle(null, 2);
    Figure.Point p = new Figure.Point(1);
    report.print(shape.describe());
    System.out.println(MathUtil.sum(shape.area(), p.shift(1).x));
    Runnable later = new Runnable() {
      public void run() {
        helper();
      }
    };
    unknown(names);
  }

  void helper() {}
}
`,
  [`${MAIN}/app/Report.java`]: `package com.acme.app;

/** Prints report lines. */
class Report {
  enum Level {
    INFO,
    WARN;

    String tag() {
      return name().toLowerCase();
    }
  }

  record Line(Level level, String text) {
    Line {
      check(text);
    }

    static void check(String text) {}

    String render() {
      return level.tag() + text;
    }
  }

  void print(String text) {
    Line line = new Line(Level.INFO, text);
    System.out.println(line.render());
  }
}
`,
  [`${MAIN}/app/Broken.java`]: `package com.acme.app;

public class Broken {
  void f( {
}
`,
  'src/test/java/com/acme/geo/CircleTest.java': `package com.acme.geo;

import org.junit.jupiter.api.Test;

class CircleTest {
  @Test
  void areaOfUnitCircle() {
    Circle c = new Circle(null, 1);
    assert c.area() > 3;
  }
}
`,
};

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function writeFixture(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-analyzer-java-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(FIXTURE)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const G = `${MAIN}/geo`;
const A = `${MAIN}/app`;
const U = `${MAIN}/util`;
const T = 'src/test/java/com/acme/geo';

/** [id, type, startLine, endLine]: lines from the declaration's first token (annotations in, Javadoc out). */
const EXPECTED_NODES: Array<[string, string, number, number]> = [
  [`file::${A}/Main.java`, 'FILE', 1, 28],
  [`${A}/Main.java::Main`, 'CLASS', 7, 28],
  [`${A}/Main.java::Main.main`, 'METHOD', 10, 12],
  [`${A}/Main.java::Main.run`, 'METHOD', 14, 25],
  [`${A}/Main.java::Main.helper`, 'METHOD', 27, 27],
  [`file::${A}/Report.java`, 'FILE', 1, 30],
  [`${A}/Report.java::Report`, 'CLASS', 4, 30],
  [`${A}/Report.java::Report.Level`, 'ENUM', 5, 12],
  [`${A}/Report.java::Report.Level.tag`, 'METHOD', 9, 11],
  [`${A}/Report.java::Report.Line`, 'CLASS', 14, 24], // a record
  [`${A}/Report.java::Report.Line.Line`, 'METHOD', 15, 17], // its compact constructor
  [`${A}/Report.java::Report.Line.check`, 'METHOD', 19, 19],
  [`${A}/Report.java::Report.Line.render`, 'METHOD', 21, 23],
  [`${A}/Report.java::Report.print`, 'METHOD', 26, 29],
  [`file::${G}/Circle.java`, 'FILE', 1, 27],
  [`${G}/Circle.java::Circle`, 'CLASS', 5, 27],
  [`${G}/Circle.java::Circle.Circle`, 'METHOD', 8, 11],
  [`${G}/Circle.java::Circle.area`, 'METHOD', 13, 16],
  [`${G}/Circle.java::Circle.name`, 'METHOD', 18, 21],
  [`${G}/Circle.java::Circle.describe`, 'METHOD', 23, 26],
  [`file::${G}/Figure.java`, 'FILE', 1, 34],
  [`${G}/Figure.java::Figure`, 'CLASS', 6, 34],
  [`${G}/Figure.java::Figure.Figure`, 'METHOD', 9, 11],
  [`${G}/Figure.java::Figure.moved`, 'METHOD', 17, 20], // from @Deprecated, after its Javadoc
  [`${G}/Figure.java::Figure.Point`, 'CLASS', 23, 33],
  [`${G}/Figure.java::Figure.Point.Point`, 'METHOD', 26, 28],
  [`${G}/Figure.java::Figure.Point.shift`, 'METHOD', 30, 32],
  [`file::${G}/Named.java`, 'FILE', 1, 6],
  [`${G}/Named.java::Named`, 'INTERFACE', 4, 6],
  [`${G}/Named.java::Named.name`, 'METHOD', 5, 5],
  [`file::${G}/Shape.java`, 'FILE', 1, 14],
  [`${G}/Shape.java::Shape`, 'INTERFACE', 8, 14],
  [`${G}/Shape.java::Shape.area`, 'METHOD', 9, 9],
  [`${G}/Shape.java::Shape.describe`, 'METHOD', 11, 13],
  [`file::${U}/MathUtil.java`, 'FILE', 1, 25],
  [`${U}/MathUtil.java::MathUtil`, 'CLASS', 4, 25],
  [`${U}/MathUtil.java::MathUtil.MathUtil`, 'METHOD', 5, 5],
  [`${U}/MathUtil.java::MathUtil.square`, 'METHOD', 8, 10], // the first of its two overloads
  [`${U}/MathUtil.java::MathUtil.sum`, 'METHOD', 16, 20],
  [`${U}/MathUtil.java::MathUtil.round`, 'METHOD', 22, 24],
  [`file::${T}/CircleTest.java`, 'TEST', 1, 11],
  [`${T}/CircleTest.java::CircleTest`, 'CLASS', 5, 11],
  [`${T}/CircleTest.java::CircleTest.areaOfUnitCircle`, 'METHOD', 6, 10],
];

const EXPECTED_EDGES = [
  `IMPORTS file::${A}/Main.java -> file::${U}/MathUtil.java`, // import a.b.C
  `IMPORTS file::${A}/Main.java -> file::${A}/Report.java`, // its own package, no import
  `IMPORTS file::${A}/Main.java -> file::${G}/Shape.java`, // the types it uses through import a.b.*
  `IMPORTS file::${A}/Main.java -> file::${G}/Circle.java`,
  `IMPORTS file::${A}/Main.java -> file::${G}/Figure.java`,
  `CALLS ${A}/Main.java::Main -> ${A}/Report.java::Report`, // a field's initializer; no constructor: the class
  `CALLS ${A}/Main.java::Main.main -> ${A}/Main.java::Main`,
  `CALLS ${A}/Main.java::Main.run -> ${G}/Circle.java::Circle.Circle`,
  `CALLS ${A}/Main.java::Main.run -> ${G}/Figure.java::Figure.Point.Point`, // new Outer.Inner(…)
  `CALLS ${A}/Main.java::Main.run -> ${A}/Report.java::Report.print`, // on a field
  `CALLS ${A}/Main.java::Main.run -> ${G}/Shape.java::Shape.describe`, // on a local
  `CALLS ${A}/Main.java::Main.run -> ${U}/MathUtil.java::MathUtil.sum`, // static
  `CALLS ${A}/Main.java::Main.run -> ${G}/Shape.java::Shape.area`,
  `CALLS ${A}/Main.java::Main.run -> ${G}/Figure.java::Figure.Point.shift`,
  `CALLS ${A}/Report.java::Report.Line.Line -> ${A}/Report.java::Report.Line.check`,
  `CALLS ${A}/Report.java::Report.Line.render -> ${A}/Report.java::Report.Level.tag`, // on a record component
  `CALLS ${A}/Report.java::Report.print -> ${A}/Report.java::Report.Line.Line`,
  `CALLS ${A}/Report.java::Report.print -> ${A}/Report.java::Report.Line.render`,
  `IMPORTS file::${G}/Circle.java -> file::${U}/MathUtil.java`, // import static
  `IMPORTS file::${G}/Circle.java -> file::${G}/Figure.java`,
  `EXTENDS ${G}/Circle.java::Circle -> ${G}/Figure.java::Figure`,
  `CALLS ${G}/Circle.java::Circle.Circle -> ${G}/Figure.java::Figure.Figure`, // super(…)
  `CALLS ${G}/Circle.java::Circle.area -> ${U}/MathUtil.java::MathUtil.square`, // a static import
  `CALLS ${G}/Circle.java::Circle.describe -> ${G}/Shape.java::Shape.describe`, // super.m(): a default method
  `IMPORTS file::${G}/Figure.java -> file::${U}/MathUtil.java`,
  `IMPORTS file::${G}/Figure.java -> file::${G}/Shape.java`,
  `IMPLEMENTS ${G}/Figure.java::Figure -> ${G}/Shape.java::Shape`,
  `CALLS ${G}/Figure.java::Figure.moved -> ${G}/Figure.java::Figure.Point.shift`,
  `CALLS ${G}/Figure.java::Figure.moved -> ${U}/MathUtil.java::MathUtil.square`,
  `CALLS ${G}/Figure.java::Figure.Point.shift -> ${G}/Figure.java::Figure.Point.Point`,
  `IMPORTS file::${G}/Shape.java -> file::${G}/Named.java`,
  `EXTENDS ${G}/Shape.java::Shape -> ${G}/Named.java::Named`, // an interface's extends
  `CALLS ${G}/Shape.java::Shape.describe -> ${G}/Named.java::Named.name`, // inherited
  `CALLS ${G}/Shape.java::Shape.describe -> ${G}/Shape.java::Shape.area`,
  `CALLS ${U}/MathUtil.java::MathUtil.sum -> ${U}/MathUtil.java::MathUtil.round`,
  `IMPORTS file::${T}/CircleTest.java -> file::${G}/Circle.java`,
  `CALLS ${T}/CircleTest.java::CircleTest.areaOfUnitCircle -> ${G}/Circle.java::Circle.Circle`,
  `CALLS ${T}/CircleTest.java::CircleTest.areaOfUnitCircle -> ${G}/Circle.java::Circle.area`,
  `TESTS file::${T}/CircleTest.java -> ${G}/Circle.java::Circle`,
];

const byId = (commit: CommitFile) => new Map(commit.nodes.map((n) => [n.id, n]));
const edgeLines = (commit: CommitFile) => commit.edges.map((e) => `${e.type} ${e.from} -> ${e.to}`);

describe('analyzer: Java', once, () => {
  let commit: CommitFile;
  let progress: string[];
  before(async () => {
    progress = [];
    commit = await analyzeRepository(await writeFixture(), {
      onProgress: (p) => progress.push(`${p.phase} ${p.filesDone}/${p.filesTotal}`),
    });
  });

  test('every node with its exact id, type and lines; the file with a syntax error skipped, with its line', () => {
    assert.deepEqual(
      commit.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]),
      EXPECTED_NODES,
    );
    assert.deepEqual(commit.stats.files, {
      total: 9,
      typescript: 0,
      javascript: 0,
      python: 0,
      go: 0,
      rust: 0,
      java: 9,
    });
    assert.deepEqual(commit.stats.skippedFiles, [
      { filePath: `${A}/Broken.java`, reason: 'Java syntax error at line 4' },
    ]);
  });

  test('every edge: imports by package, the hierarchy, calls in a type, static, new, super and on typed variables', () => {
    // Not there: helper() in an anonymous class, unknown(), List.of, System.out.println, name() of an enum.
    assert.deepEqual(edgeLines(commit), EXPECTED_EDGES);
  });

  test('Javadoc becomes technicalSummary, stars off and tags kept; none is invented', () => {
    const nodes = byId(commit);
    const summary = (id: string) => nodes.get(id)!.technicalSummary;
    assert.equal(summary(`${G}/Shape.java::Shape`), 'Something with an area.\n\n@see Named');
    assert.equal(summary(`${G}/Figure.java::Figure.moved`), 'Moves the figure along x.\n@param dx how far');
    assert.equal(summary(`${G}/Figure.java::Figure.Point`), 'A point on the plane.');
    assert.equal(summary(`${U}/MathUtil.java::MathUtil.square`), 'Multiplies a number by itself.');
    assert.equal(nodes.get(`${G}/Figure.java::Figure`)!.metadata.summarySource, 'doc-comment');
    const documented = commit.nodes.filter((n) => n.technicalSummary).map((n) => n.name);
    assert.deepEqual(documented, [
      'Report',
      'Figure',
      'Figure.moved',
      'Figure.Point',
      'Named',
      'Shape',
      'MathUtil',
      'MathUtil.square',
    ]);
    assert.ok(commit.nodes.filter((n) => !n.technicalSummary).every((n) => n.metadata.summarySource === undefined));
  });

  test('code and metadata: kinds, signatures, visibility, hierarchy, test cases', () => {
    const node = (id: string) => byId(commit).get(id)!;
    const moved = node(`${G}/Figure.java::Figure.moved`);
    // From the declaration's first token (the file's indentation before it is not the node's).
    assert.equal(moved.rawCode, FIXTURE[`${G}/Figure.java`]!.split('\n').slice(16, 20).join('\n').trimStart());
    assert.equal(moved.parentFile, `file::${G}/Figure.java`);
    assert.deepEqual(moved.metadata, {
      language: 'java',
      className: 'Figure',
      signature: 'public Point moved(double dx)',
      params: ['dx'],
      returnType: 'Point',
      visibility: 'public',
      modifiers: ['public'],
      annotations: ['Deprecated'],
      isStatic: false,
      isAbstract: false,
      isConstructor: false,
      summarySource: 'doc-comment',
    });
    assert.deepEqual(node(`${G}/Figure.java::Figure`).metadata, {
      language: 'java',
      kind: 'class',
      visibility: 'public',
      modifiers: ['public', 'abstract'],
      annotations: [],
      implements: ['Shape'],
      isAbstract: true,
      methodNames: ['Figure', 'moved'],
      summarySource: 'doc-comment',
    });
    assert.equal(node(`${A}/Report.java::Report.Line`).metadata.kind, 'record');
    assert.equal(node(`${A}/Report.java::Report.Line`).metadata.outerClass, 'Report');
    assert.deepEqual(
      node(`${G}/Shape.java::Shape`).metadata.extends,
      ['Shape'].map(() => 'Named'),
    );
    assert.equal(node(`${G}/Shape.java::Shape.area`).metadata.isAbstract, true);
    assert.equal(node(`${G}/Shape.java::Shape.area`).metadata.visibility, 'public');
    assert.equal(node(`${U}/MathUtil.java::MathUtil.sum`).metadata.signature, 'public static double sum(double... xs)');
    assert.equal(node(`${A}/Report.java::Report.Line.Line`).metadata.isConstructor, true);
    assert.equal(node(`${A}/Report.java::Report`).metadata.visibility, 'package');
    assert.deepEqual(node(`file::${T}/CircleTest.java`).metadata.testCases, ['CircleTest.areaOfUnitCircle']);
  });

  test('progress is reported per file through parsing and resolving (the skipped file is parsed, not resolved)', () => {
    assert.deepEqual(progress, [
      'listing 0/0',
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `parsing ${n}/9`),
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => `resolving ${n}/9`),
      'done 9/9',
    ]);
  });
});

describe('analyzer: Java on hostile input', once, () => {
  test('a cycle of extends, nesting deeper than the stack and a 200,000-line Javadoc: bounded, the deep file skipped whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-analyzer-java-hostile-'));
    dirs.push(dir);
    const depth = 50_000;
    await writeFile(
      join(dir, 'Cycle.java'),
      'interface I extends J, K {} interface J extends I, K {} interface K extends I, J { void m(); }\n' +
        'class A extends B implements I { void f() { m(); this.q(); super.q(); new A(); } }\n' +
        'class B extends A { B() { super(); } }\n',
    );
    await writeFile(
      join(dir, 'Deep.java'),
      `class Deep { int f() { return ${'('.repeat(depth)}1${')'.repeat(depth)}; } }\n`,
    );
    await writeFile(join(dir, 'Doc.java'), `/**\n${' * x\n'.repeat(200_000)} */\nclass Doc {}\n`);
    const started = performance.now();
    const commit = await analyzeRepository(dir);
    assert.ok(performance.now() - started < 20_000, 'bounded');
    assert.deepEqual(
      commit.nodes.map((n) => n.id),
      [
        'file::Cycle.java',
        'Cycle.java::I',
        'Cycle.java::J',
        'Cycle.java::K',
        'Cycle.java::K.m',
        'Cycle.java::A',
        'Cycle.java::A.f',
        'Cycle.java::B',
        'Cycle.java::B.B',
        'file::Doc.java',
        'Doc.java::Doc',
      ],
    );
    assert.deepEqual(edgeLines(commit), [
      'EXTENDS Cycle.java::I -> Cycle.java::J',
      'EXTENDS Cycle.java::I -> Cycle.java::K',
      'EXTENDS Cycle.java::J -> Cycle.java::I',
      'EXTENDS Cycle.java::J -> Cycle.java::K',
      'EXTENDS Cycle.java::K -> Cycle.java::I',
      'EXTENDS Cycle.java::K -> Cycle.java::J',
      'EXTENDS Cycle.java::A -> Cycle.java::B',
      'IMPLEMENTS Cycle.java::A -> Cycle.java::I',
      'EXTENDS Cycle.java::B -> Cycle.java::A',
      'CALLS Cycle.java::A.f -> Cycle.java::K.m', // found once, through the cycle
      'CALLS Cycle.java::A.f -> Cycle.java::A',
      'CALLS Cycle.java::B.B -> Cycle.java::A',
    ]);
    assert.deepEqual(commit.stats.skippedFiles, [{ filePath: 'Deep.java', reason: 'nested too deeply to read' }]);
    assert.equal(byId(commit).get('Doc.java::Doc')!.technicalSummary!.length, 4000);
  });
});

/** `devstream-hub <args>` in this checkout. */
const cli = (args: string[]) => runCli(args, {});

describe('devstream-hub analyze on Java (the command)', () => {
  test('main.ts writes the commit file with --out', once, async () => {
    const repo = await writeFixture();
    const out = join(repo, 'graph.json');
    const run = await cli(['analyze', repo, '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    const written = JSON.parse(await readFile(out, 'utf8')) as CommitFile;
    assert.deepEqual(
      written.nodes.map((n) => [n.id, n.type, n.startLine, n.endLine]),
      EXPECTED_NODES,
    );
    assert.deepEqual(edgeLines(written), EXPECTED_EDGES);
    assert.match(run.stderr, /Analyzed 9 files .* in [\d.]+ s: 43 nodes, 39 edges, commit [0-9a-f]{40}/);
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
          'java-fixture',
          '--branch',
          'main',
          '--quiet',
        ]);
        assert.equal(code, 0);
        const byDoc = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'multiplies a number by itself',
          repo: 'java-fixture',
        });
        assert.equal(byDoc.status, 200, JSON.stringify(byDoc.body));
        assert.equal(byDoc.body.symbols[0].nodeId, `${U}/MathUtil.java::MathUtil.square`);
        const byName = await rest(server.url, 'POST', '/api/v1/tools/find_symbols', {
          query: 'Figure.Point.shift',
          repo: 'java-fixture',
        });
        assert.deepEqual(
          {
            nodeId: byName.body.symbols[0].nodeId,
            startLine: byName.body.symbols[0].startLine,
            exactMatch: byName.body.symbols[0].exactMatch,
          },
          { nodeId: `${G}/Figure.java::Figure.Point.shift`, startLine: 30, exactMatch: true },
        );
        const context = await rest(server.url, 'POST', '/api/v1/tools/resolve_context', {
          task: 'Circle.describe',
          intent: 'pinpoint',
          repo: 'java-fixture',
        });
        assert.equal(context.status, 200, JSON.stringify(context.body));
        assert.match(context.body.packet, /^ANSWER Circle\.describe .*Circle\.java:23$/m);
      } finally {
        await server.close();
        await database.dispose();
      }
    });
  }
});
