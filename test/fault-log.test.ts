import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromDbError } from '../src/db/errors.js';
import { AppError } from '../src/errors.js';
import { FaultLog, unavailableLogEveryMs } from '../src/operations/fault-log.js';

/** A logger that keeps its lines. */
function capture() {
  const lines: Array<{ level: 'warn' | 'error'; obj: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    warn: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'error', obj, msg }),
  };
}

/** What a query on a database that refuses connections becomes (node-postgres's error, mapped as every operation's is). */
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
const unavailable = () => fromDbError(refused);

test('503s: one warning per 5 s with the count of those not logged; 5xx logged each; 4xx not', () => {
  let now = 0;
  const faults = new FaultLog(() => now);
  const log = capture();
  faults.log(log, unavailable(), refused);
  now = 1_000;
  faults.log(log, unavailable(), refused);
  faults.log(log, unavailable(), refused);
  assert.equal(log.lines.length, 1, 'the 503s within 5 s of the warning are counted, not logged');
  now = 5_000;
  faults.log(log, unavailable(), refused, { tool: 'devstream_list_tasks' });
  assert.equal(log.lines.length, 2);
  assert.deepEqual(
    { ...log.lines[1]!, obj: { ...log.lines[1]!.obj } },
    {
      level: 'warn',
      msg: 'the database is unreachable: answering 503',
      obj: {
        tool: 'devstream_list_tasks',
        code: 'DATABASE_ERROR',
        cause: 'connect ECONNREFUSED 127.0.0.1:1',
        cause_code: 'ECONNREFUSED',
        similar_not_logged_since_last_warning: 2,
      },
    },
  );
  const thrown = new Error('boom');
  faults.log(log, new AppError('INTERNAL_ERROR', 'an unexpected error occurred', { cause: thrown }), thrown);
  faults.log(log, new AppError('VALIDATION_ERROR', 'bad'), new Error('bad'));
  assert.deepEqual(
    log.lines.slice(2).map((l) => [l.level, l.msg, l.obj.err]),
    [['error', 'request failed', thrown]],
  );
});

test("two apps' fault logs do not throttle each other (the state is each app's, not the module's)", () => {
  const a = capture();
  const b = capture();
  new FaultLog(() => 0).log(a, unavailable(), refused);
  new FaultLog(() => 0).log(b, unavailable(), refused);
  assert.equal(a.lines.length, 1);
  assert.equal(b.lines.length, 1, "the second app's first 503 is warned about too");
});

test('the interval a child-process test sets: a whole number of ms, else 5 s; 0 logs every 503', () => {
  assert.equal(unavailableLogEveryMs('0'), 0);
  assert.equal(unavailableLogEveryMs('250'), 250);
  for (const value of [undefined, '', '-1', '1.5', 'soon', '99999999'])
    assert.equal(unavailableLogEveryMs(value), 5_000);
  const faults = new FaultLog(() => 0, 0);
  const log = capture();
  for (let i = 0; i < 3; i++) faults.log(log, unavailable(), refused);
  assert.equal(log.lines.length, 3, 'no throttle at 0 ms');
});
