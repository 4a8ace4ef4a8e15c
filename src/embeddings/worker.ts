import type { Kysely } from 'kysely';
import { BackgroundLoop, type RoundResult } from '../background-loop.js';
import {
  claimJobs,
  completeJobs,
  enqueueStale,
  indexStagedVectors,
  makeJobsDue,
  retryJobs,
} from '../db/queries/embedding-jobs.js';
import {
  claimNodeJobs,
  completeNodeJobs,
  makeNodeJobsDue,
  nodeJobKey,
  queueStaleNodes,
  retryNodeJobs,
  reuseNodeVectors,
} from '../db/queries/graphs/node-embedding-jobs.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Lull } from '../lull.js';
import type { Embedder } from './embedder.js';
import type { VectorIndexes } from './vector-indexes.js';

export interface WorkerOptions {
  /** Texts per embedder call (default 32). */
  batchSize?: number;
  /** How often an idle worker looks for due jobs (default 5 s); a store wakes it at once. */
  idlePollMs?: number;
  /** How long a claimed job stays the claimer's (default 2 min; more than an embedder call may take). */
  leaseMs?: number;
  /**
   * Memory vectors written (into the HNSW index) per statement (default: the batch size). PGlite
   * serves one statement at a time, and each vector costs it 7–15 ms in WASM: a batch of 32 in one
   * statement held every request back for ~1 s (store_memory p95 445 ms; measured when an insert
   * cost ~25 ms, before migration 0017's sparser graph). One at a time, a request
   * waits for one insert at most: searches during a 3,000-vector backlog, p95 72 / 59 ms at two
   * a statement, 57 / 50 at one (the backlog drains ~35 % slower while requests keep coming).
   */
  vectorsPerStatement?: number;
  /** A round waits for this lull in the requests before it starts (default: none; see lull.ts). */
  lull?: Lull;
}

const MIN_BACKOFF_MS = 1_000;
/**
 * How long a staged vector may wait for its HNSW insert: stores in a burst are indexed in one
 * batch, and the worker's statements do not compete with each store's (searches see staged vectors).
 */
const STAGED_INDEX_DELAY_MS = 250;
/** How long a memory queued for the embedder may wait for the batch it goes in (see memoryQueued). */
const QUEUED_EMBED_DELAY_MS = 250;
const MAX_BACKOFF_MS = 60_000;
/**
 * Node vectors are written this many to a statement: each goes into the HNSW index, ~25 ms a 768-D
 * vector on PGlite (WASM; ~1 ms on Postgres), and PGlite's one connection serves requests between
 * statements. A batch of 32 in one statement held it for ~1 s.
 */
const NODE_WRITE_CHUNK = 8;
const MAX_DB_BACKOFF_MS = 5_000;

/**
 * Embeds every memory that lacks a vector of the current model: the rows queued in embedding_jobs
 * when the embedder was down at store time, task notes, and (after a model change) everything.
 * First, it moves the vectors that stores staged in their jobs into the memories (the HNSW insert
 * a store leaves to it). Then code-graph nodes (graph_node_embedding_jobs, queued by uploads), a
 * batch at a time, memories first before each batch: a memory waits for one node batch at most,
 * however large the graph. Runs inside the service; any number of instances can run one against the
 * same database. Failures back off (1 s doubling to a minute) and never drop a job.
 */
export class EmbeddingWorker {
  private readonly batchSize: number;
  private readonly idlePollMs: number;
  private readonly loop: BackgroundLoop;
  /** Non-zero while waiting out a failure. */
  private backoffMs = 0;
  /** stop() was called: a drain ends after its batch in flight (a large graph's queue can take minutes). */
  private stopping = false;
  private readonly leaseMs: number;
  private readonly vectorsPerStatement: number;
  /**
   * Writes of claimed jobs' outcomes not done yet: the database went away between the claim and the
   * write. They go first when it answers again: the jobs are still this worker's (a lease lasts
   * longer than two embedder calls), and vectors the embedder made are not thrown away. Left to
   * their lease instead, the jobs waited it out (CI: a memory queued before a Postgres restart got
   * no vector for the 32 s its lease had left).
   */
  private readonly unwritten: Array<() => Promise<number>> = [];

