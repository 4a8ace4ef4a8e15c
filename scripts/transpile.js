/**
 * The plain-JavaScript copy of this checkout's TypeScript that `npm start` (scripts/start.js) and
 * `npm test` (scripts/test.js) run instead of going through tsx. Each .ts file under the folders
 * asked for is transpiled by esbuild (tsx's own, the same transform tsx applies) into
 * node_modules/.cache/devstream-hub/js-<checkout>/<folder>/…, again only when its text changed.
 *
 * Why not tsx: on Node 20 its loader runs in a second thread that every module passes through (the
 * service's ~570, most of them in node_modules). Measured on `serve`: ~0.6 s more CPU to start and
 * ~90 MB more resident memory than the same code as plain JavaScript; `help` 0.7 s of CPU against
 * 0.2; importing src/app.ts 2.4-2.9 s of CPU against 1.0-1.2.
 *
 * `import.meta.url` keeps naming the .ts file, so everything found relative to a module
 * (migrations/, web/dist/, package.json, test/fixtures/) is found where it is in the checkout;
 * stack traces point into the .ts files (inline source maps). Relative imports between the copies
 * resolve inside the copy (src/, test/ and support/ stay side by side); packages resolve from the
 * checkout's node_modules, which holds the copy.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
const MANIFEST = join(OUT, 'manifest.json');

/** Where the copy of `file` (a path relative to ROOT) is. */
export const output = (file) => join(OUT, file.replace(/\.ts$/, '.js'));

/** Every .ts file under `dir` (relative to ROOT), as paths relative to ROOT; fixtures are data, not code. */
function sources(dir) {
  const files = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'fixtures' && entry.name !== 'artifacts') files.push(...sources(path));
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

/**
 * Brings the copy of these folders (relative to ROOT: 'src', 'test', …) up to date; returns OUT.
 * Throws when the copy cannot be written (a read-only checkout: the caller falls back to tsx) or a
 * file does not parse (esbuild's report: an `errors` array).
 */
export async function transpile(folders) {
  const require = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  const esbuildVersion = JSON.parse(readFileSync(require.resolve('esbuild/package.json'), 'utf8')).version;
  const tsconfigRaw = readFileSync(join(ROOT, 'tsconfig.json'), 'utf8');
  const options = {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    tsconfigRaw,
  };
  // Outputs depend on the source text, the esbuild version and these options (and the manifest's
  // layout: its files named from ROOT).
  const key = createHash('sha256')
    .update(JSON.stringify({ esbuild: esbuildVersion, options, layout: 2 }))
    .digest('hex');
  let manifest = { key, files: {} };
  try {
    const previous = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    if (previous.key === key) manifest = previous;
  } catch {
    /* none yet */
  }
  // The files of other folders stay listed while their source is there (start.js copies src/ alone).
  const files = Object.fromEntries(Object.entries(manifest.files).filter(([file]) => existsSync(join(ROOT, file))));
  const stale = [];
  for (const file of folders.flatMap((folder) => sources(folder))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const hash = createHash('sha256').update(text).digest('hex');
    if (manifest.files[file] !== hash || !existsSync(output(file))) stale.push({ file, text, hash });
    else files[file] = hash;
  }
  if (stale.length) {
    const esbuild = require('esbuild'); // its service process is started on first use and stopped below
    try {
      await Promise.all(
        stale.map(async ({ file, text, hash }) => {
          const url = pathToFileURL(join(ROOT, file)).href;
          const { code } = await esbuild.transform(text, {
            ...options,
            sourcefile: url,
            define: { 'import.meta.url': JSON.stringify(url) },
          });
          writeAtomically(output(file), code);
          files[file] = hash;
        }),
      );
    } finally {
      await esbuild.stop();
    }
  }
  const gone = Object.keys(manifest.files).filter((file) => !(file in files));
  for (const file of gone) rmSync(output(file), { force: true });
  if (stale.length || gone.length) {
    writeAtomically(MANIFEST, JSON.stringify({ key, root: ROOT, files }));
    // Copies made for checkouts that are gone (node_modules shared through a symlink).
    for (const entry of readdirSync(dirname(OUT))) {
      if (!entry.startsWith('js-') || join(dirname(OUT), entry) === OUT) continue;
      try {
        const { root } = JSON.parse(readFileSync(join(dirname(OUT), entry, 'manifest.json'), 'utf8'));
        if (typeof root === 'string' && !existsSync(join(root, 'src')))
          rmSync(join(dirname(OUT), entry), { recursive: true, force: true });
      } catch {
        /* not ours to judge */
      }
    }
  }
  return OUT;
}

/** OUT as a path relative to ROOT, with forward slashes (for messages). */
export const outForDisplay = () => relative(ROOT, OUT).split(sep).join('/');
