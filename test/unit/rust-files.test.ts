import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crateName } from '../../src/analyzer/rust/cargo-crates.js';
import { fileKind, isTestFile } from '../../src/file-kind.js';

describe('Rust files by path and manifest (issue 25)', () => {
  test('a file directly in a tests/ folder is a test crate; its helpers and src/ files are not test files', () => {
    const cases: Array<[string, boolean]> = [
      ['tests/walk.rs', true],
      ['crates/core/tests/api.rs', true],
      ['tests/common/mod.rs', false], // a helper module the test crates share
      ['src/tests.rs', false], // a `mod tests;` of the library
      ['src/lib.rs', false],
      ['src/contests/x.rs', false],
    ];
    assert.deepEqual(
      cases.map(([path]) => [path, isTestFile(path)]),
      cases,
    );
    assert.equal(fileKind('FUNCTION', 'tests/common/mod.rs'), 'test', 'still test code, ranked down');
  });

  test('the crate name: [lib] name, else [package] name, with - as _; other sections ignored', () => {
    assert.equal(crateName('[package]\nname = "walk-dir"\nversion = "1.0.0"\n'), 'walk_dir');
    assert.equal(crateName('[package]\nname=\'a\'\n[lib]\nname = "b"\n'), 'b');
    assert.equal(crateName('[dependencies]\nname = "x"\n[workspace]\nmembers = ["a"]\n'), undefined);
    assert.equal(crateName('[package]\nnamespace = "x"\nname = "y"\n'), 'y');
  });
});
