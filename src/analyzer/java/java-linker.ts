import type { GraphBuilder } from '../graph-builder.js';
import type { JavaCall, JavaFile, JavaType } from './java-file.js';

const MAX_DEPTH = 16;

/**
 * Resolution across the Java files of one repository: types by package and name (the `package`
 * declarations, not the folders), imports, nested types, and methods through the class hierarchy.
 * A name with several candidates (two `*` imports offering it, a type declared twice) resolves to
 * nothing: no edge rather than a guess.
 */
export class JavaLinker {
  /** `a.b.C` and `a.b.C.D` → the type; null when two files declare it. */
  private readonly qualified = new Map<string, JavaType | null>();
  /** Package → its top-level types by name. */
  private readonly packages = new Map<string, Map<string, JavaType | null>>();
  /** Each type's supertypes, resolved once (and cut short on a cycle of `extends`). */
  private readonly supers = new Map<JavaType, JavaType[]>();

  constructor(
    files: Iterable<JavaFile>,
    private readonly graph: GraphBuilder,
  ) {
    for (const file of files) {
      for (const type of file.allTypes) {
        this.qualified.set(type.qualifiedName, this.qualified.has(type.qualifiedName) ? null : type);
        if (type.outer) continue;
        let members = this.packages.get(file.packageName);
        if (!members) this.packages.set(file.packageName, (members = new Map()));
        members.set(type.name, members.has(type.name) ? null : type);
      }
    }
  }

  /** A simple type name as `file` sees it inside `scope`: member types, the file, imports, the package, `*` imports. */
  private simpleType(file: JavaFile, scope: JavaType | undefined, name: string): JavaType | undefined {
    for (let t = scope, depth = 0; t && depth < MAX_DEPTH; t = t.outer, depth++) {
      if (t.name === name) return t;
      const member = this.memberType(t, name);
      if (member) return member;
    }
    const own = file.types.get(name);
    if (own) return own;
    for (const imp of file.imports) {
      if (imp.isWildcard || imp.isStatic) continue;
      if (imp.name === name || imp.name.endsWith(`.${name}`)) return this.qualified.get(imp.name) ?? undefined;
    }
    const same = this.packages.get(file.packageName)?.get(name);
    if (same !== undefined) return same ?? undefined;
    const found = new Set<JavaType | null>();
    for (const imp of file.imports) {
      if (!imp.isWildcard || imp.isStatic) continue;
      const member = this.packages.get(imp.name)?.get(name);
      if (member !== undefined) found.add(member);
      const owner = this.qualified.get(imp.name);
      const nested = owner?.nested.get(name);
      if (nested) found.add(nested);
    }
    return found.size === 1 ? ([...found][0] ?? undefined) : undefined;
  }

  /** A member type of `type` or of its supertypes. */
  private memberType(type: JavaType, name: string, seen = new Set<JavaType>()): JavaType | undefined {
    if (seen.has(type)) return undefined;
    seen.add(type);
    const own = type.nested.get(name);
    if (own) return own;
    for (const parent of this.supertypes(type)) {
      const found = this.memberType(parent, name, seen);
      if (found) return found;
    }
    return undefined;
  }

  /** A type as written (`C`, `Outer.Inner`, `a.b.C`) from `scope` in `file`. */
  type(file: JavaFile, scope: JavaType | undefined, text: string): JavaType | undefined {
    const [head, ...rest] = text.split('.');
    let current = this.simpleType(file, scope, head!);
    if (!current && rest.length > 0) {
      // A qualified name: the longest prefix that names a type, then its member types.
      const parts = text.split('.');
      for (let k = parts.length; k >= 2 && !current; k--) {
        const found = this.qualified.get(parts.slice(0, k).join('.'));
        if (found) {
          current = found;
          rest.splice(0, rest.length, ...parts.slice(k));
        }
      }
    }
    for (const part of rest) current = current?.nested.get(part);
    return current;
  }

  /** The repository's supertypes of a type: its superclass first, then its interfaces. */
  supertypes(type: JavaType): JavaType[] {
    const cached = this.supers.get(type);
    if (cached) return cached;
    // Resolved from the enclosing scope, as Java does; while resolving, a cycle sees none.
    this.supers.set(type, []);
    const texts = type.superclass ? [type.superclass, ...type.interfaces] : type.interfaces;
    const found = texts.flatMap((t) => {
      const parent = this.type(type.file, type.outer, t);
      return parent && parent !== type ? [parent] : [];
    });
    this.supers.set(type, found);
    return found;
  }

  /** The repository's superclass of a class. */
  private superclass(type: JavaType | undefined): JavaType | undefined {
    if (!type?.superclass) return undefined;
    const parent = this.type(type.file, type.outer, type.superclass);
    return parent !== type ? parent : undefined;
  }

  /**
   * A method of a type or the one it inherits: the superclass chain first, then interfaces
   * (default methods); one found in two unrelated interfaces is ambiguous.
   */
  method(type: JavaType, name: string, seen = new Set<JavaType>()): string | undefined {
    if (seen.has(type)) return undefined;
    seen.add(type);
    const own = type.methods.get(name);
    if (own && name !== type.name) return own;
    const superclass = this.superclass(type);
    if (superclass) {
      const found = this.method(superclass, name, seen);
      if (found) return found;
    }
    const found = new Set<string>();
    for (const parent of this.supertypes(type)) {
      if (parent === superclass) continue;
      const id = this.method(parent, name, seen);
      if (id) found.add(id);
    }
    return found.size === 1 ? [...found][0] : undefined;
  }

