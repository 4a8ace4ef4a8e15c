/**
 * What kind of file a graph node lives in — test code, generated or vendored code, or source — by
 * its path (and node type): the one rule the analyzer (which files are TEST nodes), find_symbols'
 * ranking (SQL, db/queries/graphs/find-symbols.ts) and resolve_context's heuristic channel all read.
 *
 * Two levels, one built from the other:
 * - a **test file** holds tests, by its name as DevLens decides it (`*.test.ts`, `*.spec.js`, files
 *   in `__tests__/`, Python's `test_*.py` and `*_test.py`): the analyzer makes these TEST nodes.
 *   Helpers beside tests (`test/helpers/x.ts`) are not test files: they are the code tests share.
 * - **test code** is a test file, anything in a test folder (`test/`, `tests/`, `spec/`, `e2e/`…,
 *   helpers included) or named so in any language (`x_test.go`, `x-spec.rb`): rarely what a search
 *   asks for, so ranked down (design.md §7: tests ×0.3; `.d.ts`, generated and vendored ×0.7).
 *
 * The patterns are written once, in the syntax JavaScript's RegExp and Postgres's `~*` share.
 */

/** DevLens's test file names (case-sensitive, as it matches them). */
const TEST_FILE = /\.(test|spec)\.[cm]?[jt]sx?$|(^|\/)__tests__\/|(^|\/)test_[^/]*\.py$|_test\.py$/;
/** Java's test files: Maven and Gradle's `src/test/java/`, JUnit's `*Test.java` and `*Tests.java` names. */
const JAVA_TEST_FILE = /(^|\/)src\/test\/java\/|[^/]Tests?\.java$/;
/** Go's test files, as `go test` names them. */
const GO_TEST_FILE = /_test\.go$/;
/** Rust's integration tests: each file directly in a `tests/` folder is a test crate (`tests/common/mod.rs` a helper). */
const RUST_TEST_FILE = /(^|\/)tests\/[^/]*\.rs$/;
/** Test folders and test-like names of any language (besides the test files). */
const TEST_FOLDER_OR_NAME = /(^|\/)(tests?|__tests__|specs?|e2e)(\/|$)|[._-](test|spec)s?\.[a-z]+$/;
/** Declaration files, generated, minified and vendored code. */
const GENERATED_CODE =
  /\.d\.[mc]?ts$|(^|\/)(vendor|third_party|node_modules|dist|build|generated|__generated__)(\/|$)|\.(generated|gen|min)\.[a-z]+$/;

/**
 * Code beside the library: documentation sites, examples, playgrounds, benchmarks and scripts
 * (issue 21: a question on kysely answered a component of its documentation site).
 */
const AUXILIARY_CODE = /(^|\/)(docs?|site|website|examples?|playground|benchmarks?|bench|scripts|demos?)(\/|$)/;

// Literals (so that test/hostile-text.test.ts checks them for linear time), all lower case: any
// case is matched by testing the lower-cased path here and by `~*` in SQL, where `\/` is `/`.
/** Test code by path, any case, for Postgres `~*`: every test file, test folders, test-like names. */
export const TEST_CODE_PATTERN = `${TEST_FOLDER_OR_NAME.source}|${TEST_FILE.source}`;
/** Declaration, generated and vendored code by path, any case, for Postgres `~*`. */
export const GENERATED_CODE_PATTERN = GENERATED_CODE.source;

/** The rank factor of each kind (design.md §7; auxiliary code since issue 21). */
export const PATH_PENALTY = { test: 0.3, generated: 0.7, auxiliary: 0.5, source: 1 } as const;
export type FileKind = keyof typeof PATH_PENALTY;

/** Whether the analyzer makes the file a TEST node: it holds tests, by its name (see above). */
export function isTestFile(path: string): boolean {
  return (
    TEST_FILE.test(path) ||
    (path.endsWith('.java') && JAVA_TEST_FILE.test(path)) ||
    GO_TEST_FILE.test(path) ||
    RUST_TEST_FILE.test(path)
  );
}

/**
 * The kind of a node's file: `test` for a TEST node or test code, else `generated` for
 * declaration, generated or vendored code, else `auxiliary` for documentation sites, examples,
 * playgrounds, benchmarks and scripts, else `source`.
 *
 * @example fileKind('TEST', 'src/a.ts') === 'test'; fileKind('FUNCTION', 'types/x.d.ts') === 'generated'
 */
export function fileKind(type: string, path: string): FileKind {
  const lower = path.toLowerCase();
  if (type === 'TEST' || TEST_FOLDER_OR_NAME.test(lower) || TEST_FILE.test(lower)) return 'test';
  if (GENERATED_CODE.test(lower)) return 'generated';
  if (AUXILIARY_CODE.test(lower)) return 'auxiliary';
  return 'source';
}
