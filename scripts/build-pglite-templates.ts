/**
 * `npm run build:pglite-templates` (run by `prepare`, so by `npm ci` and `npm install`): builds the
 * PGlite clusters that fresh data folders are copied from (src/db/pglite-template.ts), a bare one
 * and one with the migrations applied. Never fails the install: without them, a fresh folder runs
 * initdb (and serve the migrations) at its first start.
 */
import { preparePgliteTemplates } from '../src/db/client.js';
import { loadMigrations } from '../src/db/migrate.js';

const started = performance.now();
try {
  const folders = await preparePgliteTemplates(await loadMigrations());
  console.log(
    `PGlite templates ready in ${Math.round(performance.now() - started)} ms: ${Object.values(folders).join(', ')}`,
  );
} catch (error) {
  console.warn(
    `Could not build the PGlite templates (${(error as Error).message}); fresh data folders will run initdb at their first start.`,
  );
}
