import type { Db } from '../db/client.js';
import { queueDepth } from '../db/queries/embedding-jobs.js';
import { pendingLatestNodes } from '../db/queries/graphs/node-embedding-jobs.js';
import { unfinishedJobs } from '../db/queries/jobs.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { Metrics } from './metrics.js';

/** What the gauges read: the database (queues, jobs, pool), the embedder, the graph uploads in flight. */
export interface GaugeSources {
  db: Db;
  embedder: Pick<Embedder, 'status'>;
  uploads: { inFlight(): { receiving: number; storing: number } };
}

/**
 * Registers the service's gauges, read at each scrape: the embedding queue (depth and oldest age),
 * code-graph nodes waiting for a vector, the embedder being down, analysis jobs by status, database connections, and graph uploads by
 * phase. (The MCP transport registers its own sessions gauge.)
 */
export function registerGauges(metrics: Metrics, { db, embedder, uploads }: GaugeSources): void {
  // One query for both queue gauges: a scrape collects them together.
  let queue: ReturnType<typeof queueDepth> | null = null;
  const readQueue = () => (queue ??= queueDepth(db.kysely).finally(() => setImmediate(() => (queue = null))));
  metrics.gauge(
    'devstream_embedding_queue_depth',
    'Memories waiting for a vector (embedding_jobs rows)',
    async () => (await readQueue()).pending,
  );
  metrics.gauge(
    'devstream_embedding_queue_oldest_seconds',
    'Age of the oldest memory waiting for a vector',
    async () => (await readQueue()).oldest_age_s ?? 0,
  );
  metrics.gauge(
    'devstream_graph_node_embeddings_pending',
    "Nodes of the code graphs' latest commits still waiting for a vector",
    () => pendingLatestNodes(db.kysely),
  );
  metrics.gauge(
    'devstream_embedder_down',
    '1 while the embedder is known to be down (stores text-only, searches by keyword)',
    () => (embedder.status().state === 'down' ? 1 : 0),
  );
  metrics.gauge('devstream_jobs', 'Analysis jobs not finished, by status', () => unfinishedJobs(db.kysely), 'status');
  metrics.gauge(
    'devstream_db_pool_connections',
    'Database connections by state (busy, idle)',
    () => {
      const { busy, idle } = db.poolStats();
      return { busy, idle };
    },
    'state',
  );
  metrics.gauge('devstream_db_pool_waiting', 'Queries waiting for a database connection', () => db.poolStats().waiting);
  metrics.gauge(
    'devstream_graph_uploads',
    'Graph uploads in flight, by phase (receiving the body, storing it)',
    () => uploads.inFlight(),
    'phase',
  );
}
