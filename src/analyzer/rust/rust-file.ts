/*
 * Reading one parsed Rust file (readRustFile) into nodes and the facts the linking pass needs:
 * its modules (the file's own and its inline `mod x { }` blocks), their items, `mod x;` and `use`
 * declarations, impl blocks, traits and call sites. The rest of the file is its syntax helpers.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { GraphNode, NodeType } from '../../commit-file.js';
import { clipCode, isDocumentation, tidyDoc } from '../doc-text.js';
import { fileNode } from '../file-node.js';
import type { GraphBuilder } from '../graph-builder.js';

/** `use a::b as c` → {alias: 'c', segments: ['a','b']}; `use a::*` → {segments: ['a'], glob: true}. */
export interface RsUse {
  alias: string;
  segments: string[];
  glob: boolean;
}

/** A module: the file's own (prefix '') or an inline `mod x { }` block (prefix 'x.'). */
export interface RsModule {
  path: string;
  fileId: string;
  /** The module's node: the file's, or the MODULE node of an inline block. */
  nodeId: string;
  /** What ids of its items start with after `<path>::`: '' or 'a.b.'. */
  prefix: string;
  parent?: RsModule;
  /** Function, struct, enum, trait and union names → node id. */
  items: Map<string, string>;
  /** Inline modules, and (after linking) the files `mod x;` names. */
  children: Map<string, RsModule>;
  /** `mod x;` declarations, with their `#[path = "…"]` when given. */
  mods: Array<{ name: string; pathAttribute?: string }>;
  uses: RsUse[];
}

/** An `impl [Trait for] Type` block. */
export interface RsImpl {
  id: string;
  module: RsModule;
  typePath: string[];
  traitPath: string[] | null;
  /** Method name → node id. */
  methods: Map<string, string>;
}

export interface RsTrait {
  id: string;
  module: RsModule;
  /** Supertraits as paths (`trait A: B + fmt::Debug` → [['B'], ['fmt','Debug']]). */
  supertraits: string[][];
  methods: Map<string, string>;
}

/**
 * A call as written: `f()` / `a::b::f()` / `Type::f()` (path), `self.m()` (self), `x.m()` (method,
 * receiver's type unknown). `context` is the impl or trait the call is in, for `Self::` and `self.`.
 */
export interface RsCall {
  owner: string;
  module: RsModule;
  kind: 'path' | 'self' | 'method';
  segments: string[];
  context?: { impl: RsImpl } | { trait: RsTrait };
}

export interface RsFile {
  path: string;
  fileId: string;
  module: RsModule;
  impls: RsImpl[];
  traits: RsTrait[];
  calls: RsCall[];
  /** Method name → how many METHOD nodes the file declares under it. */
  methodNames: Map<string, string[]>;
}

/** Inline modules nested deeper than this are not read (bounded recursion on hostile input). */
const MAX_MODULE_DEPTH = 64;

const named = (node: SyntaxNode | null) => (node ? node.namedChildren.filter((c): c is SyntaxNode => c !== null) : []);

/** A doc comment's lines: `///` and `//!` lose one leading space, `/** *\/` its leading stars. */
function docLines(comment: SyntaxNode): string[] {
  const doc = comment.childForFieldName('doc')?.text ?? '';
  const lines = doc.split('\n');
  if (comment.type === 'line_comment') return [lines[0]!.startsWith(' ') ? lines[0]!.slice(1) : lines[0]!];
  return lines.map((line) => {
    const trimmed = line.trimStart();
    const unstarred = trimmed.startsWith('*') ? trimmed.slice(1) : trimmed;
    return unstarred.startsWith(' ') ? unstarred.slice(1) : unstarred;
  });
}

const isDocComment = (node: SyntaxNode, marker: 'outer' | 'inner') =>
  (node.type === 'line_comment' || node.type === 'block_comment') && node.childForFieldName(marker) !== null;

