/**
 * `npm run build:pglite-template` (run by `prepare`, so by `npm ci` and `npm install`): builds the
 * PGlite cluster that fresh data folders are copied from (src/db/pglite-template.ts). Never fails
 * the install: without a template, a fresh folder runs initdb as before.
 */
import { preparePgliteTemplate } from '../src/db/client.js';

const started = performance.now();
try {
  const dir = await preparePgliteTemplate();
  console.log(`PGlite template ready in ${Math.round(performance.now() - started)} ms: ${dir}`);
} catch (error) {
  console.warn(`Could not build the PGlite template (${(error as Error).message}); fresh data folders will run initdb at their first start.`);
}
