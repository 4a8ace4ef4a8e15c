import { fileKind } from '../../file-kind.js';
import ts from 'typescript';
import { clipCode } from '../doc-text.js';
import { calleeText, lineOf, targetNodeId, type TsContext, type TsFile } from './context.js';
import { routeOf } from './routes.js';

/** Test-framework calls whose first argument names a test case. */
const TEST_CALLS = /^(test|it|describe|suite|context|specify)(\.(only|skip|todo|each|concurrent))?$/;

/** Resolves an import specifier of a file to the analyzed file it names. */
export type ModuleResolver = (specifier: string, containingFile: string) => string | undefined;

export interface ReferenceScope {
  ctx: TsContext;
  file: TsFile;
  resolveModule: ModuleResolver;
  /** Analyzed file name → its `file::` node id. */
  fileIdOf(fileName: string): string | undefined;
  /** Names of the test cases found in the file (test files only). */
  testCases: string[];
}

function moduleSpecifierOf(node: ts.Node): ts.StringLiteralLike | undefined {
  if (
    (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
    node.moduleSpecifier &&
    ts.isStringLiteralLike(node.moduleSpecifier)
  )
    return node.moduleSpecifier;
  if (
    ts.isImportEqualsDeclaration(node) &&
    ts.isExternalModuleReference(node.moduleReference) &&
    ts.isStringLiteralLike(node.moduleReference.expression)
  ) {
    return node.moduleReference.expression;
  }
  if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteralLike(node.arguments[0]!)) {
    const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
    const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
    if (isImport || isRequire) return node.arguments[0];
  }
  return undefined;
}

/** IMPORTS file → file for an import, re-export, `import()` or `require()`; TESTS from a test file to what it imports. */
function linkImport(scope: ReferenceScope, node: ts.Node, specifier: ts.StringLiteralLike): void {
  const { ctx, file } = scope;
  const target = scope.resolveModule(specifier.text, file.sourceFile.fileName);
  const targetFileId = target && scope.fileIdOf(target);
  if (!targetFileId) return; // a dependency, or a file the analysis does not hold
  ctx.graph.addEdge(file.fileId, targetFileId, 'IMPORTS', { importPath: specifier.text });
  if (!file.isTest || !ts.isImportDeclaration(node) || !node.importClause) return;
  const subjects: ts.Node[] = [];
  const clause = node.importClause;
  if (clause.name) subjects.push(clause.name);
  if (clause.namedBindings && ts.isNamedImports(clause.namedBindings))
    subjects.push(...clause.namedBindings.elements.map((e) => e.name));
  const metadata = { importPath: specifier.text, testFileType: 'TEST' };
  for (const subject of subjects) {
    const id = targetNodeId(ctx, subject);
    if (id) ctx.graph.addEdge(file.fileId, id, 'TESTS', metadata);
  }
  if (clause.namedBindings && ts.isNamespaceImport(clause.namedBindings))
    ctx.graph.addEdge(file.fileId, targetFileId, 'TESTS', metadata);
}

/** EXTENDS / IMPLEMENTS from a class or interface node to the in-repo types it names. */
function linkHeritage(
  scope: ReferenceScope,
  declaration: ts.ClassLikeDeclaration | ts.InterfaceDeclaration,
  owner: string,
): void {
  const { ctx, file } = scope;
  if (ctx.declarationIds.get(declaration) !== owner) return;
  for (const clause of declaration.heritageClauses ?? []) {
    const implementing = clause.token === ts.SyntaxKind.ImplementsKeyword;
    for (const type of clause.types) {
      const id = targetNodeId(ctx, type.expression);
      const text = type.getText(file.sourceFile);
      if (id && id !== owner)
        ctx.graph.addEdge(
          owner,
          id,
          implementing ? 'IMPLEMENTS' : 'EXTENDS',
          implementing ? { implementsType: text } : { extendsType: text },
        );
    }
  }
}

/**
 * A ROUTE node per method of the route call; returns the first one's id (it owns inline handlers'
 * calls). None in test code (a test file or a test folder): a server a test starts for itself (ky's tests
 * hold 48 routes) is not the application's API.
 */
