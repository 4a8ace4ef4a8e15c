import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { treeSitterParser } from '../../src/analyzer/tree-sitter.js';
import type { CommitFile, GraphNode } from '../../src/commit-file.js';

/** The languages whose call sites bench:analyzer counts (the analyzers read with tree-sitter). */
export type CallSiteLanguage = 'go' | 'rust' | 'java';

const EXTENSIONS: Record<CallSiteLanguage, string> = { go: '.go', rust: '.rs', java: '.java' };

export interface CallSiteReport {
  /** Call sites in the graph's files of the language, as the grammar sees them. */
  sites: number;
  /** Of those, the ones whose called name is the name of a symbol of the repository. */
  naming_repo_symbol: number;
  /** Sites whose enclosing node has a CALLS edge to a node of the repository of the called name. */
  resolved: number;
  /** resolved / sites. */
  resolved_share: number;
  /** resolved / naming_repo_symbol: of the calls that could be to the repository's code, those linked. */
  resolved_share_of_naming: number;
}

/**
 * The name a call site calls, or null when it has none the analyzers could link (a call of a call's
 * result, a closure, a conversion to a composite type).
 *
 * - Go `call_expression`: `f(…)` → f; `x.f(…)` → f (a package-qualified call or a method).
 * - Rust `call_expression` (macros are not calls): `f(…)`, `a::b::f(…)`, `f::<T>(…)` → f; `x.f(…)` → f.
 * - Java `method_invocation` → its name; `object_creation_expression` (`new T<…>(…)`) → T.
 */
function calledName(language: CallSiteLanguage, site: SyntaxNode): string | null {
  if (language === 'java') {
    if (site.type === 'method_invocation') return site.childForFieldName('name')?.text ?? null;
    let type = site.childForFieldName('type');
    if (type?.type === 'generic_type') type = type.namedChild(0);
    return type?.text.split('.').pop() ?? null;
  }
  let callee = site.childForFieldName('function');
  if (language === 'rust' && callee?.type === 'generic_function') callee = callee.childForFieldName('function');
  if (!callee) return null;
  if (callee.type === 'identifier') return callee.text;
  if (language === 'go' && callee.type === 'selector_expression')
    return callee.childForFieldName('field')?.text ?? null;
  if (language === 'rust' && callee.type === 'field_expression') return callee.childForFieldName('field')?.text ?? null;
  if (language === 'rust' && callee.type === 'scoped_identifier') return callee.childForFieldName('name')?.text ?? null;
  return null;
}

const SITE_TYPES: Record<CallSiteLanguage, string[]> = {
  go: ['call_expression'],
  rust: ['call_expression'],
  java: ['method_invocation', 'object_creation_expression'],
};

/** A node id's own name: `path::Type.method` → method, `path::module::f` → f. */
const ownName = (id: string) =>
  id
    .slice(id.lastIndexOf('::') + 2)
    .split('.')
    .pop()!;

/**
 * The share of a graph's call sites resolved to a node of the repository, measured apart from the
 * analyzer: every call site in the graph's files of `language` (tree-sitter, the analyzer's own
 * grammars), its enclosing node (the innermost node whose lines hold it, else its file's), and
 * whether that node has a CALLS edge to a node named as the site calls. Edges are kept once per
 * caller and callee, so a caller calling one name twice counts both sites as resolved when it
 * links that name once: the figure is per site as the graph shows it.
 */
export async function callSiteShare(
  root: string,
  commit: CommitFile,
  language: CallSiteLanguage,
): Promise<CallSiteReport> {
  const extension = EXTENSIONS[language];
  const byFile = new Map<string, { file?: GraphNode; symbols: GraphNode[] }>();
  const symbolNames = new Set<string>();
  for (const node of commit.nodes) {
    if (!node.filePath.endsWith(extension)) continue;
    const entry = byFile.get(node.filePath) ?? { symbols: [] };
    byFile.set(node.filePath, entry);
    if (node.id.startsWith('file::')) entry.file = node;
    else {
      entry.symbols.push(node);
      symbolNames.add(ownName(node.id));
    }
  }
  const callees = new Map<string, Set<string>>();
  for (const edge of commit.edges) {
    if (edge.type !== 'CALLS') continue;
    const names = callees.get(edge.from) ?? new Set<string>();
    names.add(ownName(edge.to));
    callees.set(edge.from, names);
  }

  const report = { sites: 0, naming_repo_symbol: 0, resolved: 0 };
  const parser = await treeSitterParser(language);
  try {
    for (const [path, { file, symbols }] of byFile) {
      const tree = parser.parse(await readFile(join(root, path), 'utf8'));
      if (!tree) continue;
      try {
        for (const site of tree.rootNode.descendantsOfType(SITE_TYPES[language])) {
          if (!site) continue;
          report.sites++;
          const name = calledName(language, site);
          if (name === null || !symbolNames.has(name)) continue;
          report.naming_repo_symbol++;
          const line = site.startPosition.row + 1;
          let owner = file;
          for (const s of symbols)
            if (
              s.startLine <= line &&
              line <= s.endLine &&
              (owner === file || s.endLine - s.startLine < owner!.endLine - owner!.startLine)
            )
              owner = s;
          if (owner && callees.get(owner.id)?.has(name)) report.resolved++;
        }
      } finally {
        tree.delete();
      }
    }
  } finally {
    parser.delete();
  }
  const share = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 1000) / 1000);
  return {
    ...report,
    resolved_share: share(report.resolved, report.sites),
    resolved_share_of_naming: share(report.resolved, report.naming_repo_symbol),
  };
}
