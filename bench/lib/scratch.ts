import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../../support/postgres.js';

/** Where the benchmarked service keeps its data, and how to remove it afterwards. */
export interface Scratch {
  kind: 'postgres' | 'pglite';
  /** For the bench's own connection (openDb). */
  dbOptions: { databaseUrl?: string; dataDir?: string };
  /** Environment for the service child process. */
  env: Record<string, string>;
  /** Human-readable location, never with credentials. */
  label: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the server at `baseUrl`, dropped by `drop()`. */
export async function scratchPostgres(baseUrl: string): Promise<Scratch> {
  const scratch = await createScratchDatabase(baseUrl, 'dsh_bench');
  const url = new URL(scratch.url);
  return {
    kind: 'postgres',
    dbOptions: { databaseUrl: scratch.url },
    env: { DATABASE_URL: scratch.url },
    label: `${url.hostname}:${url.port || 5432}/${scratch.name}`,
    drop: () => scratch.drop(),
  };
}

/** A fresh PGlite data directory, removed by `drop()`. */
export async function scratchPglite(): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-pglite-'));
  return {
    kind: 'pglite',
    dbOptions: { dataDir: dir },
    // Empty: unset for the service. A child inherits the benchmark's environment, and one that
    // kept the DATABASE_URL a run was started with served Postgres (bench:tasks -- --pglite did).
    env: { DATA_DIR: dir, DATABASE_URL: '' },
    label: `PGlite in ${dir}`,
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}
