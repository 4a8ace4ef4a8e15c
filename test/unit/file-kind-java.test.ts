import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileKind, isTestFile } from '../../src/file-kind.js';

test("isTestFile: Java's test files by Maven/Gradle's folder and JUnit's names (issue 25)", () => {
  for (const path of [
    'src/test/java/com/acme/CircleTest.java',
    'src/test/java/com/acme/support/Fixtures.java',
    'lib/src/test/java/Helpers.java',
  ])
    assert.deepEqual([path, isTestFile(path), fileKind('CLASS', path)], [path, true, 'test']);
  // By name alone: TEST nodes; their symbols rank as test code only in a test folder (fileKind reads paths lower-cased).
  for (const path of ['src/main/java/com/acme/CircleTest.java', 'CircleTests.java'])
    assert.deepEqual([path, isTestFile(path), fileKind('TEST', path)], [path, true, 'test']);
  for (const path of [
    'src/main/java/com/acme/Circle.java',
    'src/main/java/com/acme/Test.java',
    'src/main/java/com/acme/Contest.java',
    'src/test/java/fixture.kt',
    'src/main/java/com/acme/TestData.java',
  ])
    assert.equal(isTestFile(path), false, path);
});
