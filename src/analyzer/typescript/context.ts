import ts from 'typescript';
import type { GraphNode, NodeType } from '../../commit-file.js';
import { clipCode } from '../doc-text.js';
import type { GraphBuilder } from '../graph-builder.js';
import { leadingDocComment } from './doc-comment.js';

/** What the TypeScript passes share while analyzing one Program. */
export interface TsContext {
  checker: ts.TypeChecker;
  graph: GraphBuilder;
  /** Declaration (every overload and merged part) → the id of the node that stands for it. */
  declarationIds: Map<ts.Node, string>;
  /** A node whose calls belong to a graph node (function, method, class…) → that node's id. */
  owners: Map<ts.Node, string>;
}

/** One file being analyzed. */
export interface TsFile {
  sourceFile: ts.SourceFile;
  /** Repo-relative path with forward slashes. */
  path: string;
  fileId: string;
  isTest: boolean;
}

export const lineOf = (sourceFile: ts.SourceFile, pos: number) =>
  sourceFile.getLineAndCharacterOfPosition(pos).line + 1;

/**
 * A graph node for a declaration: the lines and code of `range` (from its first token, without
 * the doc comment), the first doc comment found above one of `docAnchors` as technicalSummary
 * (overloads: the comment usually sits above the first signature, not the implementation).
 */
export function declarationNode(
  file: TsFile,
  id: string,
  name: string,
  type: NodeType,
  range: ts.Node,
  docAnchors: ts.Node[],
  metadata: Record<string, unknown>,
): GraphNode {
  const { sourceFile } = file;
  const start = range.getStart(sourceFile);
  const { rawCode, truncated } = clipCode(sourceFile.text.slice(start, range.getEnd()));
  const doc = docAnchors.map((anchor) => leadingDocComment(anchor, sourceFile)).find((d) => d !== undefined);
  const node: GraphNode = {
    id,
    name,
    type,
    filePath: file.path,
    startLine: lineOf(sourceFile, start),
    endLine: lineOf(sourceFile, range.getEnd()),
    rawCode,
    parentFile: file.fileId,
    metadata: { ...metadata, ...(truncated ? { rawCodeTruncated: true } : {}) },
  };
  if (doc) {
    node.technicalSummary = doc;
    node.metadata.summarySource = 'doc-comment';
  }
  return node;
}

/** The symbol a name or expression refers to, through import/export aliases to the declaration. */
export function resolvedSymbol(checker: ts.TypeChecker, at: ts.Node): ts.Symbol | undefined {
  let symbol = checker.getSymbolAtLocation(at);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) {
    try {
      symbol = checker.getAliasedSymbol(symbol);
    } catch {
      return undefined;
    }
  }
  return symbol;
}

/** The graph node a name or expression refers to, if the analysis made one for its declaration. */
export function targetNodeId(ctx: TsContext, at: ts.Node): string | undefined {
  const symbol = resolvedSymbol(ctx.checker, at);
  for (const declaration of symbol?.declarations ?? []) {
    const id = ctx.declarationIds.get(declaration);
    if (id) return id;
  }
  return undefined;
}

/** `a.b.c(...)`, `foo(...)`: the callee's text on one line, cut at 120 characters. */
export function calleeText(expression: ts.Node, sourceFile: ts.SourceFile): string {
  const text = expression.getText(sourceFile).replace(/\s+/g, '');
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
