import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { GraphBuilder } from '../graph-builder.js';
import type { ProgressReporter } from '../progress.js';
import { treeSitterParser } from '../tree-sitter.js';
import { isTestFile } from '../../file-kind.js';
import { readGoFile, type GoCall, type GoFile, type GoType, type GoTypeRef } from './go-file.js';
import { GoModuleIndex } from './go-modules.js';

/** A function or method: its node, the type its first result names, and the file that declares it (where that name is read). */
interface GoFunc {
  id: string;
  returns?: GoTypeRef;
  file: GoFile;
}

/** A named type of a package, with the methods its package declares on it (in any file). */
interface GoTypeInfo {
  type: GoType;
  file: GoFile;
  methods: Map<string, GoFunc>;
}

/** One package: the files of a folder that declare the same package name. */
interface GoPackage {
  folder: string;
  name: string;
  files: GoFile[];
  functions: Map<string, GoFunc>;
  types: Map<string, GoTypeInfo>;
  /** Package-level name (function, type, var, const) → the file that declares it. */
  declaredIn: Map<string, GoFile>;
}

const MAX_DEPTH = 8;

/** The name an import binds when it has no alias: the path's last element, without a `.vN` or `go-` affix. */
function defaultName(importPath: string): string {
  let last = importPath.slice(importPath.lastIndexOf('/') + 1);
  const dot = last.indexOf('.');
  if (dot > 0) last = last.slice(0, dot);
  return last.startsWith('go-') ? last.slice(3) : last;
}

/** The first syntax error's line (1-based), found with an explicit stack. */
function errorLine(root: SyntaxNode): number {
  const pending = [root];
  while (pending.length > 0) {
    const at = pending.pop()!;
    if (at.type === 'ERROR' || at.isMissing) return at.startPosition.row + 1;
    const children = at.children.filter((c): c is SyntaxNode => c !== null && c.hasError);
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]!);
    if (children.length === 0 && at.hasError) return at.startPosition.row + 1;
  }
  return root.startPosition.row + 1;
}

/** Resolution across the packages of one repository (imports, types, methods, embedding). */
class GoLinker {
  readonly packages = new Map<string, GoPackage>();
  /** Folder → the package its import path names (not an external `_test` package). */
  private readonly byFolder = new Map<string, GoPackage>();
  /** Per file: import name → the repository's package it names, or null for one outside the repository. */
  private readonly bindings = new Map<GoFile, Map<string, GoPackage | null>>();
  private readonly dotImports = new Map<GoFile, GoPackage[]>();
  /** Method name → every method of that name in the repository. */
  private readonly methodsByName = new Map<string, string[]>();

  constructor(
    files: GoFile[],
    private readonly modules: GoModuleIndex,
    private readonly graph: GraphBuilder,
  ) {
    for (const file of files) {
      const folder = posix.dirname(file.path) === '.' ? '' : posix.dirname(file.path);
      const key = `${folder}\0${file.packageName}`;
      let pkg = this.packages.get(key);
      if (!pkg) {
        pkg = {
          folder,
          name: file.packageName,
          files: [],
          functions: new Map(),
          types: new Map(),
          declaredIn: new Map(),
        };
        this.packages.set(key, pkg);
      }
      pkg.files.push(file);
      for (const [name, fn] of file.functions) if (!pkg.functions.has(name)) pkg.functions.set(name, { ...fn, file });
      for (const type of file.types)
        if (!pkg.types.has(type.name)) pkg.types.set(type.name, { type, file, methods: new Map() });
      for (const name of [...file.functions.keys(), ...file.types.map((t) => t.name), ...file.values])
        if (!pkg.declaredIn.has(name)) pkg.declaredIn.set(name, file);
      const current = this.byFolder.get(folder);
      const primary = !file.packageName.endsWith('_test') && !file.isTest;
      if (!current || (primary && (current.name.endsWith('_test') || current.files.every((f) => f.isTest))))
        this.byFolder.set(folder, pkg);
    }
    for (const pkg of this.packages.values())
      for (const file of pkg.files)
        for (const method of file.methods) {
          const type = pkg.types.get(method.receiver);
          if (type && !type.methods.has(method.name)) type.methods.set(method.name, { ...method, file });
          const same = this.methodsByName.get(method.name);
          if (same) same.push(method.id);
          else this.methodsByName.set(method.name, [method.id]);
        }
  }

