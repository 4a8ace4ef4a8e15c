import type { Kysely } from 'kysely';
import { BackgroundLoop, type RoundResult } from '../background-loop.js';
import { claimJob, finishJob, reportProgress, requeueJob, type JobRow } from '../db/queries/jobs.js';
import type { Database, JobKind } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { AppError } from '../errors.js';

/**
 * Runs one job: resolves to its result, or throws (an AppError's message is shown to the caller as
 * is). `report` records progress; `signal` aborts when the service stops or the job was lost.
 */
export type JobHandler = (
  job: JobRow,
  report: (progress: Record<string, unknown>) => void,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

export interface JobRunnerOptions {
  /** How long a claim lasts without renewal (default 60 s; renewed every third of it while running). */
  leaseMs?: number;
  /** How often an idle runner looks for jobs (default 5 s); queueing one wakes it at once. */
  pollMs?: number;
}

/** A job whose runner died this many times is failed rather than started again. */
const MAX_ATTEMPTS = 3;
/**
 * Progress is written at most this often (plus with each lease renewal); a report held back by it
 * is written when the interval is up, so the last one before a long wait (a model answering slowly)
 * shows within a second rather than at the next renewal.
 */
const PROGRESS_EVERY_MS = 1_000;

/**
 * Works the `jobs` queue inside the service, one job at a time (analysis is CPU-heavy; several
 * service instances share the queue). A job claimed by an instance that dies is taken up again
 * once its lease runs out, at most MAX_ATTEMPTS times; a job stopped by a shutdown goes back to
 * the queue.
 */
export class JobRunner {
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly loop = new BackgroundLoop(() => this.round());
  private current: AbortController | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly handlers: Partial<Record<JobKind, JobHandler>>,
    private readonly log: Pick<Logger, 'info' | 'warn' | 'error'>,
    options: JobRunnerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollMs = options.pollMs ?? 5_000;
  }

  start(): void {
    if (this.loop.active) return;
    this.loop.start();
    this.loop.kick();
  }

  /** A job was queued: look now. */
  kick(): void {
    this.loop.kick();
  }

  /** Stops: the running job is aborted and queued again; waits for that. */
  async stop(): Promise<void> {
    const stopped = this.loop.stop();
    this.current?.abort();
    await stopped;
  }

  private async round(): Promise<RoundResult> {
    try {
      while (this.loop.active && (await this.runOne()));
    } catch (error) {
      this.log.warn({ err: error }, 'job runner could not reach the database');
    }
    return { nextMs: this.pollMs };
  }

  /** Claims and runs one job; false when none is due. */
  private async runOne(): Promise<boolean> {
    const job = await claimJob(this.db, this.leaseMs);
    if (!job) return false;
    if (job.attempts > MAX_ATTEMPTS) {
      await finishJob(this.db, job.id, {
        error: `gave up after ${MAX_ATTEMPTS} attempts: the service running the job stopped each time`,
      });
      return true;
    }
    const handler = this.handlers[job.kind];
    if (!handler) {
      await finishJob(this.db, job.id, { error: `this service cannot run ${job.kind} jobs` });
      return true;
    }

    const abort = new AbortController();
    this.current = abort;
    let progress: Record<string, unknown> = job.progress ?? {};
    let written = 0;
    const renew = () => {
      written = Date.now();
      reportProgress(this.db, job.id, progress, this.leaseMs).then(
        (ours) => {
          if (!ours) abort.abort(new Error('the job was taken over or finished elsewhere'));
        },
        (error: unknown) => this.log.warn({ err: error, job: job.id }, 'could not renew a job lease'),
      );
    };
    const heartbeat = setInterval(renew, this.leaseMs / 3);
    heartbeat.unref();
    let held: NodeJS.Timeout | undefined;
    const stopWriting = () => {
      clearInterval(heartbeat);
      clearTimeout(held);
    };
    this.log.info({ job: job.id, kind: job.kind, attempt: job.attempts }, 'job started');
    try {
      const result = await handler(
        job,
        (next) => {
          progress = next;
          const wait = PROGRESS_EVERY_MS - (Date.now() - written);
          if (wait <= 0) renew();
          else
            held ??= setTimeout(() => {
              held = undefined;
              renew();
            }, wait);
        },
        abort.signal,
      );
      stopWriting();
      await finishJob(this.db, job.id, { result }, progress);
      this.log.info({ job: job.id, kind: job.kind }, 'job succeeded');
    } catch (error) {
      stopWriting();
      if (!this.loop.active) {
        await requeueJob(this.db, job.id);
        this.log.info({ job: job.id }, 'job stopped by shutdown: queued again');
      } else if (!abort.signal.aborted) {
        const message =
          error instanceof AppError
            ? `${error.code}: ${error.message}`
            : error instanceof Error
              ? error.message
              : String(error);
        await finishJob(this.db, job.id, { error: message }, progress);
        this.log.warn({ job: job.id, kind: job.kind, err: error }, 'job failed');
      }
    } finally {
      this.current = null;
    }
    return true;
  }
}
