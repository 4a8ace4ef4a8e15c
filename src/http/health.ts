import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { queueDepth } from '../db/queries/embedding-jobs.js';
import { schemaVersion } from '../db/queries/schema-version.js';
import type { Database } from '../db/schema.js';
import type { Embedder } from '../embeddings/embedder.js';

/**
 * GET /healthz: the process is up. GET /readyz: the database answers and its schema is at the
 * version this build expects (503 otherwise, with the reason); it also reports the embedder and the
 * embedding queue: an embedder that is down does not make the service unready (writes still work).
 */
export function registerHealth(
  app: FastifyInstance,
  deps: { db: Kysely<Database>; schemaVersion: number; embedder: Embedder },
): void {
  app.get(
    '/healthz',
    { schema: { operationId: 'get_healthz', tags: ['service'], security: [], summary: 'Liveness: the process is up' } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'get_readyz',
        tags: ['service'],
        security: [],
        summary: 'Readiness: database reachable and migrated',
      },
    },
    async (_request, reply) => {
      try {
        const current = await schemaVersion(deps.db);
        if (current === null || current < deps.schemaVersion) {
          return reply.code(503).send({
            status: 'unavailable',
            reason: `database schema at ${current ?? 'none'}, expected ${deps.schemaVersion}`,
          });
        }
        const queue = await queueDepth(deps.db);
        return { status: 'ok', schema_version: current, embeddings: { ...deps.embedder.status(), queue } };
      } catch {
        return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable or not migrated' });
      }
    },
  );
}
