import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { LOCK_FILE } from './data-dir-lock.js';

/**
 * A fresh PGlite data folder starts as a copy of a template instead of running initdb: the cluster
 * PGlite's own initdb makes, opened once and shut down cleanly, as every folder is after its first
 * stop. initdb is most of a first start (measured: 2.1 s of 3.0 s on an idle machine, with a
 * second Postgres instance in WASM that the process keeps ~130 MB of afterwards); a copy takes
 * ~0.2 s. Nothing else is in the template, so the migrations run on a fresh folder exactly as they
 * did before. Templates are kept in node_modules/.cache/devstream-hub/, one per PGlite,
 * pgvector and settings version, built by `npm ci` / `npm install` (the `prepare` script) or by
 * the first fresh start that finds none. Where that folder cannot be written (a read-only image),
 * PGlite's own initdb runs as before.
 */

/** Where templates are kept: the package's node_modules/.cache (rebuilt whenever `npm ci` runs). */
export const TEMPLATE_CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/devstream-hub/', import.meta.url));

/** Bumped when what a template holds, or how it is made, changes. */
const TEMPLATE_FORMAT = 1;

/** The version in an installed package's package.json (found from its entry point upwards). */
function packageVersion(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the version of ${name}`);
    dir = up;
  }
}

/**
 * The template's name for these start parameters: it changes with the PGlite and pgvector
 * versions (a cluster is only valid for the Postgres build that made it) and the parameters.
 */
export function templateName(startParams: readonly string[]): string {
  const key = JSON.stringify({
    format: TEMPLATE_FORMAT,
    pglite: packageVersion('@electric-sql/pglite'),
    pgvector: packageVersion('@electric-sql/pglite-pgvector'),
    startParams,
  });
  return `pglite-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

/**
 * A folder that has never held a cluster: no PG_VERSION, and nothing but the data-folder lock and
 * entries a template has (left by a copy that was cut short: PG_VERSION is copied last).
 */
function isFresh(dataDir: string, template: string): boolean {
  const entries = readdirSync(dataDir);
  if (entries.includes('PG_VERSION')) return false;
  const known = new Set(readdirSync(template));
  return entries.every((entry) => entry === LOCK_FILE || known.has(entry));
}

/**
 * Makes the template at `cacheDir/name` unless it is there: `open` runs PGlite's initdb in a
 * private folder, the cluster is closed and the folder renamed into place (atomic: a process that
 * loses the race uses the winner's). Templates of other versions are removed.
 */
export async function buildTemplate(cacheDir: string, name: string, open: (dataDir: string) => Promise<PGlite>): Promise<string> {
  const template = join(cacheDir, name);
  if (existsSync(template)) return template;
  mkdirSync(cacheDir, { recursive: true });
  const building = mkdtempSync(join(cacheDir, `.${name}-`));
  try {
    const pglite = await open(building);
    await pglite.close();
    if (!existsSync(join(building, 'PG_VERSION'))) throw new Error('PGlite made no cluster');
    try {
      renameSync(building, template);
    } catch (error) {
      if (!existsSync(template)) throw error;
      rmSync(building, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
  for (const entry of readdirSync(cacheDir)) {
    if (/^\.?pglite-/.test(entry) && entry !== name && !entry.startsWith(`.${name}-`)) {
      rmSync(join(cacheDir, entry), { recursive: true, force: true });
    }
  }
  return template;
}

/**
 * Copies the template into `dataDir` when the folder is fresh (see isFresh), building the template
 * first if needed. PG_VERSION, by which PGlite tells a cluster from an empty folder, goes last, so
 * a copy cut short leaves a folder that is still fresh and is copied again. Returns whether it
 * copied; `false` (folder not fresh, or no template could be built) leaves the folder to PGlite.
 */
export async function seedFromTemplate(
  dataDir: string,
  options: { cacheDir: string; name: string; open: (dataDir: string) => Promise<PGlite> },
): Promise<boolean> {
  if (readdirSync(dataDir).includes('PG_VERSION')) return false;
  let template: string;
  try {
    template = await buildTemplate(options.cacheDir, options.name, options.open);
  } catch {
    return false; // e.g. a read-only node_modules: PGlite's own initdb runs instead
  }
  if (!isFresh(dataDir, template)) return false;
  for (const entry of readdirSync(template)) {
    if (entry !== 'PG_VERSION') cpSync(join(template, entry), join(dataDir, entry), { recursive: true, force: true });
  }
  copyFileSync(join(template, 'PG_VERSION'), join(dataDir, 'PG_VERSION'));
  return true;
}
