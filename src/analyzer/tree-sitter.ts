import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';

const require = createRequire(import.meta.url);

/** The tree-sitter grammars the analyzer reads: each package ships its WASM build (pinned in package.json). */
const GRAMMARS = {
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  go: 'tree-sitter-go/tree-sitter-go.wasm',
  rust: 'tree-sitter-rust/tree-sitter-rust.wasm',
  java: 'tree-sitter-java/tree-sitter-java.wasm',
} as const;
export type Grammar = keyof typeof GRAMMARS;

const NAMES: Record<Grammar, string> = { python: 'Python', go: 'Go', rust: 'Rust', java: 'Java' };
let runtime: Promise<void> | undefined;
const loading = new Map<Grammar, Promise<Language>>();

/**
 * A tree-sitter parser for `grammar`: the web-tree-sitter runtime with the grammar's WASM build
 * from its npm package (no native addon, nothing downloaded). Each grammar loads once per process;
 * each caller gets its own parser and must `delete()` it.
 */
export async function treeSitterParser(grammar: Grammar): Promise<Parser> {
  let language = loading.get(grammar);
  if (!language) {
    runtime ??= Parser.init().catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
    language = runtime.then(() => Language.load(require.resolve(GRAMMARS[grammar])));
    loading.set(grammar, language);
  }
  const loaded = await language.catch((error: unknown) => {
    loading.delete(grammar);
    throw new Error(`could not load the tree-sitter ${NAMES[grammar]} grammar: ${(error as Error).message}`, {
      cause: error,
    });
  });
  const parser = new Parser();
  parser.setLanguage(loaded);
  return parser;
}
