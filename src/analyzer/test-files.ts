/**
 * Whether a file holds tests, by name as DevLens decides it: `*.test.ts`, `*.spec.js`, files in
 * `__tests__/`, Python's `test_*.py` and `*_test.py`. Helpers beside tests (`test/helpers/x.ts`)
 * are not test files: they are the code the tests share.
 */
export function isTestFile(path: string): boolean {
  return (
    /\.(test|spec)\.[cm]?[jt]sx?$/.test(path) ||
    /(^|\/)__tests__\//.test(path) ||
    /(^|\/)test_[^/]*\.py$/.test(path) ||
    /_test\.py$/.test(path)
  );
}
