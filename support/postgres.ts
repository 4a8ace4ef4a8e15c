import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Where the Postgres half of the suite runs: a testcontainers pgvector container when a Docker
 * engine answers, else DATABASE_URL, else nowhere (the suite runs on PGlite only). The Docker probe
 * fails fast: no socket and no DOCKER_HOST means no attempt at all.
 */
export async function postgresUrl(): Promise<string | undefined> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (!(process.env.DOCKER_HOST || existsSync('/var/run/docker.sock'))) return undefined;
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await withTimeout(new PostgreSqlContainer('pgvector/pgvector:pg16').start(), 90_000);
    process.on('exit', () => void container.stop());
    return container.getConnectionUri();
  } catch (error) {
    console.error(`# testcontainers unavailable (${(error as Error).message}); Postgres tests skipped`);
    return undefined;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref()),
  ]);
}

/**
 * A fresh, empty database on the server at `baseUrl`, dropped by `drop()` (idempotent).
 * Also used by the benchmarks (prefix `dsh_bench`).
 */
export async function createScratchDatabase(
  baseUrl: string,
  prefix = 'dsh_test',
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