  /** A field's declared type, resolved where the field is declared (its class or a superclass). */
  private fieldType(type: JavaType, name: string, depth = 0): JavaType | null | undefined {
    if (depth > MAX_DEPTH) return undefined;
    if (type.fields.has(name)) {
      const text = type.fields.get(name);
      return text ? (this.type(type.file, type, text) ?? null) : null;
    }
    const superclass = this.superclass(type);
    return superclass ? this.fieldType(superclass, name, depth + 1) : undefined;
  }

  /** What `new C()` reaches: C's constructor, else the class. */
  private creation(type: JavaType | undefined): string | undefined {
    return type ? (type.constructorId ?? type.id) : undefined;
  }

  /** The node a call site names, or undefined when it is not the repository's or not certain. */
  callee(file: JavaFile, call: JavaCall): string | undefined {
    const { scope, typeScope } = call;
    switch (call.kind) {
      case 'new':
        return this.creation(this.type(file, typeScope, call.name));
      case 'super-constructor':
        return this.creation(this.superclass(scope));
      case 'this':
        return scope ? this.method(scope, call.name) : undefined;
      case 'super': {
        const parent = this.superclass(scope);
        return parent ? this.method(parent, call.name) : undefined;
      }
      case 'plain': {
        // The innermost enclosing type that has the method, else a static import.
        for (let t = scope, depth = 0; t && depth < MAX_DEPTH; t = t.outer, depth++) {
          const found = this.method(t, call.name);
          if (found) return found;
        }
        if (!scope) return undefined;
        return this.staticImport(file, call.name);
      }
      case 'member': {
        if (call.receiverField !== undefined) {
          const type = scope ? this.fieldType(scope, call.receiverField) : undefined;
          return type ? this.method(type, call.name) : undefined;
        }
        const receiver = call.receiver!;
        if (call.receiverLocal !== undefined) {
          const type = call.receiverLocal ? this.type(file, typeScope, call.receiverLocal) : undefined;
          return type ? this.method(type, call.name) : undefined;
        }
        // A field of an enclosing type (variables shadow types), else a type: a static call.
        if (!receiver.includes('.')) {
          for (let t = typeScope, depth = 0; t && depth < MAX_DEPTH; t = t.outer, depth++) {
            const field = this.fieldType(t, receiver);
            if (field !== undefined) return field ? this.method(field, call.name) : undefined;
          }
        }
        const type = this.type(file, typeScope, receiver);
        return type ? this.method(type, call.name) : undefined;
      }
    }
  }

  /** `import static a.b.C.m;` or `import static a.b.C.*;` that brings `name`. */
  private staticImport(file: JavaFile, name: string): string | undefined {
    for (const imp of file.imports) {
      if (!imp.isStatic || imp.isWildcard || !imp.name.endsWith(`.${name}`)) continue;
      const owner = this.qualified.get(imp.name.slice(0, -name.length - 1));
      return owner ? this.method(owner, name) : undefined;
    }
    const found = new Set<string>();
    for (const imp of file.imports) {
      if (!imp.isStatic || !imp.isWildcard) continue;
      const owner = this.qualified.get(imp.name);
      const id = owner ? this.method(owner, name) : undefined;
      if (id) found.add(id);
    }
    return found.size === 1 ? [...found][0] : undefined;
  }

  /**
   * IMPORTS edges of a file: to the file of each repository type it imports by name (static
   * imports: the type's file), and to the files of the types it uses through a `*` import or
   * from its own package without importing them.
   */
  linkImports(file: JavaFile): void {
    for (const imp of file.imports) {
      if (imp.isWildcard) continue;
      const name = imp.isStatic ? imp.name.slice(0, imp.name.lastIndexOf('.')) : imp.name;
      const type = this.qualified.get(name);
      if (type && type.file !== file)
        this.graph.addEdge(file.fileId, type.file.fileId, 'IMPORTS', { importPath: imp.name });
    }
    for (const name of file.typeNames) {
      if (file.types.has(name)) continue;
      const type = this.simpleType(file, undefined, name);
      if (!type || type.file === file) continue;
      const imported = file.imports.some((i) => !i.isWildcard && !i.isStatic && this.qualified.get(i.name) === type);
      if (!imported)
        this.graph.addEdge(file.fileId, type.file.fileId, 'IMPORTS', {
          importPath: type.qualifiedName,
          importedName: name,
        });
    }
  }

  /** TESTS edges of a test file: to the repository's (non-test) types it imports or uses by name. */
  linkTests(file: JavaFile): void {
    const names = new Set(file.typeNames);
    for (const imp of file.imports) if (!imp.isWildcard && !imp.isStatic) names.add(imp.name);
    for (const name of names) {
      if (file.types.has(name)) continue;
      const type = name.includes('.')
        ? (this.qualified.get(name) ?? undefined)
        : this.simpleType(file, undefined, name);
      if (type && !type.file.isTest)
        this.graph.addEdge(file.fileId, type.id, 'TESTS', { testedName: type.qualifiedName, testFileType: 'TEST' });
    }
  }

  /** EXTENDS for a class's `extends` and an interface's `extends`; IMPLEMENTS for `implements`. */
  linkHierarchy(type: JavaType): void {
    const parent = this.superclass(type);
    if (parent) this.graph.addEdge(type.id, parent.id, 'EXTENDS', { extendsType: type.superclass });
    for (const text of type.interfaces) {
      const parent = this.type(type.file, type.outer, text);
      if (!parent || parent === type) continue;
      if (type.kind === 'interface') this.graph.addEdge(type.id, parent.id, 'EXTENDS', { extendsType: text });
      else this.graph.addEdge(type.id, parent.id, 'IMPLEMENTS', { implementsType: text });
    }
  }
}
