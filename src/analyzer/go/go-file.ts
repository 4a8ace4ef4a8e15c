/*
 * One concept: reading one parsed Go file (readGoFile) into nodes and the facts the linking pass
 * needs (imports, types, methods, call sites with what is known of their receivers).
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { GraphNode, NodeType } from '../../commit-file.js';
import { clipCode, isDocumentation, tidyDoc } from '../doc-text.js';
import { fileNode } from '../file-node.js';
import type { GraphBuilder } from '../graph-builder.js';

/** A type as written: `T`, `*T`, `T[int]` → {name: 'T'}; `pkg.T` → {pkg: 'pkg', name: 'T'}. */
export interface GoTypeRef {
  pkg?: string;
  name: string;
}

/** What a local variable holds: a type, or the result of a call to `NewT()` / `pkg.NewT()`. */
export type GoValue = { type: GoTypeRef } | { call: GoTypeRef };

/** A call site: `f()` (operand absent) or `x.f()`; `value` is what `x` is known to hold. */
export interface GoCall {
  owner: string;
  name: string;
  /** The operand of a selector call as written (`x`, `a.b`); absent for a plain `f()`. */
  operand?: string;
  /** Whether the operand is a local variable or parameter (so not an imported package). */
  local?: boolean;
  value?: GoValue;
}

/** A named type: its node, kind, embedded types, and (interfaces) its method names and embedded interfaces. */
export interface GoType {
  id: string;
  name: string;
  kind: 'struct' | 'interface' | 'type';
  embeds: GoTypeRef[];
  interfaceMethods: string[];
}

/** What one Go file declares, imports and calls; its nodes are in the graph already. */
export interface GoFile {
  path: string;
  fileId: string;
  packageName: string;
  isTest: boolean;
  /** `import alias "path"`: alias absent when not written, `_` and `.` kept as written. */
  imports: Array<{ path: string; alias?: string }>;
  /** Function name → node id and the type its first result names (for `NewT()`). */
  functions: Map<string, { id: string; returns?: GoTypeRef }>;
  types: GoType[];
  methods: Array<{ receiver: string; name: string; id: string; returns?: GoTypeRef }>;
  calls: GoCall[];
  /** Package-level `var` and `const` names. */
  values: string[];
  /** `x.Name` and the qualified type `x.Name` anywhere in the file: x → the names (x may be an import). */
  references: Map<string, Set<string>>;
  testCases: string[];
}

const named = (node: SyntaxNode | null) => (node ? node.namedChildren.filter((c): c is SyntaxNode => c !== null) : []);

/** Exported (visible outside the package): the name starts with an upper-case letter. */
const isExported = (name: string) => /^\p{Lu}/u.test(name);

const TEST_PREFIXES = ['Test', 'Benchmark', 'Example', 'Fuzz'];

/** The `//` comment lines directly above `node` (no blank line between), `//go:` directives left out. */
function docComment(node: SyntaxNode): string | undefined {
  const lines: string[] = [];
  let row = node.startPosition.row;
  for (let c = node.previousNamedSibling; c?.type === 'comment'; c = c.previousNamedSibling) {
    if (c.endPosition.row !== row - 1 || !c.text.startsWith('//')) break;
    row = c.startPosition.row;
    const text = c.text.slice(2);
    if (!text.startsWith('go:') && !text.startsWith('nolint'))
      lines.unshift(text.startsWith(' ') ? text.slice(1) : text);
  }
  const text = tidyDoc(lines);
  return isDocumentation(text) ? text : undefined;
}

