/*
 * One concept, hence the length: reading one parsed Python module (readPythonModule) into nodes
 * and the facts the linking pass needs; the rest of the file is its small syntax helpers.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { GraphNode, NodeType } from '../../commit-file.js';
import { fileKind } from '../../file-kind.js';
import { clipCode, isDocumentation, tidyDoc } from '../doc-text.js';
import { fileNode } from '../file-node.js';
import type { GraphBuilder } from '../graph-builder.js';

/** `import a.b as c` (names null) or `from ..a.b import x as y, z` (level = the dots; names empty for `*`). */
export interface PyImport {
  module: string;
  level: number;
  alias?: string;
  names: Array<{ name: string; alias?: string }> | null;
}

/** A call as written: `f`, `mod.f`, `self.m`, `super().m` → its dotted parts. */
export interface PyCall {
  owner: string;
  parts: string[];
  /** The enclosing class's node id, for `self.m()`, `cls.m()` and `super().m()`. */
  classId?: string;
}

export interface PyClass {
  id: string;
  /** Base classes as written (`Base`, `models.Model`). */
  bases: string[];
  /** Method name → node id. */
  methods: Map<string, string>;
}

/** What one Python file declares, imports and calls; its nodes are in the graph already. */
export interface PyModule {
  path: string;
  fileId: string;
  isTest: boolean;
  /** Top-level function or class name → node id. */
  symbols: Map<string, string>;
  /** Classes by name, nested ones by their dotted name (`Outer.Inner`). */
  classes: Map<string, PyClass>;
  imports: PyImport[];
  calls: PyCall[];
  /** Route nodes made from decorators, with the function each one decorates. */
  routes: Array<{ id: string; handlerId: string; urlPath: string; httpMethod: string }>;
  testCases: string[];
}

const ROUTE_VERBS: Record<string, string> = {
  get: 'GET',
  post: 'POST',
  put: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  head: 'HEAD',
  options: 'OPTIONS',
};

/** The class whose body is being read, for methods and `self` calls. */
interface ClassScope {
  cls: PyClass;
  className: string;
}

const named = (node: SyntaxNode | null) => (node ? node.namedChildren.filter((c): c is SyntaxNode => c !== null) : []);

