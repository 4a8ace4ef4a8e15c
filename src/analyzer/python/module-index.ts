/**
 * Where a Python module lives: dotted names → repo-relative files. A file is known by its path
 * from the repository root (`src/app/db.py` → `src.app.db`) and by its path from the folder above
 * its topmost package (`app.db` when `src/app/__init__.py` exists and `src/__init__.py` does not),
 * which is how it is imported when that folder is on sys.path. When the analyzed folder is itself a
 * package (it holds `__init__.py`), its modules are also known under the folder's name
 * (`email.utils` for `utils.py` in a folder `email`).
 */
export class PythonModuleIndex {
  private readonly byName = new Map<string, string>();
  private readonly files: Set<string>;

  constructor(paths: string[], rootName?: string) {
    this.files = new Set(paths);
    const names: Array<[string, string]> = [];
    for (const path of paths) {
      const parts = path.replace(/\.py$/, '').split('/');
      if (parts[parts.length - 1] === '__init__') parts.pop();
      names.push([parts.join('.'), path]);
    }
    for (const path of paths) {
      const dirs = path.split('/').slice(0, -1);
      let top = dirs.length;
      while (top > 0 && this.files.has([...dirs.slice(0, top), '__init__.py'].join('/'))) top--;
      const parts = path.replace(/\.py$/, '').split('/').slice(top);
      if (parts[parts.length - 1] === '__init__') parts.pop();
      if (parts.length > 0) names.push([parts.join('.'), path]);
    }
    if (rootName && this.files.has('__init__.py')) {
      for (const [name, path] of [...names]) names.push([name ? `${rootName}.${name}` : rootName, path]);
    }
    // Full names first: a module's own path wins over a shorter name another file also has.
    for (const [name, path] of names) if (name && !this.byName.has(name)) this.byName.set(name, path);
  }

  /** The file of `import a.b.c`, if the repository holds it. */
  absolute(dotted: string): string | undefined {
    return this.byName.get(dotted);
  }

  /** The file of `from ..a.b import …` (`level` dots) written in `fromPath`. */
  relative(fromPath: string, level: number, dotted: string): string | undefined {
    const dirs = fromPath.split('/').slice(0, -1);
    if (level - 1 > dirs.length) return undefined;
    const base = dirs.slice(0, dirs.length - (level - 1));
    const parts = [...base, ...(dotted ? dotted.split('.') : [])];
    const stem = parts.join('/');
    for (const candidate of [`${stem}.py`, `${stem ? `${stem}/` : ''}__init__.py`])
      if (this.files.has(candidate)) return candidate;
    return undefined;
  }

  /** `import`ed module `dotted` (with `level` leading dots) as written in `fromPath`. */
  resolve(fromPath: string, level: number, dotted: string): string | undefined {
    return level > 0 ? this.relative(fromPath, level, dotted) : this.absolute(dotted);
  }
}