/** `T`, `*T`, `T[X]`, `pkg.T`, `*pkg.T` → the named type; anything else (maps, slices, funcs) → undefined. */
export function typeRef(node: SyntaxNode | null): GoTypeRef | undefined {
  // A loop, not recursion: `**…*T` nested a hundred thousand deep must not overflow the stack.
  let at = node;
  while (at?.type === 'pointer_type' || at?.type === 'generic_type')
    at = at.type === 'pointer_type' ? (named(at)[0] ?? null) : at.childForFieldName('type');
  if (at?.type === 'type_identifier') return { name: at.text };
  if (at?.type === 'qualified_type') {
    const pkg = at.childForFieldName('package')?.text;
    const name = at.childForFieldName('name')?.text;
    return pkg && name ? { pkg, name } : undefined;
  }
  return undefined;
}

/** The type a function's first result names (`*T`, `(T, error)`), for `x := NewT()`. */
function resultType(declaration: SyntaxNode): GoTypeRef | undefined {
  const result = declaration.childForFieldName('result');
  if (result?.type === 'parameter_list') return typeRef(named(result)[0]?.childForFieldName('type') ?? null);
  return typeRef(result);
}

/** What an expression yields, as far as a local variable's type goes: `T{}`, `&T{}`, `NewT()`, `pkg.NewT()`. */
function valueOf(expression: SyntaxNode | undefined): GoValue | undefined {
  if (!expression) return undefined;
  if (expression.type === 'unary_expression' && expression.children[0]?.type === '&') {
    // Only `&T{}`: one `&`, not a chain to recurse down.
    const operand = expression.childForFieldName('operand');
    return operand?.type === 'composite_literal' ? valueOf(operand) : undefined;
  }
  if (expression.type === 'composite_literal') {
    const type = typeRef(expression.childForFieldName('type'));
    return type ? { type } : undefined;
  }
  if (expression.type === 'call_expression') {
    const fn = expression.childForFieldName('function');
    if (fn?.type === 'identifier') return { call: { name: fn.text } };
    const operand = fn?.type === 'selector_expression' ? fn.childForFieldName('operand') : null;
    const field = fn?.childForFieldName('field');
    if (operand?.type === 'identifier' && field) return { call: { pkg: operand.text, name: field.text } };
  }
  return undefined;
}

/**
 * Reads one parsed Go file: adds its file node (FILE, or TEST for `_test.go` files) and the nodes
 * of its functions (FUNCTION), receiver methods (METHOD, `<path>::<Type>.<method>`), structs
 * (STRUCT), interfaces (INTERFACE) and other named types (INTERFACE with `metadata.kind = 'type'`,
 * as for TypeScript's type aliases), with their `//` doc comments as technicalSummary; returns its
 * imports, types, methods and call sites for the linking pass.
 */
