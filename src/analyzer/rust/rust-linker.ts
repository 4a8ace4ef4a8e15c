import { posix } from 'node:path';
import type { GraphBuilder } from '../graph-builder.js';
import type { RsCall, RsFile, RsImpl, RsModule, RsTrait } from './rust-file.js';

/** What a path resolves to: a graph node, or a module. */
type Target = { kind: 'node'; id: string } | { kind: 'module'; module: RsModule };

/** How far a name is followed through `use` re-exports and globs. */
const MAX_DEPTH = 8;

/** `a/b.rs`'s `mod x;` is `a/b/x.rs`; a `mod.rs`, `lib.rs` or `main.rs` (and a crate root) owns its folder. */
function childFiles(module: RsModule, name: string, pathAttribute: string | undefined, isRoot: boolean): string[] {
  const dir = posix.dirname(module.path);
  if (pathAttribute !== undefined) return [posix.normalize(posix.join(dir, pathAttribute))];
  const base = posix.basename(module.path);
  const inline = module.prefix === '' ? '' : `${module.prefix.slice(0, -1).split('.').join('/')}/`;
  const owns = base === 'mod.rs' || base === 'lib.rs' || base === 'main.rs';
  const own = `${dir === '.' ? '' : `${dir}/`}${base.slice(0, -'.rs'.length)}/${inline}`;
  const beside = `${dir === '.' ? '' : `${dir}/`}${inline}`;
  const folders = owns ? [beside] : isRoot ? [own, beside] : [own];
  return folders.flatMap((f) => [`${f}${name}.rs`, `${f}${name}/mod.rs`]);
}

/**
 * Resolution across the Rust files of one repository: the module tree (`mod x;` → `x.rs` or
 * `x/mod.rs`), `use` paths (`crate::`, `self::`, `super::`, aliases, globs, re-exports), and the
 * methods of each type (its impl blocks, the traits it implements and their supertraits).
 */
export class RustLinker {
  private readonly fileModules = new Map<string, RsModule>();
  private readonly methodsOf = new Map<string, Map<string, string>>();
  private readonly traitsOf = new Map<string, string[]>();
  private readonly traits = new Map<string, RsTrait>();
  private readonly methodIds = new Map<string, string[]>();
  /** Method names of impls of traits from outside the repository (`clone`, `fmt`, `next`): any type may have them. */
  private readonly foreignTraitMethods = new Set<string>();
  private readonly lookups = new Map<RsModule, Map<string, Target | null>>();

  /**
   * @param crates the repository's library crates by the name other crates `use` them by
   *   (Cargo.toml's, `-` as `_`) → the path of their `lib.rs`.
   */
  constructor(
    private readonly files: RsFile[],
    private readonly graph: GraphBuilder,
    private readonly crates: Map<string, string> = new Map(),
  ) {
    for (const file of files) this.fileModules.set(file.path, file.module);
    for (const file of files) {
      for (const trait of file.traits) this.traits.set(trait.id, trait);
      for (const [name, ids] of file.methodNames)
        this.methodIds.set(name, [...(this.methodIds.get(name) ?? []), ...ids]);
    }
  }

  /** Links `mod x;` declarations to their files (IMPORTS edges), then the impls to their types. */
  linkModules(): void {
    const reached = new Set<string>();
    for (const file of this.files)
      for (const module of this.modulesOf(file.module))
        for (const { name } of module.mods) for (const p of childFiles(module, name, undefined, false)) reached.add(p);
    for (const file of this.files) {
      for (const module of this.modulesOf(file.module)) {
        for (const { name, pathAttribute } of module.mods) {
          const isRoot = module.prefix === '' && !reached.has(file.path);
          const child = childFiles(module, name, pathAttribute, isRoot)
            .map((p) => this.fileModules.get(p))
            .find((m) => m !== undefined);
          if (!child || child === file.module || child.parent || module.children.has(name)) continue;
          child.parent = module;
          module.children.set(name, child);
          this.graph.addEdge(file.fileId, child.fileId, 'IMPORTS', { importPath: `mod ${name}` });
        }
      }
    }
  }