  /**
   * IMPORTS edges of a file, and the names its imports bind. An edge goes to each file of the
   * imported package that declares a name the file uses (`pkg.Name`), not to every file of the
   * package: a package of n files imported by m files would give n × m edges. A blank or dot
   * import, or one whose names are not found, has an edge to each non-test file of the package.
   */
  bindImports(file: GoFile): void {
    const names = new Map<string, GoPackage | null>();
    const dots: GoPackage[] = [];
    this.bindings.set(file, names);
    this.dotImports.set(file, dots);
    for (const imp of file.imports) {
      const folder = this.modules.resolve(imp.path);
      const pkg = folder === undefined ? undefined : this.byFolder.get(folder);
      if (pkg) {
        const used = [...(file.references.get(imp.alias ?? pkg.name) ?? [])].flatMap((name) => {
          const declaring = pkg.declaredIn.get(name);
          return declaring ? [declaring] : [];
        });
        const targets = used.length > 0 ? used : pkg.files.filter((f) => !f.isTest);
        for (const target of targets)
          this.graph.addEdge(file.fileId, target.fileId, 'IMPORTS', { importPath: imp.path });
      }
      if (imp.alias === '_') continue;
      if (imp.alias === '.') {
        if (pkg) dots.push(pkg);
        continue;
      }
      names.set(imp.alias ?? pkg?.name ?? defaultName(imp.path), pkg ?? null);
    }
  }

  private packageOf(file: GoFile): GoPackage {
    const folder = posix.dirname(file.path) === '.' ? '' : posix.dirname(file.path);
    return this.packages.get(`${folder}\0${file.packageName}`)!;
  }

  /** A type as written in `file`: its own package's, an imported package's (`pkg.T`), or a dot import's. */
  type(file: GoFile, ref: GoTypeRef): GoTypeInfo | undefined {
    if (ref.pkg) return this.bindings.get(file)?.get(ref.pkg)?.types.get(ref.name);
    return (
      this.packageOf(file).types.get(ref.name) ??
      this.dotImports
        .get(file)
        ?.find((p) => p.types.has(ref.name))
        ?.types.get(ref.name)
    );
  }

  /** A function as named in `file`: `f` (own package, dot imports) or `pkg.f`. */
  private func(file: GoFile, ref: GoTypeRef): GoFunc | undefined {
    if (ref.pkg) return this.bindings.get(file)?.get(ref.pkg)?.functions.get(ref.name);
    return (
      this.packageOf(file).functions.get(ref.name) ??
      this.dotImports
        .get(file)
        ?.find((p) => p.functions.has(ref.name))
        ?.functions.get(ref.name)
    );
  }

  /** A method of a type or promoted from a type it embeds. */
  method(info: GoTypeInfo, name: string, depth = 0): GoFunc | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const own = info.methods.get(name);
    if (own) return own;
    for (const embedded of this.embedded(info)) {
      const found = this.method(embedded, name, depth + 1);
      if (found) return found;
    }
    return undefined;
  }

  /** The repository's types that `info` embeds. */
  embedded(info: GoTypeInfo): GoTypeInfo[] {
    return info.type.embeds.flatMap((ref) => {
      const found = this.type(info.file, ref);
      return found ? [found] : [];
    });
  }

  /** Every method name of a type, its promoted ones included (interfaces: declared and embedded). */
  methodNames(info: GoTypeInfo, into = new Set<string>(), depth = 0): Set<string> {
    if (depth > MAX_DEPTH) return into;
    for (const name of info.type.kind === 'interface' ? info.type.interfaceMethods : info.methods.keys())
      into.add(name);
    for (const embedded of this.embedded(info)) this.methodNames(embedded, into, depth + 1);
    return into;
  }

  /** The node a call site names, or undefined when it is not the repository's or is ambiguous. */
  callee(file: GoFile, call: GoCall): string | undefined {
    if (call.operand === undefined) return this.func(file, { name: call.name })?.id;
    const names = this.bindings.get(file);
    if (!call.local && names?.has(call.operand)) return names.get(call.operand)?.functions.get(call.name)?.id;
    if (call.value) {
      const maker = 'call' in call.value ? this.func(file, call.value.call) : undefined;
      const ref = 'type' in call.value ? call.value.type : maker?.returns;
      const info = ref && this.type(maker?.file ?? file, ref);
      // A receiver of a known type outside the repository (`strings.Builder`) calls none of its methods.
      if (info) return this.method(info, call.name)?.id;
      if ('type' in call.value || ref) return undefined;
    }
    const candidates = this.methodsByName.get(call.name);
    return candidates?.length === 1 ? candidates[0] : undefined;
  }
}

