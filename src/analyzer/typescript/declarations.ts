/*
 * One concept, hence the length: the declarations of one TypeScript/JavaScript file as graph
 * nodes (collectDeclarations); the rest of the file is the rules it applies to each kind.
 */
import ts from 'typescript';
import type { NodeType } from '../../commit-file.js';
import { declarationNode, type TsContext, type TsFile } from './context.js';

type FunctionLike =
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.AccessorDeclaration;

/** Wrappers whose first argument is the component itself: `memo(() => …)`, `React.forwardRef(…)`. */
const COMPONENT_WRAPPERS = /(^|\.)(memo|forwardRef|observer)$/;

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** Local names the file exports, and how: `export function f`, `export { f as g }`, `export default f`. */
function exportedNames(sourceFile: ts.SourceFile): Map<string, 'named' | 'default'> {
  const names = new Map<string, 'named' | 'default'>();
  const how = (node: ts.Node) => (hasModifier(node, ts.SyntaxKind.DefaultKeyword) ? 'default' : 'named');
  for (const statement of sourceFile.statements) {
    if (
      ts.isExportDeclaration(statement) &&
      !statement.moduleSpecifier &&
      statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const element of statement.exportClause.elements) {
        names.set(
          (element.propertyName ?? element.name).getText(sourceFile),
          element.name.getText(sourceFile) === 'default' ? 'default' : 'named',
        );
      }
    } else if (ts.isExportAssignment(statement) && ts.isIdentifier(statement.expression)) {
      names.set(statement.expression.text, 'default');
    } else if (hasModifier(statement, ts.SyntaxKind.ExportKeyword)) {
      if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations)
          if (ts.isIdentifier(d.name)) names.set(d.name.text, 'named');
      } else {
        const name = (statement as ts.DeclarationStatement).name;
        names.set(name && ts.isIdentifier(name) ? name.text : 'default', how(statement));
      }
    }
  }
  return names;
}

function containsJsx(node: ts.Node): boolean {
  if (ts.isJsxElement(node) || ts.isJsxSelfClosingElement(node) || ts.isJsxFragment(node)) return true;
  return ts.forEachChild(node, containsJsx) ?? false;
}

/** React's conventions: `useX` is a hook, a capitalised function that renders JSX a component. */
function functionType(name: string, fn: ts.Node): NodeType {
  if (/^use[A-Z0-9]/.test(name)) return 'HOOK';
  if (/^[A-Z]/.test(name) && containsJsx(fn)) return 'COMPONENT';
  return 'FUNCTION';
}

function functionMetadata(fn: FunctionLike, sourceFile: ts.SourceFile): Record<string, unknown> {
  return {
    params: fn.parameters.map((p) => p.name.getText(sourceFile).replace(/\s+/g, ' ')),
    isAsync: hasModifier(fn, ts.SyntaxKind.AsyncKeyword),
    ...(fn.asteriskToken ? { isGenerator: true } : {}),
    ...(fn.type ? { returnType: fn.type.getText(sourceFile).replace(/\s+/g, ' ').slice(0, 200) } : {}),
  };
}

/** `(x as any)`, `x satisfies T`, `memo(function C() {…})` → the expression inside. */
function unwrap(expression: ts.Expression, sourceFile: ts.SourceFile): ts.Expression {
  let e = expression;
  for (;;) {
    if (
      ts.isParenthesizedExpression(e) ||
      ts.isAsExpression(e) ||
      ts.isSatisfiesExpression(e) ||
      ts.isTypeAssertionExpression(e)
    )
      e = e.expression;
    else if (ts.isCallExpression(e) && COMPONENT_WRAPPERS.test(e.expression.getText(sourceFile)) && e.arguments[0])
      e = e.arguments[0];
    else return e;
  }
}

const isFunctionValue = (e: ts.Expression): e is ts.ArrowFunction | ts.FunctionExpression =>
  ts.isArrowFunction(e) || ts.isFunctionExpression(e);

/** A function or class a variable or property holds (those make nodes; other values do not). */
function holdsDefinition(d: ts.VariableDeclaration | ts.PropertyDeclaration): boolean {
  if (!d.initializer) return false;
  const value = unwrap(d.initializer, d.getSourceFile());
  return isFunctionValue(value) || ts.isClassExpression(value);
}

