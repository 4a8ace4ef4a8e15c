import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { GraphBuilder } from '../graph-builder.js';
import type { ProgressReporter } from '../progress.js';
import { isTestFile } from '../../file-kind.js';
import { PythonModuleIndex } from './module-index.js';
import { pythonParser } from './parser.js';
import { readPythonModule, type PyClass, type PyModule } from './python-module.js';

/** What a name in a module stands for. */
type Binding =
  | { kind: 'module'; path: string }
  | { kind: 'symbol'; path: string; name: string }
  | { kind: 'package'; dotted: string };
/** What a dotted name resolves to: a graph node, or a module. */
type Target = { kind: 'node'; id: string } | { kind: 'module'; path: string };

const MAX_DEPTH = 8;

/**
 * Methods of Python's built-in types and common standard-library objects: a call of one of these
 * names on an unknown receiver is most likely on a dict, list, str, file or lock, so the
 * unique-name fallback (PythonLinker.callee) never takes it, even when one class of the repository
 * happens to define the name.
 */
const BUILTIN_METHODS = new Set(
  [
    'get set pop keys values items update setdefault copy clear fromkeys',
    'append extend insert remove index count sort reverse',
    'join split rsplit strip lstrip rstrip startswith endswith lower upper title replace format encode decode',
    'find rfind partition rpartition splitlines casefold isdigit isalpha isspace zfill ljust rjust center',
    'add discard union intersection difference issubset issuperset',
    'read write close flush seek tell readline readlines writelines fileno truncate',
    'send recv connect bind listen accept shutdown settimeout sendall',
    'acquire release wait notify notify_all put get_nowait put_nowait task_done qsize empty full',
    'start run stop cancel done result exception add_done_callback',
    'match search fullmatch group groups groupdict sub subn finditer findall compile',
    'total_seconds isoformat timestamp strftime',
    'hexdigest digest',
  ]
    .join(' ')
    .split(' '),
);

/** Resolution across the modules of one repository (imports, re-exports, classes and their bases). */
class PythonLinker {
  private readonly bindings = new Map<string, Map<string, Binding>>();
  /** Modules whose names a module takes in whole (`from x import *`). */
  private readonly starImports = new Map<string, string[]>();
  private readonly classes = new Map<string, PyClass>();
  /** Method name → the methods of that name in the repository's classes (tests' included). */
  private readonly methodsNamed = new Map<string, string[]>();

  constructor(
    private readonly modules: Map<string, PyModule>,
    private readonly index: PythonModuleIndex,
    private readonly graph: GraphBuilder,
  ) {
    for (const mod of modules.values())
      for (const cls of mod.classes.values()) {
        this.classes.set(cls.id, cls);
        for (const [name, id] of cls.methods) this.methodsNamed.set(name, [...(this.methodsNamed.get(name) ?? []), id]);
      }
  }

  /** IMPORTS edges of a module, and the names its imports bind. */
  bindImports(mod: PyModule): void {
    const names = new Map<string, Binding>();
    this.bindings.set(mod.path, names);
    for (const imp of mod.imports) {
      const target = this.index.resolve(mod.path, imp.level, imp.module);
      const importPath = `${'.'.repeat(imp.level)}${imp.module}`;
      if (imp.names === null) {
        if (target) this.graph.addEdge(mod.fileId, `file::${target}`, 'IMPORTS', { importPath });
        if (imp.alias) {
          if (target) names.set(imp.alias, { kind: 'module', path: target });
        } else {
          const head = imp.module.split('.')[0]!;
          if (!names.has(head)) names.set(head, { kind: 'package', dotted: head });
        }
        continue;
      }
      for (const { name, alias } of imp.names) {
        const submodule = this.index.resolve(mod.path, imp.level, imp.module ? `${imp.module}.${name}` : name);
        if (submodule) {
          this.graph.addEdge(mod.fileId, `file::${submodule}`, 'IMPORTS', { importPath, importedName: name });
          names.set(alias ?? name, { kind: 'module', path: submodule });
        } else if (target) {
          this.graph.addEdge(mod.fileId, `file::${target}`, 'IMPORTS', { importPath, importedName: name });
          names.set(alias ?? name, { kind: 'symbol', path: target, name });
        }
      }
      if (imp.names.length === 0 && target) {
        this.graph.addEdge(mod.fileId, `file::${target}`, 'IMPORTS', { importPath, importedName: '*' });
        this.starImports.set(mod.path, [...(this.starImports.get(mod.path) ?? []), target]);
      }
    }
  }