/**
 * Adds the graph of the repository's Go files to `graph`: tree-sitter parses each file (a file
 * with a syntax error is skipped), then imports are resolved through the go.mod module paths to the
 * repository's folders, and calls by name: in the package (any file of the folder), `pkg.F()`
 * through (aliased) imports, methods on a receiver whose type is known (the method's receiver,
 * parameters, `x := T{}` / `&T{}` / `NewT()`), else a method name unique in the repository.
 * IMPLEMENTS is structural and name-based: a type whose method set (promoted methods included)
 * holds every method name of one of the repository's non-empty interfaces; EXTENDS is embedding.
 */
export async function analyzeGo(
  root: string,
  paths: string[],
  graph: GraphBuilder,
  progress: ProgressReporter,
  skipped: Array<{ filePath: string; reason: string }>,
): Promise<void> {
  if (paths.length === 0) return;
  const parser = await treeSitterParser('go');
  const files: GoFile[] = [];
  try {
    let done = 0;
    for (const path of paths) {
      const source = await readFile(join(root, path), 'utf8');
      const tree = parser.parse(source);
      if (!tree) {
        skipped.push({ filePath: path, reason: 'tree-sitter could not parse it' });
        continue;
      }
      try {
        if (tree.rootNode.hasError)
          skipped.push({ filePath: path, reason: `syntax error at line ${errorLine(tree.rootNode)}` });
        else files.push(readGoFile(tree, source, path, isTestFile(path), graph));
      } finally {
        tree.delete();
      }
      progress.step('parsing', ++done);
    }
  } finally {
    parser.delete();
  }

  const folders = new Set(files.map((f) => (posix.dirname(f.path) === '.' ? '' : posix.dirname(f.path))));
  const linker = new GoLinker(files, await GoModuleIndex.load(root, folders), graph);
  for (const file of files) linker.bindImports(file);

  // Interfaces by their first method name (sorted): a type is checked against those its methods could satisfy.
  const types = [...linker.packages.values()].flatMap((p) => [...p.types.values()]);
  const interfaces = new Map<string, Array<{ info: GoTypeInfo; names: string[] }>>();
  for (const info of types) {
    if (info.type.kind !== 'interface') continue;
    const names = [...linker.methodNames(info)].sort();
    const first = names[0];
    if (first === undefined) continue;
    const listed = interfaces.get(first);
    if (listed) listed.push({ info, names });
    else interfaces.set(first, [{ info, names }]);
  }
  for (const info of types) {
    for (const embedded of linker.embedded(info))
      graph.addEdge(info.type.id, embedded.type.id, 'EXTENDS', { embedded: true });
    if (info.type.kind === 'interface') continue;
    const own = linker.methodNames(info);
    for (const name of own)
      for (const candidate of interfaces.get(name) ?? [])
        if (candidate.names.every((n) => own.has(n)))
          graph.addEdge(info.type.id, candidate.info.type.id, 'IMPLEMENTS', { structural: true });
  }

  let done = 0;
  for (const file of files) {
    for (const call of file.calls) {
      const id = linker.callee(file, call);
      if (id)
        graph.addEdge(call.owner, id, 'CALLS', {
          calledName: call.operand === undefined ? call.name : `${call.operand}.${call.name}`,
        });
    }
    if (file.isTest) graph.node(file.fileId)!.metadata.testCases = file.testCases;
    progress.step('resolving', ++done);
  }
}