/**
 * Which of a symbol's declarations stands for it when several share an id: implementations
 * first; 9 for declarations that make no node (`const Options = {…}` beside `type Options`).
 */
function rank(d: ts.Declaration): number {
  if ((ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d) || ts.isConstructorDeclaration(d)) && d.body) return 0;
  if (ts.isClassDeclaration(d)) return 1;
  if (ts.isVariableDeclaration(d) || ts.isPropertyDeclaration(d)) return holdsDefinition(d) ? 2 : 9;
  if (ts.isAccessor(d)) return 2;
  if (ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d) || ts.isConstructorDeclaration(d)) return 3;
  if (ts.isEnumDeclaration(d)) return 4;
  if (ts.isInterfaceDeclaration(d)) return 5;
  if (ts.isTypeAliasDeclaration(d)) return 6;
  return 9;
}

/**
 * Records `declaration` as standing for node `id`. Returns null unless it is the part the node is
 * made from (overloads, merged interfaces, a class and its interface: one node, from the best
 * part), else the places to look for the node's doc comment: this part first, then the others.
 */
function claim(ctx: TsContext, id: string, declaration: ts.Declaration, name: ts.Node | undefined): ts.Node[] | null {
  ctx.declarationIds.set(declaration, id);
  ctx.owners.set(declaration, id);
  if (ctx.graph.node(id)) return null;
  if (!name) return [declaration];
  const symbol = ctx.checker.getSymbolAtLocation(name);
  const sourceFile = declaration.getSourceFile();
  const parts = (symbol?.declarations ?? []).filter((d) => d.getSourceFile() === sourceFile && rank(d) < 9);
  const best = parts.sort((a, b) => rank(a) - rank(b) || a.pos - b.pos)[0];
  if (best !== undefined && best !== declaration) return null;
  return [declaration, ...parts.filter((p) => p !== declaration).sort((a, b) => a.pos - b.pos)];
}

/** Member name as written: `run`, `#secret`, `[Symbol.iterator]`, `constructor`. */
function memberName(member: ts.ClassElement, sourceFile: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(member)) return 'constructor';
  const name = member.name;
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name))
    return name.text;
  return name.getText(sourceFile);
}

function addClass(
  ctx: TsContext,
  file: TsFile,
  cls: ts.ClassDeclaration | ts.ClassExpression,
  name: string,
  nameNode: ts.Node | undefined,
  range: ts.Node,
  exported: 'named' | 'default' | undefined,
) {
  const { sourceFile } = file;
  const id = `${file.path}::${name}`;
  const heritage = (token: ts.SyntaxKind) =>
    (cls.heritageClauses ?? [])
      .filter((h) => h.token === token)
      .flatMap((h) => h.types.map((t) => t.getText(sourceFile)));
  const extendsType = heritage(ts.SyntaxKind.ExtendsKeyword)[0];
  const isReactComponent = extendsType !== undefined && /(^|\.)(Pure)?Component(<|$)/.test(extendsType);
  const members: Array<{ member: ts.ClassElement; name: string }> = [];
  for (const member of cls.members) {
    const memberLabel = memberName(member, sourceFile);
    if (memberLabel !== undefined) members.push({ member, name: memberLabel });
  }
  const docAnchors = claim(ctx, id, cls, nameNode);
  if (docAnchors) {
    ctx.graph.addNode(
      declarationNode(
        file,
        id,
        name,
        isReactComponent ? 'COMPONENT' : 'CLASS',
        range,
        [range, ...docAnchors.slice(1)],
        {
          exported: exported !== undefined,
          ...(exported ? { exportType: exported } : {}),
          isAbstract: hasModifier(cls, ts.SyntaxKind.AbstractKeyword),
          ...(extendsType ? { extendsType } : {}),
          implementsTypes: heritage(ts.SyntaxKind.ImplementsKeyword),
          methodNames: [
            ...new Set(
              members
                .filter(({ member }) => !ts.isPropertyDeclaration(member) || isMethodProperty(member))
                .map((m) => m.name),
            ),
          ],
          ...(isReactComponent ? { isReactComponent: true } : {}),
        },
      ),
    );
  }
  for (const { member, name: label } of members) addMember(ctx, file, name, member, label);
}

