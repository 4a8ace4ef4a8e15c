import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';

/** The `module` path a go.mod declares (`module example.com/m`, quoted or not, a comment after it). */
export function modulePath(goMod: string): string | undefined {
  for (const raw of goMod.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('module')) continue;
    let rest = line.slice('module'.length);
    if (rest !== '' && rest[0] !== ' ' && rest[0] !== '\t' && rest[0] !== '"') continue;
    const comment = rest.indexOf('//');
    if (comment >= 0) rest = rest.slice(0, comment);
    rest = rest.trim();
    if (rest.startsWith('"') && rest.endsWith('"') && rest.length >= 2) rest = rest.slice(1, -1);
    return rest || undefined;
  }
  return undefined;
}

/**
 * Where the repository's import paths lead: each folder's module is the go.mod nearest above it
 * (nested modules included), and an import path `<module>/<rest>` is the folder `<module's
 * folder>/<rest>` when that folder holds Go files. Standard-library and third-party paths lead nowhere.
 */
export class GoModuleIndex {
  /** go.mod folder → its module path; `null` when there is none or it declares none. */
  private readonly modules = new Map<string, string | null>();
  /** Import path → folder (or undefined), as files of a package import the same paths. */
  private readonly resolved = new Map<string, string | undefined>();

  private constructor(private readonly folders: Set<string>) {}

  /** Reads the go.mod of every folder that holds Go files and of their ancestors (each once). */
  static async load(root: string, folders: Set<string>): Promise<GoModuleIndex> {
    const index = new GoModuleIndex(folders);
    for (const folder of folders) {
      for (let at = folder; ; at = parent(at)) {
        if (index.modules.has(at)) break;
        const text = await readFile(join(root, at, 'go.mod'), 'utf8').catch(() => undefined);
        index.modules.set(at, text === undefined ? null : (modulePath(text) ?? null));
        if (at === '') break;
      }
    }
    return index;
  }

  /** The folder (repository-relative, '' for the root) an import path names, if the repository holds it. */
  resolve(importPath: string): string | undefined {
    if (this.resolved.has(importPath)) return this.resolved.get(importPath);
    const folder = this.find(importPath);
    this.resolved.set(importPath, folder);
    return folder;
  }

  private find(importPath: string): string | undefined {
    let best: { folder: string; module: string } | undefined;
    for (const [folder, module] of this.modules) {
      if (!module || (importPath !== module && !importPath.startsWith(`${module}/`))) continue;
      if (!best || module.length > best.module.length) best = { folder, module };
    }
    if (!best) return undefined;
    const rest = importPath.slice(best.module.length + 1);
    const target = rest ? posix.join(best.folder, rest) : best.folder;
    return this.folders.has(target) ? target : undefined;
  }
}

/** The parent of a repository-relative folder; '' is the root. */
const parent = (folder: string) => (folder.includes('/') ? folder.slice(0, folder.lastIndexOf('/')) : '');
