/*
 * One concept, hence the length: reading one parsed Java file (readJavaFile) into nodes and the
 * facts the linking pass needs (types, imports, call sites with what their receivers are declared as).
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { GraphNode, NodeType } from '../../commit-file.js';
import { clipCode } from '../doc-text.js';
import { fileNode } from '../file-node.js';
import type { GraphBuilder } from '../graph-builder.js';
import { javadocOf } from './javadoc.js';

export type JavaTypeKind = 'class' | 'interface' | 'enum' | 'record' | 'annotation';

/** A class, interface, enum, record or annotation type the file declares (nested ones too). */
export interface JavaType {
  id: string;
  name: string;
  /** `Outer.Inner` within the file. */
  path: string;
  /** `a.b.Outer.Inner`. */
  qualifiedName: string;
  kind: JavaTypeKind;
  file: JavaFile;
  outer?: JavaType;
  nested: Map<string, JavaType>;
  /** `extends` of a class, as written (type arguments off). */
  superclass?: string;
  /** `implements` of a class, enum or record; `extends` of an interface. */
  interfaces: string[];
  /** Method name → node id (overloads share one node); the constructor is under the type's name. */
  methods: Map<string, string>;
  constructorId?: string;
  /** Field name → its declared type (null: a primitive, an array or a type parameter). */
  fields: Map<string, string | null>;
}

/** `import a.b.C;`, `import a.b.*;`, `import static a.b.C.m;`, `import static a.b.C.*;`. */
export interface JavaImport {
  name: string;
  isStatic: boolean;
  isWildcard: boolean;
}

/**
 * A call site. `scope` is the type whose body it is in (for `this`, plain and `super` calls); it
 * is absent inside an anonymous or local class, whose own members have no node. `typeScope` is
 * the type names are resolved from.
 */
export interface JavaCall {
  owner: string;
  kind: 'plain' | 'this' | 'super' | 'member' | 'new' | 'super-constructor';
  /** The method's name, or for `new` the type as written. */
  name: string;
  scope?: JavaType;
  typeScope?: JavaType;
  /** `x.m()`: the receiver's name, and when it is a local or a parameter, its declared type (null: not a class). */
  receiver?: string;
  receiverLocal?: string | null;
  /** `this.f.m()`: the field named. */
  receiverField?: string;
}

export interface JavaFile {
  path: string;
  fileId: string;
  isTest: boolean;
  packageName: string;
  imports: JavaImport[];
  /** Top-level types by name. */
  types: Map<string, JavaType>;
  /** Every type, nested ones included, in source order. */
  allTypes: JavaType[];
  calls: JavaCall[];
  /** Simple names the file uses as types (for IMPORTS through `*` and the package). */
  typeNames: Set<string>;
  testCases: string[];
}

const TYPE_DECLARATIONS: Record<string, JavaTypeKind> = {
  class_declaration: 'class',
  interface_declaration: 'interface',
  enum_declaration: 'enum',
  record_declaration: 'record',
  annotation_type_declaration: 'annotation',
};
const NODE_TYPE: Record<JavaTypeKind, NodeType> = {
  class: 'CLASS',
  interface: 'INTERFACE',
  enum: 'ENUM',
  record: 'CLASS',
  annotation: 'INTERFACE',
};
/** Nodes that open a scope for local variables. */
const BLOCKS = new Set([
  'block',
  'constructor_body',
  'for_statement',
  'enhanced_for_statement',
  'lambda_expression',
  'catch_clause',
  'try_with_resources_statement',
  'switch_block_statement_group',
]);

const named = (node: SyntaxNode | null) => (node ? node.namedChildren.filter((c): c is SyntaxNode => c !== null) : []);

/** A type as written, type arguments and annotations off: `a.b.C`, `Outer.Inner`; null for primitives and arrays. */
export function typeText(node: SyntaxNode | null): string | null {
  if (!node) return null;
  if (node.type === 'type_identifier') return node.text;
  if (node.type === 'generic_type') return typeText(named(node).find((c) => c.type !== 'type_arguments') ?? null);
  if (node.type === 'scoped_type_identifier') {
    const parts = named(node).filter((c) => c.type === 'type_identifier' || c.type === 'scoped_type_identifier');
    const texts = parts.map(typeText);
    return texts.every((t) => t) ? texts.join('.') : null;
  }
  return null;
}