const isMethodProperty = (member: ts.PropertyDeclaration) =>
  member.initializer !== undefined && isFunctionValue(member.initializer);

function addMember(ctx: TsContext, file: TsFile, className: string, member: ts.ClassElement, label: string) {
  const { sourceFile } = file;
  const id = `${file.path}::${className}.${label}`;
  let fn: FunctionLike | undefined;
  if (ts.isMethodDeclaration(member) || ts.isConstructorDeclaration(member) || ts.isAccessor(member)) fn = member;
  else if (ts.isPropertyDeclaration(member) && member.initializer && isFunctionValue(member.initializer))
    fn = member.initializer;
  if (!fn) return;
  // Constructors have no name to find their overloads by: the one with a body stands for them all.
  const constructors = ts.isConstructorDeclaration(member)
    ? member.parent.members.filter(ts.isConstructorDeclaration)
    : [];
  if (constructors.some((c) => c.body) && ts.isConstructorDeclaration(member) && !member.body) {
    ctx.declarationIds.set(member, id);
    return;
  }
  const docAnchors = claim(ctx, id, member, member.name)?.concat(constructors.filter((c) => c !== member));
  if (!docAnchors) return;
  const kind = ts.isConstructorDeclaration(member)
    ? 'constructor'
    : ts.isGetAccessor(member)
      ? 'getter'
      : ts.isSetAccessor(member)
        ? 'setter'
        : ts.isPropertyDeclaration(member)
          ? 'property'
          : 'method';
  ctx.graph.addNode(
    declarationNode(file, id, `${className}.${label}`, 'METHOD', member, docAnchors, {
      className,
      kind,
      ...functionMetadata(fn, sourceFile),
      isStatic: hasModifier(member, ts.SyntaxKind.StaticKeyword),
      isPrivate:
        hasModifier(member, ts.SyntaxKind.PrivateKeyword) ||
        (member.name !== undefined && ts.isPrivateIdentifier(member.name)),
      isAbstract: hasModifier(member, ts.SyntaxKind.AbstractKeyword),
      isConstructor: kind === 'constructor',
    }),
  );
}

/**
 * The object literal a variable holds, as written or passed whole to a wrapper: `const retry =
 * {…}`, `const SelectQueryNode = freeze({…})`, `Object.freeze({…})` — a namespace of functions
 * that callers reach as `SelectQueryNode.create(…)`. Null for anything else.
 */
function objectLiteralOf(value: ts.Expression): ts.ObjectLiteralExpression | null {
  if (ts.isObjectLiteralExpression(value)) return value;
  if (ts.isCallExpression(value) && value.arguments.length === 1 && ts.isObjectLiteralExpression(value.arguments[0]!))
    return value.arguments[0];
  return null;
}

/**
 * A function an object literal holds (`create(…) {…}`, `is: (node) => …`) as a METHOD node of the
 * variable (`<path>::SelectQueryNode.create`, `metadata.kind` 'object-method'); values that are
 * not functions make no node. Calls through the object (`SelectQueryNode.create(x)`) resolve to it.
 */
function addObjectMethod(ctx: TsContext, file: TsFile, objectName: string, member: ts.ObjectLiteralElementLike) {
  const { sourceFile } = file;
  let fn: FunctionLike | undefined;
  if (ts.isMethodDeclaration(member) || ts.isAccessor(member)) fn = member;
  else if (ts.isPropertyAssignment(member) && isFunctionValue(unwrap(member.initializer, sourceFile)))
    fn = unwrap(member.initializer, sourceFile) as ts.ArrowFunction | ts.FunctionExpression;
  const name = member.name;
  if (!fn || !name || !(ts.isIdentifier(name) || ts.isStringLiteral(name))) return;
  const id = `${file.path}::${objectName}.${name.text}`;
  if (fn !== member) ctx.owners.set(fn, id);
  const docAnchors = claim(ctx, id, member, name);
  if (!docAnchors) return;
  ctx.graph.addNode(
    declarationNode(file, id, `${objectName}.${name.text}`, 'METHOD', member, docAnchors, {
      className: objectName,
      kind: 'object-method',
      ...functionMetadata(fn, sourceFile),
      isStatic: false,
      isPrivate: false,
      isAbstract: false,
      isConstructor: false,
    }),
  );
}

