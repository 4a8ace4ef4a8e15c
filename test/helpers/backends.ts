import { createScratchDatabase, postgresUrl } from '../../support/postgres.js';
import { openTestDb, pglite, type Backend } from './pglite.js';

export type { Backend, TestDb } from './pglite.js';

function postgres(baseUrl: string): Backend {
  return {
    name: 'postgres',
    async open(options = {}) {
      const scratch = await createScratchDatabase(baseUrl);
      return openTestDb(
        { databaseUrl: scratch.url, ...(options.poolSize ? { poolSize: options.poolSize } : {}) },
        options.migrate !== false,
        () => scratch.drop(),
      );
    },
  };
}

const baseUrl = await postgresUrl();

/**
 * PGlite always; Postgres too when DATABASE_URL is set (or testcontainers found Docker).
 * TEST_BACKENDS=postgres (or pglite) keeps only that one: CI runs the PGlite pass first, then
 * Postgres alone, instead of PGlite twice.
 */
const only = process.env.TEST_BACKENDS?.trim();
const available: Backend[] = baseUrl ? [pglite, postgres(baseUrl)] : [pglite];
export const backends: Backend[] = only ? available.filter((b) => only.split(',').includes(b.name)) : available;
if (backends.length === 0)
  throw new Error(`TEST_BACKENDS=${only}: none of ${available.map((b) => b.name).join(', ')} is available here`);

/** The Postgres backend alone, when there is one. */
export const postgresBackend: Backend | undefined = baseUrl ? postgres(baseUrl) : undefined;
export const postgresBaseUrl: string | undefined = baseUrl;

/**
 * For suites that do not depend on the database backend (or take PGlite itself): they run in the
 * PGlite pass, and are skipped when TEST_BACKENDS leaves PGlite out (CI's Postgres pass), where
 * they would only run again.
 */
export const once: { skip: string | false } = {
  skip: backends.some((b) => b.name === 'pglite')
    ? false
    : 'backend-independent: it runs in the PGlite pass (TEST_BACKENDS)',
};
