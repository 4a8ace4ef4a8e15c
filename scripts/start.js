#!/usr/bin/env node
/**
 * `npm start` (`node scripts/start.js serve`): runs src/main.ts from source, as `tsx src/main.ts`
 * did, but imports it as plain JavaScript: the copy of src/ that scripts/transpile.js keeps up to
 * date (each file transpiled again only when its text changed, so an edit to src/ is what the next
 * start runs; why not tsx: see there). If the copy cannot be written (a read-only checkout), it
 * falls back to tsx.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { outForDisplay, output, ROOT, transpile } from './transpile.js';

let main;
try {
  await transpile(['src']);
  main = pathToFileURL(output('src/main.ts')).href;
} catch (error) {
  if (error && typeof error === 'object' && 'errors' in error) throw error; // a syntax error in src/: esbuild's report
  console.warn(`devstream-hub: running src/ through tsx (could not write ${outForDisplay()}: ${error.message})`);
  const { register } = await import('tsx/esm/api');
  register();
  main = pathToFileURL(join(ROOT, 'src', 'main.ts')).href;
}
process.setSourceMapsEnabled(true);
await import(main);