  constructor(
    private readonly db: Kysely<Database>,
    private readonly embedder: Embedder,
    private readonly indexes: VectorIndexes,
    private readonly log: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>,
    options: WorkerOptions = {},
  ) {
    this.loop = new BackgroundLoop(() => this.round(), options.lull);
    this.batchSize = options.batchSize ?? 32;
    this.idlePollMs = options.idlePollMs ?? 5_000;
    this.leaseMs = options.leaseMs ?? 120_000;
    this.vectorsPerStatement = Math.max(1, Math.min(options.vectorsPerStatement ?? this.batchSize, this.batchSize));
    // The embedder answers again (a request got through): waiting jobs are due now.
    embedder.onRecovered(() => {
      Promise.all([makeJobsDue(this.db), makeNodeJobsDue(this.db)])
        .catch((error: unknown) => this.log.warn({ err: error }, 'could not make embedding jobs due'))
        .finally(() => {
          this.backoffMs = 0;
          this.loop.resume();
        });
    });
  }

  /**
   * Queues memories, and the nodes of each graph's latest commit, without a vector of the current
   * model, then works the queues in the background.
   */
  async start(): Promise<void> {
    const model = this.embedder.model;
    if (!this.embedder.enabled || model === null || this.loop.active) return;
    this.stopping = false;
    this.loop.start();
    try {
      const queued = await enqueueStale(this.db, model);
      if (queued > 0) this.log.info({ queued, model }, 'memories queued for embedding with the current model');
    } catch (error) {
      this.log.warn({ err: error }, 'could not queue memories for embedding; will retry with the queue');
    }
    try {
      const nodes = await queueStaleNodes(this.db, model);
      if (nodes > 0) this.log.info({ nodes, model }, 'code-graph nodes queued for embedding with the current model');
    } catch (error) {
      this.log.warn({ err: error }, 'could not queue code-graph nodes for embedding');
    }
    this.loop.kick();
  }

  /** Work the queue now (a memory or a commit's nodes were queued). Ignored while backing off from a failure. */
  kick(): void {
    this.loop.kick();
  }

  /**
   * A store staged a vector: index it soon (the delay lets stores in a burst be indexed in one
   * batch, off their way). Ignored while backing off from a failure.
   */
  vectorStaged(): void {
    this.loop.kick(STAGED_INDEX_DELAY_MS);
  }

  /**
   * A memory was queued for the embedder (task notes, a store while the embedder was away): embed it
   * soon, with the others queued meanwhile in one batch, not during the next requests of a burst
   * (measured: update_task with notes, one at a time, spent ~2 ms of its 5 waiting for a batch per call).
   */
  memoryQueued(): void {
    this.loop.kick(QUEUED_EMBED_DELAY_MS);
  }

  /** Stops taking new batches and waits for the one in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
  }

  /**
   * Embeds due jobs until none is left or the embedder fails: memories, then code-graph nodes, a
   * batch at a time, looking for memories (and staged vectors) again before each node batch.
   * Returns how many memories and nodes got a vector. `devstream-hub reembed` calls this directly.
   */
  async drain(): Promise<{ embedded: number; nodes: number; failed: string | null }> {
    let embedded = await this.writeBack();
    while ((await indexStagedVectors(this.db, this.vectorsPerStatement)) > 0);
    let nodes = 0;
    for (;;) {
      if (this.stopping) return { embedded, nodes, failed: null };
      const outcome = await this.runBatch();
      if (outcome.failed) return { embedded, nodes, failed: outcome.failed };
      embedded += outcome.embedded;
      if (outcome.claimed > 0) continue;
      const nodeOutcome = await this.runNodeBatch();
      if (nodeOutcome.failed) return { embedded, nodes, failed: nodeOutcome.failed };
      nodes += nodeOutcome.embedded;
      if (nodeOutcome.claimed === 0) return { embedded, nodes, failed: null };
      // Stores staged vectors meanwhile: index them between node batches, not after the whole graph.
      for (let i = 0; i < this.batchSize; i += this.vectorsPerStatement)
        if ((await indexStagedVectors(this.db, this.vectorsPerStatement)) < this.vectorsPerStatement) break;
    }
  }

  /** One round: drain the queue, then wait for the idle poll, or back off after a failure. */
  private async round(): Promise<RoundResult> {
    let failed: string | null;
    let maxBackoffMs = MAX_BACKOFF_MS;
    try {
      failed = (await this.drain()).failed;
    } catch (error) {
      // The database failed (unreachable, restarting): back off, but look again within a few
      // seconds, so the queue resumes soon after the database does.
      this.log.warn({ err: error }, 'embedding worker could not reach the database');
      failed = 'database error';
      maxBackoffMs = MAX_DB_BACKOFF_MS;
    }
    if (failed) {
      this.backoffMs = Math.min(Math.max(this.backoffMs * 2, MIN_BACKOFF_MS), maxBackoffMs);
      // Waiting out the embedder, kicks are ignored (stores would only fail again); waiting out the
      // database, a store's kick means it answers again: the staged vectors are indexed at once.
      return { nextMs: this.backoffMs, hold: maxBackoffMs === MAX_BACKOFF_MS };
    }
    this.backoffMs = 0;
    return { nextMs: this.idlePollMs };
  }