function modifierWords(declaration: SyntaxNode): string[] {
  const modifiers = named(declaration).find((c) => c.type === 'modifiers');
  if (!modifiers) return [];
  return modifiers.children.flatMap((c) => (c && !c.isNamed ? [c.type] : []));
}

function annotations(declaration: SyntaxNode): string[] {
  const modifiers = named(declaration).find((c) => c.type === 'modifiers');
  return named(modifiers ?? null)
    .filter((c) => c.type === 'marker_annotation' || c.type === 'annotation')
    .map((c) => c.childForFieldName('name')?.text ?? '');
}

function visibility(words: string[], inInterface: boolean): string {
  for (const v of ['public', 'protected', 'private']) if (words.includes(v)) return v;
  return inInterface ? 'public' : 'package';
}

/**
 * Reads one parsed Java file: adds its FILE (or TEST) node and the nodes of its types
 * (`<path>::<Type>`, nested `<path>::<Outer>.<Inner>`) and their methods and constructors
 * (`<path>::<Type>.<method>`, constructors named like the type), Javadoc as technicalSummary;
 * returns its package, imports, types and call sites for the linking pass.
 */
export function readJavaFile(tree: Tree, source: string, path: string, isTest: boolean, graph: GraphBuilder): JavaFile {
  const root = tree.rootNode;
  const fileId = `file::${path}`;
  const file: JavaFile = {
    path,
    fileId,
    isTest,
    packageName: '',
    imports: [],
    types: new Map(),
    allTypes: [],
    calls: [],
    typeNames: new Set(),
    testCases: [],
  };
  graph.addNode(fileNode(path, source, 'java', isTest, undefined));

  const node = (
    id: string,
    name: string,
    type: NodeType,
    range: SyntaxNode,
    metadata: Record<string, unknown>,
  ): GraphNode => {
    const doc = javadocOf(range);
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
        language: 'java',
        ...metadata,
        ...(doc ? { summarySource: 'doc-comment' } : {}),
        ...(truncated ? { rawCodeTruncated: true } : {}),
      },
    };
  };

  /** What a member body sees: its type (absent in anonymous and local classes) and its variables. */
  interface Context {
    owner: string;
    scope?: JavaType;
    typeScope?: JavaType;
    locals: Map<string, string | null>;
    typeParams: Set<string>;
  }

  const declaredType = (typeNode: SyntaxNode | null, ctx: { typeParams: Set<string> }): string | null => {
    const text = typeText(typeNode);
    if (!text || ctx.typeParams.has(text.split('.')[0]!)) return null;
    return text;
  };

  const typeParamNames = (declaration: SyntaxNode, outer: Set<string>): Set<string> => {
    const params = named(declaration.childForFieldName('type_parameters'));
    if (params.length === 0) return outer;
    const names = new Set(outer);
    for (const p of params) {
      const name = named(p).find((c) => c.type === 'type_identifier' || c.type === 'identifier');
      if (name) names.add(name.text);
    }
    return names;
  };

  /** Parameters, locals, `for (T x : …)`, resources and catch parameters: name → declared type. */
  const declare = (at: SyntaxNode, ctx: Context) => {
    const typeNode = at.childForFieldName('type');
    const type = declaredType(typeNode, ctx);
    if (at.type === 'local_variable_declaration' || at.type === 'field_declaration') {
      for (const d of at.childrenForFieldName('declarator')) {
        const name = d?.childForFieldName('name')?.text;
        if (!name) continue;
        let local = type;
        // `var x = new C()`: the type is the created one's.
        if (type === 'var') {
          const value = d!.childForFieldName('value');
          local =
            value?.type === 'object_creation_expression' ? declaredType(value.childForFieldName('type'), ctx) : null;
        }
        // `int[] x`, `C x[]`: arrays are no class.
        ctx.locals.set(name, d!.childForFieldName('dimensions') ? null : local);
      }
      return;
    }
    const name = at.childForFieldName('name')?.text;
    if (name) ctx.locals.set(name, at.childForFieldName('dimensions') ? null : type);
  };

  /** Visits a member's body: calls, local declarations, anonymous and local classes. */
  const walkBody = (at: SyntaxNode | null, ctx: Context): void => {
    if (!at) return;
    for (const child of named(at)) {
      switch (child.type) {
        case 'type_identifier':
          file.typeNames.add(child.text);
          continue;
        case 'formal_parameter':
        case 'spread_parameter':
        case 'catch_formal_parameter':
        case 'resource':
        case 'local_variable_declaration':
          walkBody(child, ctx);
          declare(child, ctx);
          continue;
        case 'lambda_expression': {
          // `x -> x.m()`: an untyped parameter shadows a field of its name, and its type is unknown.
          const inner = { ...ctx, locals: new Map(ctx.locals) };
          const params = child.childForFieldName('parameters');
          if (params?.type === 'identifier') inner.locals.set(params.text, null);
          if (params?.type === 'inferred_parameters') for (const p of named(params)) inner.locals.set(p.text, null);
          walkBody(child, inner);
          continue;
        }
        case 'enhanced_for_statement': {
          const inner = { ...ctx, locals: new Map(ctx.locals) };
          declare(child, inner);
          walkBody(child, inner);
          continue;
        }
        case 'class_declaration':
        case 'interface_declaration':
        case 'enum_declaration':
        case 'record_declaration':
          // A local class: its members have no node, so their calls count as the enclosing member's.
          walkBody(child, { ...ctx, scope: undefined, locals: new Map(ctx.locals) });
          continue;
        case 'method_invocation':
          call(child, ctx);
          walkBody(child, ctx);
          continue;
        case 'object_creation_expression': {
          const type = typeText(child.childForFieldName('type'));
          if (type) file.calls.push({ owner: ctx.owner, kind: 'new', name: type, typeScope: ctx.typeScope });
          const body = named(child).find((c) => c.type === 'class_body');
          for (const c of named(child)) if (c !== body) walkBody(c, ctx);
          if (child.childForFieldName('type')?.type === 'type_identifier') file.typeNames.add(type!);
          // An anonymous class: `this` is the anonymous object, so `this`/plain calls are not the outer type's.
          if (body) walkBody(body, { ...ctx, scope: undefined, locals: new Map(ctx.locals) });
          continue;
        }
        case 'explicit_constructor_invocation':
          if (child.childForFieldName('constructor')?.type === 'super' && !child.childForFieldName('object'))
            file.calls.push({
              owner: ctx.owner,
              kind: 'super-constructor',
              name: 'super',
              scope: ctx.scope,
              typeScope: ctx.typeScope,
            });
          walkBody(child, ctx);
          continue;
        default:
          // Leaves (names, literals) hold nothing to read: not asking for their children saves a third of the walk.
          if (child.namedChildCount === 0) continue;
          walkBody(child, BLOCKS.has(child.type) ? { ...ctx, locals: new Map(ctx.locals) } : ctx);
      }
    }
  };

  const call = (invocation: SyntaxNode, ctx: Context) => {
    const name = invocation.childForFieldName('name')?.text;
    if (!name) return;
    const object = invocation.childForFieldName('object');
    const base = { owner: ctx.owner, name, scope: ctx.scope, typeScope: ctx.typeScope };
    if (!object) file.calls.push({ ...base, kind: 'plain' });
    else if (object.type === 'this') file.calls.push({ ...base, kind: 'this' });
    else if (object.type === 'super') file.calls.push({ ...base, kind: 'super' });
    else if (object.type === 'identifier') {
      const receiver = object.text;
      file.calls.push({
        ...base,
        kind: 'member',
        receiver,
        ...(ctx.locals.has(receiver) ? { receiverLocal: ctx.locals.get(receiver) ?? null } : {}),
      });
    } else if (object.type === 'field_access' && object.childForFieldName('object')?.type === 'this') {
      const field = object.childForFieldName('field')?.text;
      if (field) file.calls.push({ ...base, kind: 'member', receiverField: field });
    } else if (object.type === 'field_access') {
      // `a.b.C.m()` or `Outer.Inner.m()`: a qualified type, if the linker finds one.
      const dotted = dottedName(object);
      if (dotted) file.calls.push({ ...base, kind: 'member', receiver: dotted });
    }
  };

  /** Declares a type and walks its body; `outer` for nested types. */
  const defineType = (
    declaration: SyntaxNode,
    kind: JavaTypeKind,
    outer: JavaType | undefined,
    typeParams: Set<string>,
  ) => {
    const name = declaration.childForFieldName('name')?.text;
    if (!name) return;
    const typePath = outer ? `${outer.path}.${name}` : name;
    const id = `${path}::${typePath}`;
    const type: JavaType = {
      id,
      name,
      path: typePath,
      qualifiedName: file.packageName ? `${file.packageName}.${typePath}` : typePath,
      kind,
      file,
      ...(outer ? { outer } : {}),
      nested: new Map(),
      interfaces: [],
      methods: new Map(),
      fields: new Map(),
    };
    if (outer) {
      if (!outer.nested.has(name)) outer.nested.set(name, type);
    } else if (!file.types.has(name)) file.types.set(name, type);
    const params = typeParamNames(declaration, typeParams);
    const superclass = named(declaration.childForFieldName('superclass'))[0];
    const superText = declaredType(superclass ?? null, { typeParams: params });
    if (superText) type.superclass = superText;
    const interfaces =
      declaration.childForFieldName('interfaces') ?? named(declaration).find((c) => c.type === 'extends_interfaces');
    for (const t of named(named(interfaces ?? null).find((c) => c.type === 'type_list') ?? null)) {
      const text = declaredType(t, { typeParams: params });
      if (text) type.interfaces.push(text);
    }
    const words = modifierWords(declaration);
    const metadata: Record<string, unknown> = {
      kind,
      visibility: visibility(words, outer?.kind === 'interface' || outer?.kind === 'annotation'),
      modifiers: words,
      annotations: annotations(declaration),
      ...(type.superclass ? { extends: type.superclass } : {}),
      ...(type.interfaces.length > 0 ? { [kind === 'interface' ? 'extends' : 'implements']: type.interfaces } : {}),
      isAbstract: words.includes('abstract') || kind === 'interface',
      ...(outer ? { outerClass: outer.path } : {}),
      methodNames: [],
    };
    const added = graph.addNode(node(id, typePath, NODE_TYPE[kind], declaration, metadata));
    if (added.id !== id || added.filePath !== path) return;
    file.allTypes.push(type);

    const body = declaration.childForFieldName('body');
    const members = named(body).flatMap((m) => (m.type === 'enum_body_declarations' ? named(m) : [m]));
    // Record components are fields, and the record's own parameters.
    const classCtx: Context = { owner: id, scope: type, typeScope: type, locals: type.fields, typeParams: params };
    if (kind === 'record') for (const p of named(declaration.childForFieldName('parameters'))) declare(p, classCtx);
    for (const m of members)
      if (m.type === 'field_declaration' || m.type === 'constant_declaration') declare(m, classCtx);
    for (const m of members) {
      if (m.type in TYPE_DECLARATIONS) defineType(m, TYPE_DECLARATIONS[m.type]!, type, params);
      else if (
        m.type === 'method_declaration' ||
        m.type === 'constructor_declaration' ||
        m.type === 'compact_constructor_declaration' ||
        m.type === 'annotation_type_element_declaration'
      )
        defineMethod(m, type, params);
      else if (
        m.type === 'field_declaration' ||
        m.type === 'constant_declaration' ||
        m.type === 'static_initializer' ||
        m.type === 'block' ||
        m.type === 'enum_constant'
      )
        walkBody(m, { ...classCtx, locals: new Map(type.fields) });
    }
    for (const t of named(declaration.childForFieldName('superclass'))) walkBody(t, classCtx);
    walkBody(interfaces ?? null, classCtx);
    if (superclass?.type === 'type_identifier') file.typeNames.add(superclass.text);
    added.metadata.methodNames = [...type.methods.keys()];
  };

  const defineMethod = (declaration: SyntaxNode, type: JavaType, typeParams: Set<string>) => {
    const isConstructor =
      declaration.type !== 'method_declaration' && declaration.type !== 'annotation_type_element_declaration';
    const name = isConstructor ? type.name : declaration.childForFieldName('name')?.text;
    if (!name) return;
    const id = `${type.id}.${name}`;
    if (isConstructor) type.constructorId ??= id;
    if (!type.methods.has(name)) type.methods.set(name, id);
    const params = typeParamNames(declaration, typeParams);
    const words = modifierWords(declaration);
    const body = declaration.childForFieldName('body');
    const signature = (body ? declaration.text.slice(0, body.startIndex - declaration.startIndex) : declaration.text)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('@'))
      .join(' ');
    const annotationNames = annotations(declaration);
    const parameterNodes = named(declaration.childForFieldName('parameters'));
    graph.addNode(
      node(id, `${type.path}.${name}`, 'METHOD', declaration, {
        className: type.path,
        signature: signature.endsWith(';') ? signature.slice(0, -1).trimEnd() : signature,
        params: parameterNodes.flatMap((p) => {
          const n =
            p.childForFieldName('name') ??
            named(p)
              .find((c) => c.type === 'variable_declarator')
              ?.childForFieldName('name');
          return n ? [n.text] : [];
        }),
        ...(isConstructor ? {} : { returnType: declaration.childForFieldName('type')?.text ?? 'void' }),
        visibility: visibility(words, type.kind === 'interface' || type.kind === 'annotation'),
        modifiers: words,
        annotations: annotationNames,
        isStatic: words.includes('static'),
        isAbstract: words.includes('abstract') || (type.kind === 'interface' && !body),
        isConstructor,
      }),
    );
    if (isTest && annotationNames.some((a) => a === 'Test' || a.endsWith('.Test') || a === 'ParameterizedTest'))
      file.testCases.push(`${type.path}.${name}`);
    const ctx: Context = { owner: id, scope: type, typeScope: type, locals: new Map(), typeParams: params };
    // Record components are in scope in a compact constructor.
    if (declaration.type === 'compact_constructor_declaration') for (const [k, v] of type.fields) ctx.locals.set(k, v);
    walkBody(declaration.childForFieldName('parameters'), ctx);
    const returnType = declaration.childForFieldName('type');
    if (returnType?.type === 'type_identifier') file.typeNames.add(returnType.text);
    else walkBody(returnType, ctx);
    walkBody(body, ctx);
  };

  for (const child of named(root)) {
    if (child.type === 'package_declaration') {
      const name = named(child).find((c) => c.type === 'scoped_identifier' || c.type === 'identifier');
      if (name) file.packageName = name.text;
    } else if (child.type === 'import_declaration') {
      const name = named(child).find((c) => c.type === 'scoped_identifier' || c.type === 'identifier');
      if (name)
        file.imports.push({
          name: name.text,
          isStatic: child.children.some((c) => c?.type === 'static'),
          isWildcard: named(child).some((c) => c.type === 'asterisk'),
        });
    } else if (child.type in TYPE_DECLARATIONS) defineType(child, TYPE_DECLARATIONS[child.type]!, undefined, new Set());
  }
  if (isTest) graph.node(fileId)!.metadata.testCases = file.testCases;
  return file;
}

/** A `field_access` chain of plain names (`a.b.C`) as text, else null. */
function dottedName(access: SyntaxNode): string | null {
  const parts: string[] = [];
  let at: SyntaxNode | null = access;
  while (at?.type === 'field_access') {
    const field = at.childForFieldName('field');
    if (field?.type !== 'identifier') return null;
    parts.push(field.text);
    at = at.childForFieldName('object');
  }
  if (at?.type !== 'identifier') return null;
  parts.push(at.text);
  return parts.reverse().join('.');
}
