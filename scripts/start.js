#!/usr/bin/env node
/**
 * `npm start` (`node scripts/start.js serve`): runs src/main.ts from source, as `tsx src/main.ts`
 * did, but imports it as plain JavaScript: the copy of src/ that scripts/transpile.js keeps up to
 * date (each file transpiled again only when its text changed, so an edit to src/ is what the next
 * start runs; why not tsx: see there). A file that does not parse stops the start with esbuild's
 * message. If the copy cannot be written (node_modules read-only), it runs src/ through tsx, saying
 * so — silently when DEVSTREAM_HUB_TSX=1 (set by scripts/test.js for the services the tests start
 * when it fell back to tsx itself).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { outForDisplay, output, ROOT, transpile } from './transpile.js';

async function viaTsx() {
  const { register } = await import('tsx/esm/api');
  register();
  return pathToFileURL(join(ROOT, 'src', 'main.ts')).href;
}

let main;
if (process.env.DEVSTREAM_HUB_TSX === '1') {
  main = await viaTsx();
} else {
  let failed;
  try {
    failed = await transpile(['src']);
  } catch (error) {
    console.warn(`devstream-hub: running src/ through tsx (could not write ${outForDisplay()}: ${error.message})`);
    main = await viaTsx();
  }
  if (failed?.length) {
    for (const { message } of failed) console.error(message);
    process.exit(1);
  }
  main ??= pathToFileURL(output('src/main.ts')).href;
}
process.setSourceMapsEnabled(true);
await import(main);
