import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { modulePath } from '../../src/analyzer/go/go-modules.js';
import { fileKind, isTestFile } from '../../src/file-kind.js';

describe('Go files (issue 25)', () => {
  test('`*_test.go` files are test files (TEST nodes); other Go files are not', () => {
    for (const path of ['a_test.go', 'pkg/x/a_test.go'])
      assert.deepEqual([path, isTestFile(path), fileKind('FUNCTION', path)], [path, true, 'test']);
    for (const path of ['a.go', 'pkg/testing.go', 'pkg/a_test.go.txt', 'pkg/atest.go'])
      assert.equal(isTestFile(path), false, path);
  });

  test("go.mod's module path: bare, quoted, with a comment; none when absent", () => {
    assert.equal(modulePath('module example.com/m\n\ngo 1.22\n'), 'example.com/m');
    assert.equal(modulePath('// header\nmodule "example.com/q" // quoted\n'), 'example.com/q');
    assert.equal(modulePath('\tmodule\texample.com/t\r\n'), 'example.com/t');
    assert.equal(modulePath('modules x\ngo 1.22\n'), undefined);
    assert.equal(modulePath('go 1.22\n'), undefined);
  });
});