  /**
   * Runs the writes left from before (see `unwritten`), then `writes`, in order; the first that
   * fails keeps itself and the rest for next time, and throws. Returns what the writes returned, summed.
   */
  private async writeBack(writes: Array<() => Promise<number>> = []): Promise<number> {
    this.unwritten.push(...writes);
    let total = 0;
    while (this.unwritten.length > 0) {
      total += await this.unwritten[0]!();
      this.unwritten.shift();
    }
    return total;
  }

  private async runBatch(): Promise<{ claimed: number; embedded: number; failed: string | null }> {
    const model = this.embedder.model;
    if (model === null) return { claimed: 0, embedded: 0, failed: null };
    const jobs = await claimJobs(this.db, this.batchSize, this.leaseMs);
    if (jobs.length === 0) return { claimed: 0, embedded: 0, failed: null };
    const attempt = await this.embedder.tryEmbed(
      jobs.map((j) => j.content),
      'document',
      { background: true },
    );
    if (!attempt.ok) {
      const attempts = Math.max(...jobs.map((j) => j.attempts));
      const delay = Math.min(MIN_BACKOFF_MS * 2 ** Math.min(attempts, 12), 3_600_000);
      const ids = jobs.map((j) => j.memory_id);
      await this.writeBack([() => retryJobs(this.db, ids, delay, attempt.reason).then(() => 0)]);
      return { claimed: jobs.length, embedded: 0, failed: attempt.reason };
    }
    const done = jobs.map((j, i) => ({
      memory_id: j.memory_id,
      content_hash: j.content_hash,
      vector: attempt.vectors[i]!,
    }));
    const embedded = await this.writeBack([
      () => this.indexes.ensure(attempt.dims).then(() => 0),
      ...chunks(done, this.vectorsPerStatement).map((part) => () => completeJobs(this.db, part, attempt.model)),
    ]);
    this.log.debug({ embedded, model: attempt.model }, 'embedded queued memories');
    return { claimed: jobs.length, embedded, failed: null };
  }

  /**
   * One batch of code-graph nodes, with the same retry rules as memories. Nodes unchanged since an
   * earlier commit of their graph take that commit's vector; only the others go to the embedder.
   */
  private async runNodeBatch(): Promise<{ claimed: number; embedded: number; failed: string | null }> {
    const model = this.embedder.model;
    if (model === null) return { claimed: 0, embedded: 0, failed: null };
    const claimed = await claimNodeJobs(this.db, this.batchSize, this.leaseMs);
    if (claimed.length === 0) return { claimed: 0, embedded: 0, failed: null };
    const reused = new Set<string>();
    const reusable = claimed.filter((j) => j.reuse);
    for (const part of chunks(reusable, NODE_WRITE_CHUNK)) {
      for (const key of await reuseNodeVectors(this.db, part, model)) reused.add(key);
    }
    const jobs = claimed.filter((j) => !reused.has(nodeJobKey(j)));
    if (jobs.length === 0) return { claimed: claimed.length, embedded: reused.size, failed: null };
    const attempt = await this.embedder.tryEmbed(
      jobs.map((j) => j.doc),
      'document',
      { background: true },
    );
    if (!attempt.ok) {
      const attempts = Math.max(...jobs.map((j) => j.attempts));
      const delay = Math.min(MIN_BACKOFF_MS * 2 ** Math.min(attempts, 12), 3_600_000);
      await this.writeBack([() => retryNodeJobs(this.db, jobs, delay, attempt.reason).then(() => 0)]);
      return { claimed: claimed.length, embedded: reused.size, failed: attempt.reason };
    }
    const done = jobs.map((j, i) => ({ ...j, vector: attempt.vectors[i]! }));
    const embedded = await this.writeBack([
      () => this.indexes.ensure(attempt.dims).then(() => 0),
      ...chunks(done, NODE_WRITE_CHUNK).map((part) => () => completeNodeJobs(this.db, part, attempt.model)),
    ]);
    this.log.debug({ embedded, reused: reused.size, model: attempt.model }, 'embedded queued code-graph nodes');
    return { claimed: claimed.length, embedded: embedded + reused.size, failed: null };
  }
}

/** `items` in slices of `size`. */
function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
