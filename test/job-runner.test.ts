import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { getJob, insertJob } from '../src/db/queries/jobs.js';
import { newId } from '../src/domain/ids.js';
import { AppError } from '../src/errors.js';
import { JobRunner, type JobHandler } from '../src/jobs/job-runner.js';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';

const silent = { info() {}, warn() {}, error() {} };

for (const backend of backends) {
  describe(`the job queue (${backend.name})`, () => {
    let database: TestDb;
    let runner: JobRunner | undefined;
    /** What the `analyze` handler does in this test: set per test. */
    let handler: JobHandler;

    before(async () => {
      database = await backend.open();
    });
    after(async () => {
      await runner?.stop();
      await database?.dispose();
    });

    const db = () => database.db.kysely;
    const start = () => {
      runner = new JobRunner(db(), { analyze: (job, report, signal) => handler(job, report, signal) }, silent, {
        leaseMs: 3_000,
        pollMs: 100,
      });
      runner.start();
      return runner;
    };
    const queue = async () =>
      (await insertJob(db(), { id: newId(), kind: 'analyze', params: { path: '/x', repo: 'x' }, createdBy: 'tester' }))
        .id;
    const settled = (id: string) =>
      eventually(async () => {
        const job = await getJob(db(), id);
        return job && (job.status === 'succeeded' || job.status === 'failed') ? job : undefined;
      });

    test('a job runs once: its result, its last progress, and a failure with the error code', async () => {
      let runs = 0;
      handler = async (_job, report) => {
        runs += 1;
        report({ phase: 'parsing', filesDone: 1 });
        report({ phase: 'done', filesDone: 2 });
        return { nodes: 7 };
      };
      const r = start();
      const ok = await settled(await queue());
      assert.equal(ok.status, 'succeeded');
      assert.deepEqual(ok.result, { nodes: 7 });
      assert.deepEqual(ok.progress, { phase: 'done', filesDone: 2 }, 'the last progress is kept');
      assert.equal(ok.attempts, 1);
      assert.equal(runs, 1);

      handler = async () => {
        throw new AppError('VALIDATION_ERROR', 'nodes: must not be empty');
      };
      r.kick();
      const failed = await settled(await queue());
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error, 'VALIDATION_ERROR: nodes: must not be empty');
      assert.equal(failed.result, null);
      await r.stop();
    });

    test('a job whose runner died is taken up again when its lease runs out; after three attempts it fails', async () => {
      handler = async () => ({ resumed: true });
      const orphan = await queue();
      const hopeless = await queue();
      // Both were running on an instance that died (lease over); the second for the third time.
      await sql`update jobs set status = 'running', attempts = 1, started_at = now(), leased_until = now() - interval '1 second' where id = ${orphan}`.execute(
        db(),
      );
      await sql`update jobs set status = 'running', attempts = 3, started_at = now(), leased_until = now() - interval '1 second' where id = ${hopeless}`.execute(
        db(),
      );
      const r = start();
      const resumed = await settled(orphan);
      assert.equal(resumed.status, 'succeeded');
      assert.equal(resumed.attempts, 2);
      const given = await settled(hopeless);
      assert.equal(given.status, 'failed');
      assert.match(given.error ?? '', /gave up after 3 attempts/);
      await r.stop();
    });

    test('a job running elsewhere under a live lease is left alone', async () => {
      handler = async () => ({ stolen: true });
      const busy = await queue();
      await sql`update jobs set status = 'running', attempts = 1, started_at = now(), leased_until = now() + interval '1 hour' where id = ${busy}`.execute(
        db(),
      );
      const r = start();
      const other = await settled(await queue());
      assert.equal(other.status, 'succeeded', 'the runner works');
      assert.equal((await getJob(db(), busy))?.status, 'running');
      assert.equal((await getJob(db(), busy))?.attempts, 1);
      await r.stop();
      await sql`update jobs set status = 'failed', finished_at = now() where id = ${busy}`.execute(db());
    });

    test('shutdown aborts the running job and queues it again, the attempt not counted', async () => {
      let started = false;
      handler = (_job, _report, signal) =>
        new Promise((_resolve, reject) => {
          started = true;
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        });
      const r = start();
      const id = await queue();
      r.kick();
      await eventually(async () => (started ? true : undefined));
      assert.equal((await getJob(db(), id))?.status, 'running');
      await r.stop();
      const requeued = await getJob(db(), id);
      assert.equal(requeued?.status, 'queued');
      assert.equal(requeued?.attempts, 0);
      assert.equal(requeued?.leased_until, null);

      // The next runner finishes it.
      handler = async () => ({ finished: true });
      const next = start();
      const done = await settled(id);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.attempts, 1);
      await next.stop();
    });
  });
}