/** The `///` / `/** *\/` comments above an item (attributes between them and it are skipped). */
function outerDoc(item: SyntaxNode): string | undefined {
  const comments: SyntaxNode[] = [];
  for (let at = item.previousNamedSibling; at; at = at.previousNamedSibling) {
    if (at.type === 'attribute_item') continue;
    if (!isDocComment(at, 'outer')) break;
    comments.push(at);
  }
  const text = tidyDoc(comments.reverse().flatMap(docLines));
  return isDocumentation(text) ? text : undefined;
}

/** The `//!` / `/*! *\/` comments that open a file or an inline module's block. */
function innerDoc(container: SyntaxNode | null): string | undefined {
  const comments: SyntaxNode[] = [];
  for (const child of named(container)) {
    if (isDocComment(child, 'inner')) comments.push(child);
    else if (child.type !== 'line_comment' && child.type !== 'block_comment' && child.type !== 'attribute_item') break;
  }
  const text = tidyDoc(comments.flatMap(docLines));
  return isDocumentation(text) ? text : undefined;
}

/** The attributes written above an item, as their text inside `#[…]`. */
function attributes(item: SyntaxNode): string[] {
  const found: string[] = [];
  for (let at = item.previousNamedSibling; at; at = at.previousNamedSibling) {
    if (at.type === 'attribute_item') found.push(named(at)[0]?.text ?? '');
    else if (!isDocComment(at, 'outer')) break;
  }
  return found.reverse();
}

/** `#[test]`, and the test attributes of async runtimes (`#[tokio::test]`). */
const isTestFunction = (item: SyntaxNode) => attributes(item).some((a) => a === 'test' || a.endsWith('::test'));

/** `#[path = "x.rs"]` → 'x.rs'. */
function pathAttribute(item: SyntaxNode): string | undefined {
  for (let at = item.previousNamedSibling; at; at = at.previousNamedSibling) {
    if (at.type !== 'attribute_item') {
      if (isDocComment(at, 'outer')) continue;
      break;
    }
    const attribute = named(at)[0];
    if (attribute?.type !== 'attribute' || named(attribute)[0]?.text !== 'path') continue;
    const value = attribute.childForFieldName('value');
    const content = named(value).find((c) => c.type === 'string_content');
    if (content) return content.text;
  }
  return undefined;
}

/**
 * A path node's segments: `a::b::c` → ['a','b','c'], `crate::x` → ['crate','x'], `S::<T>::f` →
 * ['S','f'] (type arguments dropped); null for anything else (`<T as Tr>::f`, expressions).
 */
export function pathSegments(node: SyntaxNode | null): string[] | null {
  if (!node) return null;
  switch (node.type) {
    case 'identifier':
    case 'type_identifier':
    case 'crate':
    case 'self':
    case 'super':
    case 'metavariable':
      return [node.text];
    case 'generic_type':
      return pathSegments(node.childForFieldName('type'));
    case 'generic_function':
      return pathSegments(node.childForFieldName('function'));
    case 'scoped_identifier':
    case 'scoped_type_identifier': {
      const name = node.childForFieldName('name');
      if (!name) return null;
      const path = node.childForFieldName('path');
      if (!path) return [name.text]; // `::a` (a crate from the root)
      const head = pathSegments(path);
      return head ? [...head, name.text] : null;
    }
    default:
      return null;
  }
}