function addFunction(
  ctx: TsContext,
  file: TsFile,
  declaration: ts.Declaration,
  fn: ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression,
  name: string,
  nameNode: ts.Node | undefined,
  range: ts.Node,
  docAnchor: ts.Node,
  exported: 'named' | 'default' | undefined,
) {
  const id = `${file.path}::${name}`;
  if (fn !== declaration) ctx.owners.set(fn, id);
  const docAnchors = claim(ctx, id, declaration, nameNode);
  if (!docAnchors) return;
  ctx.graph.addNode(
    declarationNode(file, id, name, functionType(name, fn), range, [docAnchor, ...docAnchors.slice(1)], {
      ...functionMetadata(fn, file.sourceFile),
      exported: exported !== undefined,
      ...(exported ? { exportType: exported } : {}),
    }),
  );
}

/**
 * Makes the nodes of one file's top-level declarations: functions (and functions or classes bound
 * to a variable), classes with their methods and constructors, interfaces, type aliases (INTERFACE
 * with `metadata.kind = 'type'`) and enums. React components and hooks are told apart by
 * convention. Declarations nested in function bodies are part of their enclosing node.
 */
export function collectDeclarations(ctx: TsContext, file: TsFile): void {
  const { sourceFile } = file;
  const exports = exportedNames(sourceFile);
  for (const statement of sourceFile.statements) {
    if (ts.isFunctionDeclaration(statement)) {
      const name = statement.name?.text ?? 'default';
      addFunction(ctx, file, statement, statement, name, statement.name, statement, statement, exports.get(name));
    } else if (ts.isClassDeclaration(statement)) {
      const name = statement.name?.text ?? 'default';
      addClass(ctx, file, statement, name, statement.name, statement, exports.get(name));
    } else if (
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isEnumDeclaration(statement)
    ) {
      const name = statement.name.text;
      const id = `${file.path}::${name}`;
      const docAnchors = claim(ctx, id, statement, statement.name);
      if (!docAnchors) continue;
      const type: NodeType = ts.isEnumDeclaration(statement) ? 'ENUM' : 'INTERFACE';
      const kind = ts.isTypeAliasDeclaration(statement)
        ? { kind: 'type' }
        : ts.isInterfaceDeclaration(statement)
          ? { kind: 'interface' }
          : {};
      const members = ts.isEnumDeclaration(statement)
        ? { members: statement.members.map((m) => m.name.getText(sourceFile)) }
        : {};
      ctx.graph.addNode(
        declarationNode(file, id, name, type, statement, docAnchors, {
          ...kind,
          ...members,
          exported: exports.has(name),
        }),
      );
    } else if (ts.isVariableStatement(statement)) {
      const declarations = statement.declarationList.declarations;
      for (const declaration of declarations) {
        if (!ts.isIdentifier(declaration.name) || !declaration.initializer) continue;
        const value = unwrap(declaration.initializer, sourceFile);
        const name = declaration.name.text;
        // One declaration in the statement: its lines and code include `export const`.
        const range = declarations.length === 1 ? statement : declaration;
        if (isFunctionValue(value))
          addFunction(ctx, file, declaration, value, name, declaration.name, range, statement, exports.get(name));
        else if (ts.isClassExpression(value)) {
          addClass(ctx, file, value, name, undefined, range, exports.get(name));
          ctx.declarationIds.set(declaration, `${file.path}::${name}`); // `new Name()` refers to the variable
        } else {
          const object = objectLiteralOf(value);
          if (object) for (const member of object.properties) addObjectMethod(ctx, file, name, member);
        }
      }
    } else if (ts.isExportAssignment(statement)) {
      const value = unwrap(statement.expression, sourceFile);
      if (isFunctionValue(value))
        addFunction(ctx, file, statement, value, 'default', undefined, statement, statement, 'default');
      else if (ts.isClassExpression(value))
        addClass(ctx, file, value, value.name?.text ?? 'default', undefined, statement, 'default');
    }
  }
}
