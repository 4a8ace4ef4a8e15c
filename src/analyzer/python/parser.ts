import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';

const require = createRequire(import.meta.url);
let loading: Promise<Language> | undefined;

/**
 * A tree-sitter parser for Python: the web-tree-sitter runtime with the grammar's WASM build that
 * the tree-sitter-python package ships (no native addon, nothing downloaded). The grammar loads
 * once per process; each caller gets its own parser and must `delete()` it.
 */
export async function pythonParser(): Promise<Parser> {
  loading ??= Parser.init().then(() => Language.load(require.resolve('tree-sitter-python/tree-sitter-python.wasm')));
  const language = await loading.catch((error: unknown) => {
    loading = undefined;
    throw new Error(`could not load the tree-sitter Python grammar: ${(error as Error).message}`, { cause: error });
  });
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