  /** Registers every impl's methods under its type, and which traits the type implements. */
  linkImpls(): void {
    for (const file of this.files) {
      for (const impl of file.impls) {
        const trait = impl.traitPath ? this.resolve(impl.module, impl.traitPath) : undefined;
        const ownTrait = trait?.kind === 'node' && this.traits.has(trait.id) ? trait.id : undefined;
        if (impl.traitPath && !ownTrait) for (const name of impl.methods.keys()) this.foreignTraitMethods.add(name);
        const type = this.resolve(impl.module, impl.typePath);
        if (type?.kind !== 'node') continue;
        const methods = this.methodsOf.get(type.id) ?? new Map<string, string>();
        for (const [name, id] of impl.methods) if (!methods.has(name)) methods.set(name, id);
        this.methodsOf.set(type.id, methods);
        if (ownTrait) {
          this.traitsOf.set(type.id, [...(this.traitsOf.get(type.id) ?? []), ownTrait]);
          this.graph.addEdge(type.id, ownTrait, 'IMPLEMENTS', { implementsType: impl.traitPath!.join('::') });
        }
      }
      for (const trait of file.traits) {
        for (const written of trait.supertraits) {
          const target = this.resolve(trait.module, written);
          if (target?.kind === 'node' && this.traits.has(target.id))
            this.graph.addEdge(trait.id, target.id, 'EXTENDS', { extendsType: written.join('::') });
        }
      }
    }
  }

  /** IMPORTS edges of `use` declarations that name another file's module or item. */
  linkUses(file: RsFile): void {
    for (const module of this.modulesOf(file.module)) {
      for (const use of module.uses) {
        const target = this.resolve(module, use.segments);
        const to =
          target?.kind === 'module' ? target.module.path : target ? this.graph.node(target.id)?.filePath : undefined;
        if (to && to !== file.path)
          this.graph.addEdge(file.fileId, `file::${to}`, 'IMPORTS', { importPath: use.segments.join('::') });
      }
    }
  }

  /** The node a call names, or undefined when it is outside the repository or ambiguous. */
  callee(call: RsCall): string | undefined {
    const [head, second] = call.segments;
    if (call.kind === 'method') {
      // Unique in the repository, and not a name a trait from elsewhere gives every type implementing it.
      if (this.foreignTraitMethods.has(head!)) return undefined;
      const ids = this.methodIds.get(head!) ?? [];
      return ids.length === 1 ? ids[0] : undefined;
    }
    if (call.kind === 'self') return this.contextMethod(call, head!);
    if (head === 'Self') return call.segments.length === 2 ? this.contextMethod(call, second!) : undefined;
    const target = this.resolve(call.module, call.segments);
    return target?.kind === 'node' ? target.id : undefined;
  }

  /** `self.m()` / `Self::m()`: the impl's own block, its type's other methods, then the traits'. */
  private contextMethod(call: RsCall, name: string): string | undefined {
    const context = call.context;
    if (!context) return undefined;
    if ('trait' in context) return this.traitMethod(context.trait.id, name);
    const impl: RsImpl = context.impl;
    const own = impl.methods.get(name);
    if (own) return own;
    const type = this.resolve(impl.module, impl.typePath);
    if (type?.kind === 'node') return this.method(type.id, name);
    const trait = impl.traitPath ? this.resolve(impl.module, impl.traitPath) : undefined;
    return trait?.kind === 'node' ? this.traitMethod(trait.id, name) : undefined;
  }

  /** A method of a type (impl blocks), else a default method of a trait it implements. */
  private method(typeId: string, name: string): string | undefined {
    if (this.traits.has(typeId)) return this.traitMethod(typeId, name);
    const own = this.methodsOf.get(typeId)?.get(name);
    if (own) return own;
    for (const trait of this.traitsOf.get(typeId) ?? []) {
      const found = this.traitMethod(trait, name);
      if (found) return found;
    }
    return undefined;
  }