/** The `use` tree of a declaration flattened: one entry per name it binds. */
function useEntries(node: SyntaxNode | null, prefix: string[], out: RsUse[]): void {
  if (!node) return;
  const last = (segments: string[]) => segments[segments.length - 1]!;
  switch (node.type) {
    case 'use_as_clause': {
      const segments = pathSegments(node.childForFieldName('path'));
      const alias = node.childForFieldName('alias')?.text;
      if (segments && alias && alias !== '_') out.push({ alias, segments: [...prefix, ...segments], glob: false });
      return;
    }
    case 'use_wildcard': {
      const inner = named(node)[0];
      const segments = inner ? pathSegments(inner) : [];
      if (segments) out.push({ alias: '*', segments: [...prefix, ...segments], glob: true });
      return;
    }
    case 'scoped_use_list': {
      const path = node.childForFieldName('path');
      const segments = path ? pathSegments(path) : [];
      if (segments) useEntries(node.childForFieldName('list'), [...prefix, ...segments], out);
      return;
    }
    case 'use_list':
      for (const child of named(node)) useEntries(child, prefix, out);
      return;
    case 'self':
      // `use a::b::{self}` binds b.
      if (prefix.length > 0) out.push({ alias: last(prefix), segments: prefix, glob: false });
      return;
    default: {
      const segments = pathSegments(node);
      if (segments) out.push({ alias: last(segments), segments: [...prefix, ...segments], glob: false });
    }
  }
}

/** A type's name as the ids use it: `S<T>` → 'S', `a::S` → 'S', `&mut S` → 'S'; the text otherwise. */
function typeName(node: SyntaxNode | null): string {
  if (!node) return '?';
  if (node.type === 'reference_type' || node.type === 'pointer_type') return typeName(node.childForFieldName('type'));
  const segments = pathSegments(node);
  return segments ? segments[segments.length - 1]! : node.text;
}

/** `impl<T> fmt::Display for S<T>` → 'impl fmt::Display for S'. */
function implName(traitNode: SyntaxNode | null, typeNode: SyntaxNode | null): string {
  const written = (node: SyntaxNode | null) => {
    const segments = pathSegments(node);
    return segments ? segments.join('::') : typeName(node);
  };
  return traitNode ? `impl ${written(traitNode)} for ${written(typeNode)}` : `impl ${written(typeNode)}`;
}

const visibility = (item: SyntaxNode) => named(item).find((c) => c.type === 'visibility_modifier')?.text ?? 'private';

/** A function's text up to its body: `pub fn f(x: u8) -> u8`. */
function signature(item: SyntaxNode): string {
  const body = item.childForFieldName('body');
  const end = body ? body.startIndex - item.startIndex : item.text.length;
  const text = item.text.slice(0, end).trim();
  return text.endsWith(';') ? text.slice(0, -1).trimEnd() : text;
}

function params(item: SyntaxNode): string[] {
  return named(item.childForFieldName('parameters')).flatMap((p) => {
    if (p.type === 'self_parameter') return ['self'];
    if (p.type !== 'parameter') return [];
    return [p.childForFieldName('pattern')?.text ?? p.text];
  });
}

const hasModifier = (item: SyntaxNode, word: string) =>
  named(item)
    .find((c) => c.type === 'function_modifiers')
    ?.children.some((c) => c?.type === word) ?? false;

/**
 * Reads one parsed Rust file: adds its file node (FILE, or TEST for test files; `//!` as its
 * summary) and the nodes of its items — FUNCTION, STRUCT (unions too), ENUM, TRAIT, MODULE for
 * inline modules, IMPL_BLOCK `<path>::impl Trait for Type` and METHOD `<path>::<Type>.<method>`
 * for the functions of impl blocks and traits — with `///` docs as technicalSummary; returns its
 * modules, `use`s, impls, traits and call sites for the linking pass.
 */
