/**
 * The plain-JavaScript copy of this checkout's TypeScript that `npm start` (scripts/start.js) and
 * `npm test` (scripts/test.js) run instead of going through tsx. Each .ts file under the folders
 * asked for is transpiled by esbuild (tsx's own copy, with the checkout's tsconfig.json) into
 * node_modules/.cache/devstream-hub/js-<checkout>/<folder>/…, again only when its text changed.
 *
 * Why not tsx: on Node 20 its loader runs in a second thread that every module passes through (the
 * service's ~570, most of them in node_modules). Measured on `serve`: ~0.6 s more CPU to start and
 * ~90 MB more resident memory than the same code as plain JavaScript; `help` 0.7 s of CPU against
 * 0.2; importing src/app.ts 2.4-2.9 s of CPU against 1.0-1.2.
 *
 * `import.meta.url` keeps naming the .ts file, so everything found relative to a module
 * (migrations/, web/dist/, package.json, test/fixtures/) is found where it is in the checkout;
 * stack traces point into the .ts files (inline source maps). `import.meta.resolve` resolves from
 * the copy: relative imports between the copies stay inside it (src/, test/ and support/ side by
 * side), packages resolve from the checkout's node_modules, which holds the copy. The copy is an
 * ES module package of its own (its package.json), as the checkout is.
 *
 * Each output's first line names the hash of its source text and of everything the transform
 * depends on (esbuild's version, the options, tsconfig.json): a file is transpiled again when that
 * line differs, so processes transpiling at once cannot leave a copy older than its source marked
 * current. Copies whose source is gone are removed.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
// One copy per checkout: node_modules may be shared (a symlink) by several.
export const OUT = join(
  ROOT,
  'node_modules',
  '.cache',
  'devstream-hub',
  `js-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`,
);
/** The checkout a copy belongs to (for removing the copies of checkouts that are gone). */
const ROOT_FILE = join(OUT, 'root.json');

/** Where the copy of `file` (a path relative to ROOT) is. */
export const output = (file) => join(OUT, file.replace(/\.ts$/, '.js'));

/** test/'s folders that hold data, not modules of the project. */
const DATA_FOLDERS = new Set([join('test', 'fixtures'), join('test', 'artifacts')]);

/** Every .ts file under `dir` (relative to ROOT), as paths relative to ROOT. */
function sources(dir) {
  const files = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!DATA_FOLDERS.has(path)) files.push(...sources(path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** Writes `text` to `file` whole or not at all (a concurrent start may be reading it). */
function writeAtomically(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

/** The first line of `file` (up to 200 bytes), or null when there is no such file. */
function firstLine(file) {
  let fd;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(200);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.toString('utf8', 0, n).split('\n', 1)[0];
  } finally {
    closeSync(fd);
  }
}

/** Removes the copies under `dir` (relative to OUT) whose .ts source is gone. */
function sweep(dir) {
  let entries;
  try {
    entries = readdirSync(join(OUT, dir), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sweep(path);
    else if (entry.name.endsWith('.js') && !existsSync(join(ROOT, path.replace(/\.js$/, '.ts'))))
      rmSync(join(OUT, path), { force: true });
  }
}

/**
 * Brings the copy of these folders (relative to ROOT: 'src', 'test', …) up to date. Returns the
 * files that did not transpile (a syntax error), each with esbuild's message: their copy throws
 * that message when imported, so only what imports them fails, as under tsx. Throws when the copy
 * cannot be written (node_modules read-only: the caller falls back to tsx).
 */
export async function transpile(folders) {
  // Written first: it is also the check that the copy can be written at all.
  const pkg = JSON.stringify({ type: 'module' });
  if (!existsSync(join(OUT, 'package.json')) || readFileSync(join(OUT, 'package.json'), 'utf8') !== pkg)
    writeAtomically(join(OUT, 'package.json'), pkg);
  if (!existsSync(ROOT_FILE)) writeAtomically(ROOT_FILE, JSON.stringify({ root: ROOT }));
  rmSync(join(OUT, 'manifest.json'), { force: true }); // the list of hashes kept before 2026-12-06

  const require = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  const esbuildVersion = JSON.parse(readFileSync(require.resolve('esbuild/package.json'), 'utf8')).version;
  const options = {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    tsconfigRaw: readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'),
  };
  const key = JSON.stringify({ esbuild: esbuildVersion, options });
  const stale = [];
  for (const file of folders.flatMap((folder) => sources(folder))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const hash = createHash('sha256').update(key).update('\0').update(text).digest('hex').slice(0, 32);
    const banner = `// devstream-hub transpile ${hash}`;
    if (firstLine(output(file)) !== banner) stale.push({ file, text, banner });
  }
  const failed = [];
  if (stale.length) {
    const esbuild = require('esbuild'); // its service process is started on first use and stopped below
    try {
      await Promise.all(
        stale.map(async ({ file, text, banner }) => {
          const url = pathToFileURL(join(ROOT, file)).href;
          try {
            // The banner is the first line; the source map counts it.
            const { code } = await esbuild.transform(text, {
              ...options,
              banner,
              sourcefile: url,
              define: { 'import.meta.url': JSON.stringify(url) },
            });
            writeAtomically(output(file), code);
          } catch (error) {
            if (!(error && typeof error === 'object' && 'errors' in error)) throw error;
            failed.push({ file, message: error.message });
            // No banner: transpiled again next time.
            writeAtomically(output(file), `throw new SyntaxError(${JSON.stringify(error.message)});\n`);
          }
        }),
      );
    } finally {
      await esbuild.stop();
    }
  }
  for (const folder of folders) sweep(folder);
  if (stale.length) {
    // Copies made for checkouts that are gone (node_modules shared through a symlink).
    for (const entry of readdirSync(dirname(OUT))) {
      if (!entry.startsWith('js-') || join(dirname(OUT), entry) === OUT) continue;
      // root.json, or the manifest.json of copies made before 2026-12-06.
      const marker = ['root.json', 'manifest.json']
        .map((name) => join(dirname(OUT), entry, name))
        .find((file) => existsSync(file));
      try {
        const { root } = JSON.parse(readFileSync(marker ?? '', 'utf8'));
        if (typeof root === 'string' && !existsSync(join(root, 'src')))
          rmSync(join(dirname(OUT), entry), { recursive: true, force: true });
      } catch {
        /* not ours to judge */
      }
    }
  }
  return failed;
}

/** OUT as a path relative to ROOT, with forward slashes (for messages). */
export const outForDisplay = () => relative(ROOT, OUT).split(sep).join('/');