export function readGoFile(tree: Tree, source: string, path: string, isTest: boolean, graph: GraphBuilder): GoFile {
  const root = tree.rootNode;
  const fileId = `file::${path}`;
  const clause = named(root).find((c) => c.type === 'package_clause');
  const file: GoFile = {
    path,
    fileId,
    packageName: (clause && named(clause)[0]?.text) ?? '',
    isTest,
    imports: [],
    functions: new Map(),
    types: [],
    methods: [],
    calls: [],
    values: [],
    references: new Map(),
    testCases: [],
  };
  graph.addNode(fileNode(path, source, 'go', isTest, clause ? docComment(clause) : undefined));

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
        language: 'go',
        ...metadata,
        visibility: isExported(name.slice(name.lastIndexOf('.') + 1)) ? 'exported' : 'package',
        ...(doc ? { summarySource: 'doc-comment' } : {}),
        ...(truncated ? { rawCodeTruncated: true } : {}),
      },
    };
  };

  /** The declaration's text up to its body: `func (r *T) Name(a int) error`. */
  const signature = (declaration: SyntaxNode) => {
    const body = declaration.childForFieldName('body');
    const text = body ? source.slice(declaration.startIndex, body.startIndex) : declaration.text;
    return text.trim().slice(0, 500);
  };

  /**
   * Call sites and local variables' values under `start` (a body, or a package-level `var`), with
   * the parameter lists' names bound to their types.
   */
  const readBody = (start: SyntaxNode | null, parameters: Array<SyntaxNode | null>, owner: string) => {
    const locals = new Map<string, GoValue | null>();
    const bind = (name: string, value: GoValue | undefined) => {
      if (name === '_') return;
      // A name bound twice to different things, or to something unknown, is known to be nothing.
      const before = locals.get(name);
      const same = before && value && JSON.stringify(before) === JSON.stringify(value);
      locals.set(name, before === undefined && value ? value : same ? before : null);
    };
    for (const p of parameters.flatMap((list) => named(list))) {
      const type = typeRef(p.childForFieldName('type'));
      for (const n of p.childrenForFieldName('name')) if (n) bind(n.text, type ? { type } : undefined);
    }
    const calls: Array<{ operand: SyntaxNode | null; name: string }> = [];
    // One call into the WASM parser for the body: a walk over namedChildren in JavaScript took longer than parsing.
    const found = start ? start.descendantsOfType(['short_var_declaration', 'var_spec', 'call_expression']) : [];
    for (const at of found) {
      if (!at) continue;
      if (at.type === 'short_var_declaration' || at.type === 'var_spec') {
        const names =
          at.type === 'var_spec'
            ? at.childrenForFieldName('name').filter((n): n is SyntaxNode => n !== null)
            : named(at.childForFieldName('left'));
        const type = at.type === 'var_spec' ? typeRef(at.childForFieldName('type')) : undefined;
        const values = named(at.childForFieldName(at.type === 'var_spec' ? 'value' : 'right'));
        names.forEach((n, i) =>
          bind(n.text, type ? { type } : values.length === names.length ? valueOf(values[i]) : undefined),
        );
      }
      if (at.type === 'call_expression') {
        const fn = at.childForFieldName('function');
        if (fn?.type === 'identifier') calls.push({ operand: null, name: fn.text });
        if (fn?.type === 'selector_expression') {
          const field = fn.childForFieldName('field');
          if (field) calls.push({ operand: fn.childForFieldName('operand'), name: field.text });
        }
      }
    }
    // Read once the whole body is seen: a variable bound twice is known to be nothing, wherever the call is.
    for (const { operand, name } of calls) {
      if (!operand) {
        file.calls.push({ owner, name });
        continue;
      }
      const local = operand.type === 'identifier' && locals.has(operand.text);
      const value = local ? locals.get(operand.text) : undefined;
      file.calls.push({ owner, name, operand: operand.text.slice(0, 200), local, ...(value ? { value } : {}) });
    }
  };

  const defineType = (spec: SyntaxNode, range: SyntaxNode, doc: string | undefined) => {
    const name = spec.childForFieldName('name')?.text;
    const body = spec.childForFieldName('type');
    if (!name || !body) return;
    const id = `${path}::${name}`;
    const kind = body.type === 'struct_type' ? 'struct' : body.type === 'interface_type' ? 'interface' : 'type';
    const type: GoType = { id, name, kind, embeds: [], interfaceMethods: [] };
    if (kind === 'struct') {
      for (const field of named(named(body)[0] ?? null))
        if (field.type === 'field_declaration' && !field.childForFieldName('name')) {
          const ref = typeRef(field.childForFieldName('type'));
          if (ref) type.embeds.push(ref);
        }
    }
    if (kind === 'interface') {
      for (const element of named(body)) {
        if (element.type === 'method_elem') type.interfaceMethods.push(element.childForFieldName('name')!.text);
        if (element.type === 'type_elem') {
          const ref = named(element).length === 1 ? typeRef(named(element)[0]!) : undefined;
          if (ref) type.embeds.push(ref);
        }
      }
    }
    file.types.push(type);
    const nodeType: NodeType = kind === 'struct' ? 'STRUCT' : 'INTERFACE';
    const metadata: Record<string, unknown> = { kind: kind === 'type' ? 'type' : kind };
    if (kind === 'interface') metadata.methodNames = type.interfaceMethods;
    if (spec.type === 'type_alias') metadata.isAlias = true;
    graph.addNode(node(id, name, nodeType, range, doc, metadata));
  };

  const refer = (operand: SyntaxNode | null, name: SyntaxNode | null) => {
    if (operand?.type !== 'identifier' && operand?.type !== 'package_identifier') return;
    if (!name) return;
    const names = file.references.get(operand.text) ?? new Set();
    file.references.set(operand.text, names.add(name.text));
  };
  // One call into the WASM parser for the whole file: a walk in JavaScript halved the files per second.
  for (const at of root.descendantsOfType(['selector_expression', 'qualified_type'])) {
    if (!at) continue;
    if (at.type === 'selector_expression') refer(at.childForFieldName('operand'), at.childForFieldName('field'));
    else refer(at.childForFieldName('package'), at.childForFieldName('name'));
  }

  for (const declaration of named(root)) {
    if (declaration.type === 'import_declaration') {
      const specs = named(declaration).flatMap((c) => (c.type === 'import_spec_list' ? named(c) : [c]));
      for (const spec of specs) {
        if (spec.type !== 'import_spec') continue;
        const pathNode = spec.childForFieldName('path');
        const importPath = pathNode ? named(pathNode)[0]?.text : undefined;
        if (!importPath) continue;
        const alias = spec.childForFieldName('name')?.text;
        file.imports.push({ path: importPath, ...(alias ? { alias } : {}) });
      }
    } else if (declaration.type === 'type_declaration') {
      const specs = named(declaration).filter((c) => c.type === 'type_spec' || c.type === 'type_alias');
      // `type X struct{}` spans its keyword; a spec of a `type ( … )` group spans itself.
      const single = specs.length === 1 && declaration.text.trimStart().slice(4).trimStart()[0] !== '(';
      for (const spec of specs)
        defineType(spec, single ? declaration : spec, single ? docComment(declaration) : docComment(spec));
    } else if (declaration.type === 'function_declaration') {
      const name = declaration.childForFieldName('name')?.text;
      if (!name) continue;
      const id = `${path}::${name}`;
      const returns = resultType(declaration);
      if (!file.functions.has(name)) file.functions.set(name, { id, ...(returns ? { returns } : {}) });
      graph.addNode(
        node(id, name, 'FUNCTION', declaration, docComment(declaration), { signature: signature(declaration) }),
      );
      if (isTest && TEST_PREFIXES.some((p) => name.startsWith(p))) file.testCases.push(name);
      readBody(declaration.childForFieldName('body'), [declaration.childForFieldName('parameters')], id);
    } else if (declaration.type === 'method_declaration') {
      const name = declaration.childForFieldName('name')?.text;
      const receiver = named(declaration.childForFieldName('receiver'))[0];
      const receiverType = typeRef(receiver?.childForFieldName('type') ?? null);
      if (!name || !receiverType || receiverType.pkg) continue;
      const id = `${path}::${receiverType.name}.${name}`;
      const returns = resultType(declaration);
      file.methods.push({ receiver: receiverType.name, name, id, ...(returns ? { returns } : {}) });
      graph.addNode(
        node(id, `${receiverType.name}.${name}`, 'METHOD', declaration, docComment(declaration), {
          signature: signature(declaration),
          className: receiverType.name,
          pointerReceiver: receiver?.childForFieldName('type')?.type === 'pointer_type',
        }),
      );
      readBody(
        declaration.childForFieldName('body'),
        [declaration.childForFieldName('receiver'), declaration.childForFieldName('parameters')],
        id,
      );
    } else if (declaration.type === 'var_declaration' || declaration.type === 'const_declaration') {
      const specs = named(declaration).flatMap((c) => (c.type === 'var_spec_list' ? named(c) : [c]));
      for (const spec of specs) for (const n of spec.childrenForFieldName('name')) if (n) file.values.push(n.text);
      // Package-level initializers call functions too: their calls belong to the file.
      readBody(declaration, [], fileId);
    }
  }
  return file;
}
