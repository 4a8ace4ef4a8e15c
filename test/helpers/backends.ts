import { createScratchDatabase, postgresUrl } from '../../support/postgres.js';
import { openTestDb, pglite, type Backend } from './pglite.js';

export type { Backend, TestDb } from './pglite.js';

function postgres(baseUrl: string): Backend {
  return {
    name: 'postgres',
    async open(options = {}) {
      const scratch = await createScratchDatabase(baseUrl);
      return openTestDb({ databaseUrl: scratch.url }, options.migrate !== false, () => scratch.drop());
    },
  };
}

const baseUrl = await postgresUrl();

/** PGlite always; Postgres too when DATABASE_URL is set (or testcontainers found Docker). */
export const backends: Backend[] = baseUrl ? [pglite, postgres(baseUrl)] : [pglite];

/** The Postgres backend alone, when there is one. */
export const postgresBackend: Backend | undefined = baseUrl ? postgres(baseUrl) : undefined;
export const postgresBaseUrl: string | undefined = baseUrl;
