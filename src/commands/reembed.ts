import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { enqueueStale, queueDepth } from '../db/queries/embedding-jobs.js';
import { pendingLatestNodes, queueStaleNodes } from '../db/queries/graphs/node-embedding-jobs.js';
import { embeddingPipeline } from '../embeddings/embedding-pipeline.js';

/**
 * `devstream-hub reembed [--all]`: queues every memory without a vector of the configured model
 * (every memory with --all), and likewise the nodes of each code graph's latest commit, and embeds
 * the queues now, in this process. Returns the exit code.
 */
export async function reembed(config: Pick<Config, 'embedding'>, db: Db, options: { all: boolean }): Promise<number> {
  const { embedding } = config;
  if (embedding.provider === 'none') {
    console.error('EMBEDDING_PROVIDER=none: there is no embedder to re-embed with.');
    return 2;
  }
  const quiet = { info() {}, warn() {}, error() {}, debug() {} };
  const { worker } = embeddingPipeline(embedding, db.kysely, quiet, undefined, { engine: db.kind });
  const queued = await enqueueStale(db.kysely, embedding.model, { all: options.all });
  console.log(
    `Queued ${queued} memor${queued === 1 ? 'y' : 'ies'} for ${embedding.model}${options.all ? ' (all)' : ''}.`,
  );
  const nodesQueued = await queueStaleNodes(db.kysely, embedding.model, { all: options.all });
  if (nodesQueued > 0)
    console.log(`Queued ${nodesQueued} code-graph node${nodesQueued === 1 ? '' : 's'} of the latest commits.`);
  const { embedded, nodes, failed } = await worker.drain();
  const { pending } = await queueDepth(db.kysely);
  console.log(`Embedded ${embedded} with ${embedding.model}; ${pending} still queued.`);
  if (nodesQueued > 0 || nodes > 0) {
    const nodesPending = await pendingLatestNodes(db.kysely);
    console.log(`Embedded ${nodes} code-graph node${nodes === 1 ? '' : 's'}; ${nodesPending} still queued.`);
  }
  if (failed) {
    console.error(`The embedder failed: ${failed}. The running service retries the queue by itself.`);
    return 1;
  }
  return 0;
}