  private traitMethod(traitId: string, name: string, depth = 0): string | undefined {
    const trait = this.traits.get(traitId);
    if (!trait || depth > MAX_DEPTH) return undefined;
    const own = trait.methods.get(name);
    if (own) return own;
    for (const written of trait.supertraits) {
      const target = this.resolve(trait.module, written);
      const found = target?.kind === 'node' ? this.traitMethod(target.id, name, depth + 1) : undefined;
      if (found) return found;
    }
    return undefined;
  }

  /** A path from a module: `crate::`, `self::`, `super::` or a name in scope, then through modules and types. */
  resolve(from: RsModule, segments: string[], depth = 0): Target | undefined {
    if (depth > MAX_DEPTH || segments.length === 0) return undefined;
    const [head, ...rest] = segments;
    let current: Target | undefined;
    if (head === 'crate') current = { kind: 'module', module: this.crateRoot(from) };
    else if (head === 'self') current = { kind: 'module', module: from };
    else if (head === 'super') current = from.parent ? { kind: 'module', module: from.parent } : undefined;
    else current = this.lookup(from, head!, depth) ?? this.externCrate(head!);
    for (const part of rest) {
      if (!current) return undefined;
      if (current.kind === 'module') {
        if (part === 'super') {
          const parent = current.module.parent;
          current = parent ? { kind: 'module', module: parent } : undefined;
        } else current = part === 'self' ? current : this.lookup(current.module, part, depth);
      } else {
        const method = this.method(current.id, part);
        current = method ? { kind: 'node', id: method } : undefined;
      }
    }
    return current;
  }

  /**
   * A name in a module: its items and child modules, then its `use` bindings, then its globs.
   * Memoized, and a name being looked up already (a cycle of globs or re-exports) is not found:
   * without that, modules gluing each other with `use super::*` cost exponential time.
   */
  private lookup(module: RsModule, name: string, depth: number): Target | undefined {
    let cached = this.lookups.get(module);
    if (!cached) this.lookups.set(module, (cached = new Map()));
    if (cached.has(name)) return cached.get(name) ?? undefined;
    cached.set(name, null);
    const found = this.lookupUncached(module, name, depth);
    cached.set(name, found ?? null);
    return found;
  }

  private lookupUncached(module: RsModule, name: string, depth: number): Target | undefined {
    const item = module.items.get(name);
    if (item) return { kind: 'node', id: item };
    const child = module.children.get(name);
    if (child) return { kind: 'module', module: child };
    if (depth >= MAX_DEPTH) return undefined;
    for (const use of module.uses) {
      if (use.glob || use.alias !== name) continue;
      // `use a::b` names b; resolving `a` must not come back to this same binding.
      if (use.segments.length === 1 && use.segments[0] === name) continue;
      const found = this.resolve(module, use.segments, depth + 1);
      if (found) return found;
    }
    for (const use of module.uses) {
      if (!use.glob) continue;
      const target = this.resolve(module, use.segments, depth + 1);
      const found = target?.kind === 'module' ? this.lookup(target.module, name, depth + 1) : undefined;
      if (found) return found;
    }
    return undefined;
  }

  /** A library crate of the repository named by another crate (`use circles::Circle`). */
  private externCrate(name: string): Target | undefined {
    const path = this.crates.get(name);
    const module = path ? this.fileModules.get(path) : undefined;
    return module ? { kind: 'module', module } : undefined;
  }

  private crateRoot(module: RsModule): RsModule {
    let at = module;
    for (let steps = 0; at.parent && steps < 1000; steps++) at = at.parent;
    return at;
  }

  /** A file's module and its inline modules, breadth first, without recursion. */
  private modulesOf(root: RsModule): RsModule[] {
    const out: RsModule[] = [root];
    for (let i = 0; i < out.length; i++)
      for (const child of out[i]!.children.values())
        if (child.path === root.path && child.parent === out[i]) out.push(child);
    return out;
  }
}