/** A Python string literal's value: prefixes and quotes off, indentation removed as inspect.cleandoc does. */
function stringValue(literal: string): string {
  const m = /^[rRuUbBfF]*("""|'''|"|')([\s\S]*)\1$/.exec(literal);
  const lines = (m ? m[2]! : literal).split('\n');
  const rest = lines.slice(1);
  // A loop, not Math.min(...lines): spreading a docstring of ~100,000 lines overflows the stack.
  let indent = Infinity;
  for (const l of rest) if (l.trim()) indent = Math.min(indent, l.length - l.trimStart().length);
  return tidyDoc([lines[0]!.trim(), ...rest.map((l) => (Number.isFinite(indent) ? l.slice(indent) : l))]);
}

/** The docstring of a module, class or function body, if it starts with one. */
function docstring(body: SyntaxNode | null): string | undefined {
  const first = named(body)[0];
  if (first?.type !== 'expression_statement') return undefined;
  const literal = named(first)[0];
  if (literal?.type !== 'string') return undefined;
  const text = stringValue(literal.text);
  return isDocumentation(text) ? text : undefined;
}

/** `a.b.c` → ['a','b','c']; `super().m` → ['super()','m']; anything else (calls, subscripts) → null. */
export function dottedParts(node: SyntaxNode | null): string[] | null {
  if (!node) return null;
  if (node.type === 'identifier') return [node.text];
  if (node.type === 'attribute') {
    const object = dottedParts(node.childForFieldName('object'));
    const attribute = node.childForFieldName('attribute');
    return object && attribute ? [...object, attribute.text] : null;
  }
  if (node.type === 'call' && node.childForFieldName('function')?.text === 'super') return ['super()'];
  return null;
}

function params(definition: SyntaxNode): string[] {
  return named(definition.childForFieldName('parameters')).flatMap((p) => {
    if (p.type === 'identifier') return [p.text];
    const name = p.childForFieldName('name') ?? named(p).find((c) => c.type === 'identifier');
    return name ? [p.type.includes('splat') ? p.text : name.text] : [];
  });
}

const isAsync = (definition: SyntaxNode) => definition.children.some((c) => c?.type === 'async');

function decoratorsOf(wrapper: SyntaxNode | null): SyntaxNode[] {
  return wrapper?.type === 'decorated_definition' ? named(wrapper).filter((c) => c.type === 'decorator') : [];
}

/** `@app.get('/x')`, `@bp.route('/x', methods=['POST'])` → the routes a decorator registers. */
function decoratorRoutes(decorator: SyntaxNode): Array<{ method: string; path: string }> {
  const call = named(decorator)[0];
  if (call?.type !== 'call') return [];
  const fn = call.childForFieldName('function');
  const verb = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
  const args = named(call.childForFieldName('arguments'));
  const first = args[0];
  if (!verb || first?.type !== 'string') return [];
  const path = stringValue(first.text);
  if (!path.startsWith('/')) return [];
  if (verb in ROUTE_VERBS) return [{ method: ROUTE_VERBS[verb]!, path }];
  if (verb !== 'route') return [];
  const methods = args
    .find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === 'methods')
    ?.childForFieldName('value');
  const listed = named(methods ?? null)
    .filter((m) => m.type === 'string')
    .map((m) => stringValue(m.text).toUpperCase());
  return (listed.length > 0 ? listed : ['GET']).map((method) => ({ method, path }));
}

function imports(statement: SyntaxNode): PyImport[] {
  const aliased = (n: SyntaxNode) =>
    n.type === 'aliased_import'
      ? { name: n.childForFieldName('name')!.text, alias: n.childForFieldName('alias')?.text }
      : { name: n.text };
  if (statement.type === 'import_statement') {
    return named(statement).map((n) => {
      const { name, alias } = aliased(n);
      return { module: name, level: 0, names: null, ...(alias ? { alias } : {}) };
    });
  }
  const moduleNode = statement.childForFieldName('module_name');
  if (!moduleNode) return [];
  let level = 0;
  let module = moduleNode.text;
  if (moduleNode.type === 'relative_import') {
    const prefix = named(moduleNode).find((c) => c.type === 'import_prefix');
    level = prefix?.text.length ?? 0;
    module = named(moduleNode).find((c) => c.type === 'dotted_name')?.text ?? '';
  }
  const wildcard = named(statement).some((c) => c.type === 'wildcard_import');
  const names = wildcard
    ? []
    : statement
        .childrenForFieldName('name')
        .filter((c): c is SyntaxNode => c !== null)
        .map(aliased);
  return [{ module, level, names }];
}

/**
 * Reads one parsed Python file: adds its module node (FILE, or TEST for test files) and the
 * nodes of its top-level functions and classes and their methods (`<path>::<Class>.<method>`),
 * with docstrings as technicalSummary and Flask/FastAPI-style route decorators as ROUTE nodes;
 * returns its imports and call sites for the linking pass.
 */
export function readPythonModule(
  tree: Tree,
  source: string,
  path: string,
  isTest: boolean,
  graph: GraphBuilder,
): PyModule {
  const root = tree.rootNode;
  const fileId = `file::${path}`;
  const mod: PyModule = {
    path,
    fileId,
    isTest,
    symbols: new Map(),
    classes: new Map(),
    imports: [],
    calls: [],
    routes: [],
    testCases: [],
  };
  graph.addNode(fileNode(path, source, 'python', isTest, docstring(root)));

  const node = (
    id: string,
    name: string,
    type: NodeType,
    range: SyntaxNode,
    doc: string | undefined,
    metadata: Record<string, unknown>,
  ): GraphNode => {
    const { rawCode, truncated } = clipCode(range.text);
    return {
      id,
      name,
      type,
      filePath: path,
      startLine: range.startPosition.row + 1,
      endLine: range.endPosition.row + 1,
      rawCode,
      parentFile: fileId,
      ...(doc ? { technicalSummary: doc } : {}),
      metadata: {
        language: 'python',
        ...metadata,
        ...(doc ? { summarySource: 'doc-comment' } : {}),
        ...(truncated ? { rawCodeTruncated: true } : {}),
      },
    };
  };

  /** A definition (its decorated wrapper, if any, gives the range); returns the node id when one was made. */
  const define = (definition: SyntaxNode, wrapper: SyntaxNode, scope: ClassScope | null): string | undefined => {
    const name = definition.childForFieldName('name')?.text;
    if (!name) return undefined;
    const decorators = decoratorsOf(wrapper).map((d) => d.text.replace(/^@/, ''));
    const body = definition.childForFieldName('body');
    if (definition.type === 'class_definition') {
      // A class nested in a class (`Cookies._CookieCompatRequest`) is a node named after both, with
      // its methods (`Outer.Inner.m`); only a top-level class is a name of the module.
      const className = scope ? `${scope.className}.${name}` : name;
      const id = `${path}::${className}`;
      const bases = named(definition.childForFieldName('superclasses'))
        .filter((b) => b.type === 'identifier' || b.type === 'attribute')
        .map((b) => b.text);
      const cls: PyClass = { id, bases, methods: new Map() };
      if (!scope && !mod.symbols.has(name)) mod.symbols.set(name, id);
      if (!mod.classes.has(className)) mod.classes.set(className, cls);
      const added = graph.addNode(
        node(id, className, 'CLASS', wrapper, docstring(body), {
          bases,
          decorators,
          methodNames: [],
          ...(scope ? { enclosingClass: scope.className } : {}),
        }),
      );
      walk(body, id, { cls, className }, 'class');
      if (added.id === id) added.metadata.methodNames = [...cls.methods.keys()];
      return id;
    }
    const id = scope ? `${path}::${scope.className}.${name}` : `${path}::${name}`;
    const type: NodeType = scope ? 'METHOD' : 'FUNCTION';
    const metadata: Record<string, unknown> = { params: params(definition), isAsync: isAsync(definition), decorators };
    if (scope) {
      Object.assign(metadata, {
        className: scope.className,
        isStatic: decorators.includes('staticmethod'),
        isConstructor: name === '__init__',
      });
      if (!scope.cls.methods.has(name)) scope.cls.methods.set(name, id);
    } else {
      metadata.exported = !name.startsWith('_');
      if (!mod.symbols.has(name)) mod.symbols.set(name, id);
    }
    graph.addNode(node(id, scope ? `${scope.className}.${name}` : name, type, wrapper, docstring(body), metadata));
    if (isTest && name.startsWith('test')) mod.testCases.push(scope ? `${scope.className}.${name}` : name);
    // No routes from test code: an app a test builds for itself is not the application's API.
    for (const decorator of fileKind('ROUTE', path) === 'test' ? [] : decoratorsOf(wrapper)) {
      for (const route of decoratorRoutes(decorator)) {
        const routeId = `${path}::${route.method} ${route.path}`;
        graph.addNode(
          node(routeId, `${route.method} ${route.path}`, 'ROUTE', wrapper, undefined, {
            urlPath: route.path,
            httpMethod: route.method,
            routeKind: 'backend',
          }),
        );
        mod.routes.push({ id: routeId, handlerId: id, urlPath: route.path, httpMethod: route.method });
      }
    }
    walk(body, id, scope, 'function');
    return id;
  };

  /** Visits statements and expressions: definitions where they make nodes, imports, calls. */
  const walk = (
    at: SyntaxNode | null,
    owner: string,
    scope: ClassScope | null,
    level: 'module' | 'class' | 'function',
  ) => {
    if (!at) return;
    for (const child of named(at)) {
      const wrapped = child.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
      if (
        wrapped &&
        (wrapped.type === 'function_definition' || wrapped.type === 'class_definition') &&
        level !== 'function'
      ) {
        for (const d of decoratorsOf(child)) walk(d, owner, scope, level);
        define(wrapped, child, level === 'class' ? scope : null);
        continue;
      }
      if (child.type === 'import_statement' || child.type === 'import_from_statement') {
        mod.imports.push(...imports(child));
        continue;
      }
      if (child.type === 'call') {
        const parts = dottedParts(child.childForFieldName('function'));
        if (parts) mod.calls.push({ owner, parts, ...(scope ? { classId: scope.cls.id } : {}) });
      }
      walk(child, owner, scope, level);
    }
  };
  walk(root, fileId, null, 'module');
  return mod;
}
