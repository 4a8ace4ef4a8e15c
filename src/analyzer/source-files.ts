import { execFile } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import ignore, { type Ignore } from 'ignore';

const run = promisify(execFile);

/** Extensions the analyzer reads, by language. */
export const TYPESCRIPT_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts'];
export const JAVASCRIPT_EXTENSIONS = ['.js', '.jsx', '.mjs', '.cjs'];
export const PYTHON_EXTENSIONS = ['.py'];
export const GO_EXTENSIONS = ['.go'];
export const RUST_EXTENSIONS = ['.rs'];
export const JAVA_EXTENSIONS = ['.java'];
const EXTENSIONS = new Set([
  ...TYPESCRIPT_EXTENSIONS,
  ...JAVASCRIPT_EXTENSIONS,
  ...PYTHON_EXTENSIONS,
  ...GO_EXTENSIONS,
  ...RUST_EXTENSIONS,
  ...JAVA_EXTENSIONS,
]);

/** Folders never analyzed, wherever they are: dependencies, build output, caches, virtualenvs. */
const SKIPPED_DIRS = new Set([
  'node_modules',
  'bower_components',
  'jspm_packages',
  'vendor',
  'third_party',
  'dist',
  'build',
  'out',
  'coverage',
  '.nyc_output',
  '.git',
  '.hg',
  '.svn',
  '.next',
  '.nuxt',
  '.svelte-kit',
  '.turbo',
  '.cache',
  '.parcel-cache',
  '.yarn',
  '__pycache__',
  '.venv',
  'venv',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  'site-packages',
]);

/** Files past this size are generated or bundled code, not source worth a graph. */
export const MAX_FILE_BYTES = 1024 * 1024;

export interface SourceFileOptions {
  /** gitignore-style patterns: when given, only files matching one of them are analyzed. */
  include?: string[];
  /** gitignore-style patterns of files (or folders) to leave out. */
  exclude?: string[];
}

export interface SourceFiles {
  /** Repo-relative paths with forward slashes, sorted. */
  files: string[];
  /** Whether git listed them (honouring every .gitignore and .git/info/exclude). */
  hasGit: boolean;
  /** Source files left out for their size (over MAX_FILE_BYTES). */
  oversized: string[];
}

const toPosix = (p: string) => p.split('\\').join('/');

function wanted(path: string): boolean {
  const dot = path.lastIndexOf('.');
  if (dot < 0 || !EXTENSIONS.has(path.slice(dot))) return false;
  if (/\.d\.[cm]?ts$/.test(path) || /[.-]min\.[cm]?js$/.test(path)) return false;
  return !path
    .split('/')
    .slice(0, -1)
    .some((segment) => SKIPPED_DIRS.has(segment));
}

/** `tsconfig.json`, `tsconfig.build.json`…: where a TypeScript project says its compiled output goes. */
const isTsconfig = (path: string) => /(^|\/)tsconfig(\.[\w.-]+)?\.json$/.test(path);

/** A compiled file's possible sources beside it, by the compiled file's extension (tsc's mapping). */
const SOURCE_OF: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

/** Reads a tsconfig (comments and trailing commas allowed, as tsc allows them); null when unreadable. */
async function readTsconfig(
  file: string,
): Promise<{ compilerOptions?: { outDir?: unknown }; extends?: unknown } | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  const { default: ts } = await import('typescript');
  const { config, error } = ts.parseConfigFileTextToJson(file, text);
  return error || typeof config !== 'object' || config === null ? null : config;
}

/**
 * The output folder (`compilerOptions.outDir`) a tsconfig sets, itself or through the configs it
 * `extends` by relative path, as an absolute path: tsc resolves it against the config that names it.
 */
async function outDirOf(file: string, seen = new Set<string>()): Promise<string | null> {
  if (seen.has(file) || seen.size > 10) return null;
  seen.add(file);
  const config = await readTsconfig(file);
  if (!config) return null;
  const outDir = config.compilerOptions?.outDir;
  if (typeof outDir === 'string' && outDir.trim()) return resolve(dirname(file), outDir);
  // `extends` by package name (@tsconfig/node20) sets no outDir worth following.
  const parents = (Array.isArray(config.extends) ? config.extends : [config.extends]).filter(
    (e: unknown): e is string => typeof e === 'string' && (e.startsWith('.') || isAbsolute(e)),
  );
  for (const parent of parents.reverse()) {
    const target = resolve(dirname(file), parent);
    const found = await outDirOf(target.endsWith('.json') ? target : `${target}.json`, seen);
    if (found) return found;
  }
  return null;
}

