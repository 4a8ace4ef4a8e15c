#!/usr/bin/env node
/**
 * `npm start` (`node scripts/start.js serve`): runs src/main.ts from source, as `tsx src/main.ts`
 * did, but imports it as plain JavaScript. Each src/ file is transpiled by esbuild (tsx's own, the
 * same transform tsx applies) into node_modules/.cache/devstream-hub/js-<checkout>, again only when its text
 * changed, so an edit to src/ is what the next start runs. Why not tsx: on Node 20 its loader runs
 * in a second thread that every module of the service (~570, most of them in node_modules) passes
 * through; measured on `serve`: ~0.6 s more CPU to start and ~90 MB more resident memory than the
 * same code as plain JavaScript. `import.meta.url` keeps naming the .ts file, so everything found
 * relative to a module (migrations/, web/dist/, package.json) is found where it is from source;
 * stack traces point into the .ts files (inline source maps). If the cache cannot be written
 * (a read-only checkout), it falls back to tsx.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
// One copy per checkout: node_modules may be shared (a symlink) by several.
const OUT = join(
  ROOT,
  'node_modules',
  '.cache',
  'devstream-hub',
  `js-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`,
);
const MANIFEST = join(OUT, 'manifest.json');

/** Every .ts file under `dir`, as paths relative to SRC. */
function sources(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sources(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(relative(SRC, path));
  }
  return files;
}

/** Where the transpiled copy of a src/ file goes. */
const output = (file) => join(OUT, 'src', file.replace(/\.ts$/, '.js'));

/** Writes `text` to `file` whole or not at all (a concurrent start may be reading it). */
function writeAtomically(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

/** Brings the transpiled copy of src/ up to date; returns the URL of its main.js. */
async function transpile() {
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
  // Outputs depend on the source text, the esbuild version and these options.
  const key = createHash('sha256')
    .update(JSON.stringify({ esbuild: esbuildVersion, options }))
    .digest('hex');
  let manifest = { key, files: {} };
  try {
    const previous = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    if (previous.key === key) manifest = previous;
  } catch {
    /* none yet */
  }
  const files = {};
  const stale = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const hash = createHash('sha256').update(text).digest('hex');
    files[file] = hash;
    if (manifest.files[file] !== hash || !existsSync(output(file))) stale.push({ file, text });
  }
  if (stale.length) {
    const esbuild = require('esbuild'); // its service process is started on first use and stopped below
    try {
      await Promise.all(
        stale.map(async ({ file, text }) => {
          const url = pathToFileURL(join(SRC, file)).href;
          const { code } = await esbuild.transform(text, {
            ...options,
            sourcefile: url,
            define: { 'import.meta.url': JSON.stringify(url) },
          });
          writeAtomically(output(file), code);
        }),
      );
    } finally {
      await esbuild.stop();
    }
  }
  for (const file of Object.keys(manifest.files)) {
    if (!(file in files)) rmSync(output(file), { force: true });
  }
  if (stale.length || Object.keys(files).length !== Object.keys(manifest.files).length) {
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
  return pathToFileURL(join(OUT, 'src', 'main.js')).href;
}

let main;
try {
  main = await transpile();
} catch (error) {
  if (error && typeof error === 'object' && 'errors' in error) throw error; // a syntax error in src/: esbuild's report
  console.warn(
    `devstream-hub: running src/ through tsx (could not write ${relative(ROOT, OUT).split(sep).join('/')}: ${error.message})`,
  );
  const { register } = await import('tsx/esm/api');
  register();
  main = pathToFileURL(join(SRC, 'main.ts')).href;
}
process.setSourceMapsEnabled(true);
await import(main);