  /**
   * A name as seen from a module: its own definition, else what an import bound it to (followed
   * through re-exports), else what a `from x import *` brings.
   */
  private lookup(path: string, name: string, depth = 0): Target | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const own = this.modules.get(path)?.symbols.get(name);
    if (own) return { kind: 'node', id: own };
    const binding = this.bindings.get(path)?.get(name);
    if (!binding) {
      for (const star of this.starImports.get(path) ?? []) {
        const found = this.lookup(star, name, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    if (binding.kind === 'module') return { kind: 'module', path: binding.path };
    if (binding.kind === 'symbol') return this.lookup(binding.path, binding.name, depth + 1);
    const file = this.index.absolute(binding.dotted);
    return file ? { kind: 'module', path: file } : undefined;
  }

  /** A method of a class or of one of its in-repo bases. */
  private method(classId: string, name: string, depth = 0): string | undefined {
    const cls = this.classes.get(classId);
    if (!cls || depth > MAX_DEPTH) return undefined;
    const own = cls.methods.get(name);
    if (own) return own;
    for (const base of this.bases(cls)) {
      const found = this.method(base, name, depth + 1);
      if (found) return found;
    }
    return undefined;
  }

  /** The node ids of a class's bases that the repository declares. */
  bases(cls: PyClass): string[] {
    const path = this.graph.node(cls.id)!.filePath;
    return cls.bases
      .map((b) => this.resolve(path, b.split('.')))
      .flatMap((t) => (t?.kind === 'node' && this.classes.has(t.id) ? [t.id] : []));
  }

  /** `a.b.c` from a module: through module attributes and class attributes. */
  resolve(path: string, parts: string[]): Target | undefined {
    const [head, ...rest] = parts;
    const current = this.lookup(path, head!);
    const binding = this.bindings.get(path)?.get(head!);
    if (binding?.kind === 'package' && !this.modules.get(path)?.symbols.has(head!)) {
      // `import a.b.c` then `a.b.c.f()`: the longest dotted prefix that is a module.
      for (let k = parts.length - 1; k >= 1; k--) {
        const file = this.index.absolute(parts.slice(0, k).join('.'));
        if (file) return this.walk({ kind: 'module', path: file }, parts.slice(k));
      }
    }
    return current ? this.walk(current, rest) : undefined;
  }

  private walk(start: Target, rest: string[]): Target | undefined {
    let current: Target | undefined = start;
    for (const part of rest) {
      if (!current) return undefined;
      if (current.kind === 'module') current = this.lookup(current.path, part);
      else {
        const method: string | undefined = this.classes.has(current.id) ? this.method(current.id, part) : undefined;
        current = method ? { kind: 'node', id: method } : undefined;
      }
    }
    return current;
  }

  /** The node a call site names: `f()`, `mod.f()`, `Class.m()`, `self.m()`, `super().m()`. */
  callee(mod: PyModule, call: PyModule['calls'][number]): string | undefined {
    const [head, second, ...more] = call.parts;
    if ((head === 'self' || head === 'cls') && call.classId && second && more.length === 0)
      return this.method(call.classId, second);
    if (head === 'super()' && call.classId && second && more.length === 0) {
      const cls = this.classes.get(call.classId);
      for (const base of cls ? this.bases(cls) : []) {
        const found = this.method(base, second);
        if (found) return found;
      }
      return undefined;
    }
    if (head === 'self' || head === 'cls' || head === 'super()') return undefined;
    const target = this.resolve(mod.path, call.parts);
    return target?.kind === 'node' ? target.id : undefined;
  }

  /**
   * The callee of a call `callee` could not resolve, when it is a method called on a receiver whose
   * type is not known (`self.cookies.extract_cookies(r)`, `auth.sync_auth_flow(request)`: a
   * parameter, a local, an attribute): the one method of that name in the repository, when exactly
   * one class defines it — a common heuristic of code graphs, which misses rather than guesses when
   * the name is shared or is a built-in type's method (BUILTIN_METHODS), dunder methods included.
   */
  uniqueMethod(mod: PyModule, call: PyModule['calls'][number]): string | undefined {
    const { parts } = call;
    if (parts.length < 2) return undefined;
    const head = parts[0]!;
    const own = head === 'self' || head === 'cls' || head === 'super()';
    // `self.m()` and `super().m()` name the class's own methods (callee), `mod.f()` and `Class.m()` a module's names.
    if (own ? parts.length === 2 : this.resolve(mod.path, [head]) !== undefined) return undefined;
    const name = parts[parts.length - 1]!;
    if (name.startsWith('__') || BUILTIN_METHODS.has(name)) return undefined;
    const found = this.methodsNamed.get(name);
    if (found?.length !== 1) return undefined;
    // A library's code does not call into its tests.
    const method = found[0]!;
    return !mod.isTest && isTestFile(this.graph.node(method)?.filePath ?? '') ? undefined : method;
  }
}

/**
 * Adds the graph of the repository's Python files to `graph`: tree-sitter parses each file
 * (nodes, imports, call sites), then imports are resolved within the repository (absolute,
 * relative, package `__init__` re-exports) and calls are resolved by name: in the module, through
 * `import` / `from x import y`, and over `self` / `super()` to the class and its bases; a method
 * called on a receiver of unknown type goes to the one method of that name, if only one class has it.
 */
export async function analyzePython(
  root: string,
  paths: string[],
  graph: GraphBuilder,
  progress: ProgressReporter,
  skipped: Array<{ filePath: string; reason: string }>,
): Promise<void> {
  if (paths.length === 0) return;
  const parser = await pythonParser();
  const modules = new Map<string, PyModule>();
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
        modules.set(path, readPythonModule(tree, source, path, isTestFile(path), graph));
      } finally {
        tree.delete();
      }
      progress.step('parsing', ++done);
    }
  } finally {
    parser.delete();
  }

  const linker = new PythonLinker(modules, new PythonModuleIndex(paths, basename(root)), graph);
  for (const mod of modules.values()) linker.bindImports(mod);
  let done = 0;
  for (const mod of modules.values()) {
    for (const cls of mod.classes.values()) {
      const bases = linker.bases(cls);
      cls.bases.forEach((text) => {
        const target = linker.resolve(mod.path, text.split('.'));
        if (target?.kind === 'node' && bases.includes(target.id))
          graph.addEdge(cls.id, target.id, 'EXTENDS', { extendsType: text });
      });
    }
    for (const call of mod.calls) {
      const id = linker.callee(mod, call);
      if (id) graph.addEdge(call.owner, id, 'CALLS', { calledName: call.parts.join('.') });
      const guess = id ? undefined : linker.uniqueMethod(mod, call);
      if (guess)
        graph.addEdge(call.owner, guess, 'CALLS', {
          calledName: call.parts.join('.'),
          resolvedBy: 'unique-method-name',
        });
    }
    for (const route of mod.routes)
      graph.addEdge(route.id, route.handlerId, 'HANDLES', {
        urlPath: route.urlPath,
        httpMethod: route.httpMethod,
        role: 'handler',
      });
    if (mod.isTest) {
      graph.node(mod.fileId)!.metadata.testCases = mod.testCases;
      for (const imp of mod.imports) {
        for (const { name, alias } of imp.names ?? []) {
          const target = linker.resolve(mod.path, [alias ?? name]);
          // `from x import y` in a test binds y in the test module, so resolve it from there.
          if (target?.kind === 'node')
            graph.addEdge(mod.fileId, target.id, 'TESTS', {
              importPath: `${'.'.repeat(imp.level)}${imp.module}`,
              testFileType: 'TEST',
            });
        }
      }
    }
    progress.step('resolving', ++done);
  }
}
