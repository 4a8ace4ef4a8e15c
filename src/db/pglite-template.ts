import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCK_FILE } from './data-dir-lock.js';

/**
 * A fresh PGlite data folder starts as a copy of a template cluster instead of running initdb
 * (and, for `serve`, the migrations). initdb was most of a first start (measured: 2.1 s of 3.0 s
 * on an idle machine, in a second Postgres instance in WASM whose memory the process kept), and
 * running the ten migrations costs ~0.5 s of CPU and ~45 MB of resident memory (the WASM code of
 * every Postgres function DDL needs, compiled on first call and kept); a copy takes ~0.1 s.
 *
 * Two kinds, kept in node_modules/.cache/devstream-hub/ (which `npm ci` empties):
 * - `initdb-<base>`: the cluster PGlite's own initdb makes, opened once and shut down cleanly;
 * - `migrated-<base>-<migrations>`: the same with a given list of migrations applied.
 * `<base>` names the PGlite and pgvector versions and the start parameters (a cluster is only valid
 * for the Postgres build that made it); templates of another base are removed when one is built.
 * `npm ci` / `npm install` build both for the current migrations (the `prepare` script); a fresh
 * start that finds none builds it. Where the cache cannot be written, PGlite's initdb runs as before.
 */

/** Where templates are kept: the package's node_modules/.cache. */
export const TEMPLATE_CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/devstream-hub/', import.meta.url));

/** Bumped when what a template holds, or how it is made, changes. */
const TEMPLATE_FORMAT = 1;

const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12);

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

/** A template: its folder's name in the cache, and how to make the cluster in an empty folder. */
export interface Template {
  name: string;
  /** Makes the cluster in `dataDir` (empty, private) and leaves it shut down. */
  build(dataDir: string): Promise<void>;
}

/**
 * The names of the two kinds of template for these start parameters; `migrations` (version and
 * checksum of each) names the migrated one.
 */
export function templateNames(
  startParams: readonly string[],
  migrations: ReadonlyArray<{ version: number; checksum: string }> = [],
): { initdb: string; migrated: string } {
  const base = hash({
    format: TEMPLATE_FORMAT,
    pglite: packageVersion('@electric-sql/pglite'),
    pgvector: packageVersion('@electric-sql/pglite-pgvector'),
    startParams,
  });
  return {
    initdb: `initdb-${base}`,
    migrated: `migrated-${base}-${hash(migrations.map((m) => [m.version, m.checksum]))}`,
  };
}

/** The `<base>` part of a template's (or a half-built template's) folder name; null for anything else. */
function baseOf(entry: string): string | null {
  return /^\.?(?:initdb|migrated)-([0-9a-f]{12})(?:-|$)/.exec(entry)?.[1] ?? null;
}

/**
 * The template's folder in `cacheDir`, made first unless it is there: built in a private folder,
 * then renamed into place (atomic: a caller that loses the race uses the winner's). Templates of
 * another base (an older PGlite) are removed then.
 */
export async function buildTemplate(cacheDir: string, template: Template): Promise<string> {
  const folder = join(cacheDir, template.name);
  if (existsSync(folder)) return folder;
  mkdirSync(cacheDir, { recursive: true });
  const building = mkdtempSync(join(cacheDir, `.${template.name}-`));
  try {
    await template.build(building);
    if (!existsSync(join(building, 'PG_VERSION'))) throw new Error('no cluster was made');
    try {
      renameSync(building, folder);
    } catch (error) {
      if (!existsSync(folder)) throw error;
      rmSync(building, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
  const base = baseOf(template.name);
  for (const entry of readdirSync(cacheDir)) {
    const other = baseOf(entry);
    if (other !== null && other !== base) rmSync(join(cacheDir, entry), { recursive: true, force: true });
  }
  return folder;
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
 * Copies the template into `dataDir` when the folder is fresh (see isFresh), building the template
 * first if needed. PG_VERSION, by which PGlite tells a cluster from an empty folder, goes last, so
 * a copy cut short leaves a folder that is still fresh and is copied again. Returns whether it
 * copied; `false` (folder not fresh, or the template could not be built) leaves the folder as it was.
 */
export async function seedFromTemplate(dataDir: string, cacheDir: string, template: Template): Promise<boolean> {
  if (readdirSync(dataDir).includes('PG_VERSION')) return false;
  let folder: string;
  try {
    folder = await buildTemplate(cacheDir, template);
  } catch {
    return false; // e.g. a read-only node_modules, or a migration that fails (migrate() will say so)
  }
  if (!isFresh(dataDir, folder)) return false;
  for (const entry of readdirSync(folder)) {
    if (entry !== 'PG_VERSION') cpSync(join(folder, entry), join(dataDir, entry), { recursive: true, force: true });
  }
  copyFileSync(join(folder, 'PG_VERSION'), join(dataDir, 'PG_VERSION'));
  return true;
}