function addRoutes(scope: ReferenceScope, call: ts.CallExpression): string | undefined {
  const { ctx, file } = scope;
  if (fileKind('ROUTE', file.path) === 'test') return undefined;
  const route = routeOf(call);
  if (!route) return undefined;
  const { sourceFile } = file;
  const start = call.getStart(sourceFile);
  const { rawCode } = clipCode(sourceFile.text.slice(start, call.getEnd()));
  const params = [...route.path.matchAll(/[:{]([A-Za-z_]\w*)/g)].map((m) => m[1]!);
  const ids: string[] = [];
  for (const method of route.methods) {
    const id = `${file.path}::${method} ${route.path}`;
    ids.push(id);
    ctx.graph.addNode({
      id,
      name: `${method} ${route.path}`,
      type: 'ROUTE',
      filePath: file.path,
      startLine: lineOf(sourceFile, start),
      endLine: lineOf(sourceFile, call.getEnd()),
      rawCode,
      parentFile: file.fileId,
      metadata: {
        urlPath: route.path,
        httpMethod: method,
        isDynamic: params.length > 0 || route.path.includes('*'),
        params,
        routeKind: 'backend',
      },
    });
    route.handlers.forEach((handler, i) => {
      const target =
        ts.isArrowFunction(handler) || ts.isFunctionExpression(handler) || ts.isCallExpression(handler)
          ? undefined
          : targetNodeId(ctx, handler);
      const role = i === route.handlers.length - 1 ? 'handler' : 'middleware';
      if (target) ctx.graph.addEdge(id, target, 'HANDLES', { urlPath: route.path, httpMethod: method, role });
    });
  }
  return ids[0];
}

/** A CALLS edge from `owner` to the node the callee names, if the analysis made one; returns that node's id. */
function linkCall(
  scope: ReferenceScope,
  callee: ts.Expression,
  owner: string,
  extra: Record<string, unknown> = {},
): string | undefined {
  const at = ts.isPropertyAccessExpression(callee) ? callee.name : callee;
  if (!ts.isIdentifier(at) && !ts.isPrivateIdentifier(at)) return undefined;
  const id = targetNodeId(scope.ctx, at);
  if (id)
    scope.ctx.graph.addEdge(owner, id, 'CALLS', { calledName: calleeText(callee, scope.file.sourceFile), ...extra });
  return id;
}

/**
 * One file's edges: CALLS (calls, `new` — to the class and its constructor —, JSX elements) from the innermost enclosing node (the
 * file itself at the top level) to the declaration the type checker resolves the callee to;
 * IMPORTS; EXTENDS / IMPLEMENTS; TESTS; ROUTE nodes with their HANDLES edges. Callees outside
 * the analyzed files are dropped.
 */
export function collectReferences(scope: ReferenceScope): void {
  const { ctx, file } = scope;
  const visit = (node: ts.Node, inherited: string) => {
    let owner = ctx.owners.get(node) ?? inherited;
    const specifier = moduleSpecifierOf(node);
    if (specifier) linkImport(scope, node, specifier);
    if (ts.isClassLike(node) || ts.isInterfaceDeclaration(node)) linkHeritage(scope, node, owner);
    if (ts.isCallExpression(node)) {
      if (node.expression.kind !== ts.SyntaxKind.ImportKeyword) linkCall(scope, node.expression, owner);
      if (
        file.isTest &&
        TEST_CALLS.test(node.expression.getText(file.sourceFile)) &&
        node.arguments[0] &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        scope.testCases.push(node.arguments[0].text);
      }
      owner = addRoutes(scope, node) ?? owner;
    } else if (ts.isNewExpression(node)) {
      const classId = linkCall(scope, node.expression, owner, { isNew: true });
      // `new Ky()` runs Ky's constructor: callers of the constructor (and what it reaches) show that.
      const constructorId = classId && `${classId}.constructor`;
      if (constructorId && ctx.graph.node(constructorId)?.type === 'METHOD')
        ctx.graph.addEdge(owner, constructorId, 'CALLS', {
          calledName: calleeText(node.expression, file.sourceFile),
          isNew: true,
        });
    } else if (ts.isJsxOpeningElement(node) || ts.isJsxSelfClosingElement(node)) {
      linkCall(scope, node.tagName as ts.Expression, owner, { jsx: true });
    } else if (ts.isDecorator(node) && !ts.isCallExpression(node.expression)) {
      linkCall(scope, node.expression, owner, { decorator: true });
    }
    ts.forEachChild(node, (child) => visit(child, owner));
  };
  visit(file.sourceFile, file.fileId);
}