export function readRustFile(tree: Tree, source: string, path: string, isTest: boolean, graph: GraphBuilder): RsFile {
  const root = tree.rootNode;
  const fileId = `file::${path}`;
  const newModule = (nodeId: string, prefix: string, parent?: RsModule): RsModule => ({
    path,
    fileId,
    nodeId,
    prefix,
    ...(parent ? { parent } : {}),
    items: new Map(),
    children: new Map(),
    mods: [],
    uses: [],
  });
  const file: RsFile = {
    path,
    fileId,
    module: newModule(fileId, ''),
    impls: [],
    traits: [],
    calls: [],
    methodNames: new Map(),
  };
  graph.addNode(fileNode(path, source, 'rust', isTest, innerDoc(root)));

  const node = (
    id: string,
    name: string,
    type: NodeType,
    item: SyntaxNode,
    doc: string | undefined,
    metadata: Record<string, unknown>,
  ): string => {
    const { rawCode, truncated } = clipCode(item.text);
    const added: GraphNode = {
      id,
      name,
      type,
      filePath: path,
      startLine: item.startPosition.row + 1,
      endLine: item.endPosition.row + 1,
      rawCode,
      parentFile: fileId,
      ...(doc ? { technicalSummary: doc } : {}),
      metadata: {
        language: 'rust',
        ...metadata,
        ...(doc ? { summarySource: 'doc-comment' } : {}),
        ...(truncated ? { rawCodeTruncated: true } : {}),
      },
    };
    return graph.addNode(added).id;
  };

  /** The call sites in a function's body (closures and nested functions count as the function's). */
  const readCalls = (body: SyntaxNode | null, owner: string, module: RsModule, context?: RsCall['context']) => {
    if (!body) return;
    for (const call of body.descendantsOfType('call_expression')) {
      const callee = call?.childForFieldName('function') ?? null;
      if (!callee) continue;
      const at = { owner, module, ...(context ? { context } : {}) };
      if (callee.type === 'field_expression') {
        const field = callee.childForFieldName('field');
        if (field?.type !== 'field_identifier') continue;
        const self = callee.childForFieldName('value')?.type === 'self';
        file.calls.push({ ...at, kind: self ? 'self' : 'method', segments: [field.text] });
        continue;
      }
      const segments = pathSegments(callee);
      if (segments) file.calls.push({ ...at, kind: 'path', segments });
    }
  };

  const functionMetadata = (item: SyntaxNode) => ({
    signature: signature(item),
    visibility: visibility(item),
    params: params(item),
    isAsync: hasModifier(item, 'async'),
    ...(hasModifier(item, 'unsafe') ? { isUnsafe: true } : {}),
    ...(isTestFunction(item) ? { isTest: true } : {}),
  });

  /** A function of an impl block or trait: a METHOD `<path>::<prefix><Type>.<name>`. */
  const method = (
    item: SyntaxNode,
    module: RsModule,
    owner: string,
    methods: Map<string, string>,
    context: RsCall['context'],
    extra: Record<string, unknown>,
  ) => {
    const name = item.childForFieldName('name')?.text;
    if (!name) return;
    const id = `${path}::${module.prefix}${owner}.${name}`;
    const isStatic = !params(item).includes('self');
    node(id, `${owner}.${name}`, 'METHOD', item, outerDoc(item), {
      ...functionMetadata(item),
      ...extra,
      isStatic,
      ...(item.type === 'function_signature_item' ? { isAbstract: true } : {}),
    });
    if (!methods.has(name)) methods.set(name, id);
    const same = file.methodNames.get(name) ?? [];
    if (!same.includes(id)) file.methodNames.set(name, [...same, id]);
    if (item.type === 'function_item') readCalls(item.childForFieldName('body'), id, module, context);
  };

  const items = (container: SyntaxNode | null, module: RsModule, depth: number) => {
    for (const item of named(container)) {
      const name = item.childForFieldName('name')?.text;
      const id = name ? `${path}::${module.prefix}${name}` : '';
      const own = (nodeId: string) => {
        if (name && !module.items.has(name)) module.items.set(name, nodeId);
      };
      switch (item.type) {
        case 'function_item': {
          if (!name) break;
          own(node(id, module.prefix + name, 'FUNCTION', item, outerDoc(item), functionMetadata(item)));
          if (isTest && isTestFunction(item)) testCases.push(module.prefix + name);
          readCalls(item.childForFieldName('body'), id, module);
          break;
        }
        case 'struct_item':
        case 'union_item': {
          if (!name) break;
          const body = item.childForFieldName('body');
          const kind =
            item.type === 'union_item'
              ? 'union'
              : body?.type === 'ordered_field_declaration_list'
                ? 'tuple'
                : body
                  ? 'struct'
                  : 'unit';
          own(node(id, module.prefix + name, 'STRUCT', item, outerDoc(item), { visibility: visibility(item), kind }));
          break;
        }
        case 'enum_item': {
          if (!name) break;
          const variants = named(item.childForFieldName('body'))
            .filter((v) => v.type === 'enum_variant')
            .map((v) => v.childForFieldName('name')?.text ?? '');
          own(node(id, module.prefix + name, 'ENUM', item, outerDoc(item), { visibility: visibility(item), variants }));
          break;
        }
        case 'trait_item': {
          if (!name) break;
          const supertraits = named(item.childForFieldName('bounds')).flatMap((b) => {
            const segments = pathSegments(b);
            return segments ? [segments] : [];
          });
          const traitId = node(id, module.prefix + name, 'TRAIT', item, outerDoc(item), {
            visibility: visibility(item),
            supertraits: supertraits.map((s) => s.join('::')),
          });
          own(traitId);
          const trait: RsTrait = { id: traitId, module, supertraits, methods: new Map() };
          if (traitId === id) file.traits.push(trait);
          for (const fn of named(item.childForFieldName('body')))
            if (fn.type === 'function_item' || fn.type === 'function_signature_item')
              method(fn, module, name, trait.methods, { trait }, { traitName: name });
          break;
        }
        case 'impl_item': {
          const typeNode = item.childForFieldName('type');
          const traitNode = item.childForFieldName('trait');
          const typePath = pathSegments(typeNode) ?? [typeName(typeNode)];
          const traitPath = traitNode ? (pathSegments(traitNode) ?? null) : null;
          const label = implName(traitNode, typeNode);
          const owner = typeName(typeNode);
          const implId = `${path}::${module.prefix}${label}`;
          node(implId, module.prefix + label, 'IMPL_BLOCK', item, outerDoc(item), {
            typeName: owner,
            ...(traitNode ? { traitName: typeName(traitNode) } : {}),
          });
          const impl: RsImpl = { id: implId, module, typePath, traitPath, methods: new Map() };
          file.impls.push(impl);
          const extra = { typeName: owner, ...(traitNode ? { traitName: typeName(traitNode) } : {}) };
          for (const fn of named(item.childForFieldName('body')))
            if (fn.type === 'function_item') method(fn, module, owner, impl.methods, { impl }, extra);
          break;
        }
        case 'mod_item': {
          if (!name) break;
          const body = item.childForFieldName('body');
          if (!body) {
            const attribute = pathAttribute(item);
            module.mods.push({ name, ...(attribute ? { pathAttribute: attribute } : {}) });
            break;
          }
          if (depth >= MAX_MODULE_DEPTH) break;
          const moduleId = node(id, module.prefix + name, 'MODULE', item, outerDoc(item) ?? innerDoc(body), {
            visibility: visibility(item),
          });
          const inner = newModule(moduleId, `${module.prefix}${name}.`, module);
          if (!module.children.has(name)) module.children.set(name, inner);
          items(body, inner, depth + 1);
          break;
        }
        case 'use_declaration':
          useEntries(item.childForFieldName('argument'), [], module.uses);
          break;
      }
    }
  };
  const testCases: string[] = [];
  items(root, file.module, 0);
  if (isTest) graph.node(fileId)!.metadata.testCases = testCases;
  return file;
}

/** The first syntax error of a tree, as 1-based line and column; null when there is none. */
export function firstSyntaxError(tree: Tree): { line: number; column: number } | null {
  let at = tree.rootNode;
  if (!at.hasError) return null;
  // A loop down the first erroneous child, not recursion: nesting depth is the input's to choose.
  for (;;) {
    const next = at.children.find((c) => c !== null && (c.isError || c.isMissing || c.hasError)) ?? null;
    if (!next || next.isError || next.isMissing) {
      const where = (next ?? at).startPosition;
      return { line: where.row + 1, column: where.column + 1 };
    }
    at = next;
  }
}