/**
 * Which of `files` are the compiler's output rather than source: files inside the outDir of a
 * tsconfig in the repository (when that folder lies within `root`, below the tsconfig's own
 * folder), and JavaScript beside a TypeScript source of the same name (`foo.js` next to `foo.ts`,
 * `foo.mjs` next to `foo.mts`). `listed` is every file of the repository.
 */
async function compiledOutput(root: string, listed: string[], files: string[]): Promise<Set<string>> {
  const outDirs: string[] = [];
  for (const config of listed.filter(isTsconfig)) {
    if (
      config
        .split('/')
        .slice(0, -1)
        .some((segment) => SKIPPED_DIRS.has(segment))
    )
      continue;
    const out = await outDirOf(join(root, config));
    if (!out) continue;
    const rel = toPosix(relative(root, out));
    const own = toPosix(relative(root, dirname(join(root, config))));
    // Output beside the sources (outDir ".") or outside the repository: the sibling rule covers it.
    if (rel === '' || rel === own || rel.startsWith('..') || isAbsolute(rel)) continue;
    outDirs.push(`${rel}/`);
  }
  const present = new Set(listed);
  const compiled = new Set<string>();
  for (const file of files) {
    if (outDirs.some((dir) => file.startsWith(dir))) {
      compiled.add(file);
      continue;
    }
    const dot = file.lastIndexOf('.');
    const sources = SOURCE_OF[file.slice(dot)];
    if (sources?.some((ext) => present.has(file.slice(0, dot) + ext))) compiled.add(file);
  }
  return compiled;
}

/**
 * Tracked and untracked-but-not-ignored files, from git; null when `root` is not in a work tree,
 * or git lists nothing there (a folder an enclosing repository ignores: walked instead).
 */
async function gitFiles(root: string): Promise<string[] | null> {
  try {
    const { stdout } = await run('git', ['-C', root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      maxBuffer: 512 * 1024 * 1024,
    });
    const files = [...new Set(stdout.split('\0').filter(Boolean).map(toPosix))];
    return files.length > 0 ? files : null;
  } catch {
    return null;
  }
}

/** A walk of `root` that applies every .gitignore it meets (no symlinks followed). */
async function walkFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  const visit = async (dir: string, rules: Array<{ base: string; ig: Ignore }>) => {
    const gitignore = await readFile(join(dir, '.gitignore'), 'utf8').catch(() => null);
    const here =
      gitignore === null ? rules : [...rules, { base: toPosix(relative(root, dir)), ig: ignore().add(gitignore) }];
    const ignored = (rel: string, isDir: boolean) =>
      here.some(({ base, ig }) => {
        const inner = base ? rel.slice(base.length + 1) : rel;
        return ig.ignores(isDir ? `${inner}/` : inner);
      });
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = toPosix(relative(root, join(dir, entry.name)));
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !ignored(rel, true)) await visit(join(dir, entry.name), here);
      } else if (entry.isFile() && !ignored(rel, false)) {
        files.push(rel);
      }
    }
  };
  await visit(root, []);
  return files;
}

/**
 * The source files of the repository at `root` the analyzer reads: from `git ls-files` when
 * `root` is in a git work tree, else from a walk that applies the .gitignore files it finds.
 * Either way, dependency, build and cache folders (node_modules, dist, vendor, __pycache__…),
 * compiled output (a tsconfig's outDir, and `foo.js` beside `foo.ts`), declaration files, minified
 * bundles and files over 1 MiB are left out, then `include` and `exclude` apply.
 */
export async function listSourceFiles(root: string, options: SourceFileOptions = {}): Promise<SourceFiles> {
  const fromGit = await gitFiles(root);
  const listed = fromGit ?? (await walkFiles(root));
  const sources = listed.filter(wanted);
  const compiled = await compiledOutput(root, listed, sources);
  const candidates = sources.filter((f) => !compiled.has(f));
  const include = options.include?.length ? ignore().add(options.include) : null;
  const exclude = options.exclude?.length ? ignore().add(options.exclude) : null;
  const selected = candidates.filter((f) => (!include || include.ignores(f)) && !(exclude && exclude.ignores(f)));
  // git lists deleted files until the deletion is staged: only files that are there count.
  const sizes = await Promise.all(
    selected.map(async (f) => ({ f, info: await stat(join(root, f)).catch(() => null) })),
  );
  const present = sizes.filter(({ info }) => info?.isFile());
  const files = present
    .filter(({ info }) => info!.size <= MAX_FILE_BYTES)
    .map(({ f }) => f)
    .sort();
  const oversized = present
    .filter(({ info }) => info!.size > MAX_FILE_BYTES)
    .map(({ f }) => f)
    .sort();
  return { files, hasGit: fromGit !== null, oversized };
}
