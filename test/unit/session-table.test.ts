import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SessionTable, type Tracked } from '../../src/mcp/session-table.js';

const session = (holder: string, lastSeen: number, openRequests = 0): Tracked => ({
  holder,
  owner: holder.startsWith('key:') ? holder.slice(4) : null,
  lastSeen,
  openRequests,
});

/** Which open MCP session makes room for a new one (issue 19, defect 8): the rules in session-table.ts. */
describe('SessionTable', () => {
  test('room while under both caps', () => {
    const t = new SessionTable(3, 2);
    t.add('a', session('key:a', 1));
    assert.equal(t.victimFor('key:a'), undefined);
    assert.equal(t.victimFor('key:b'), undefined);
  });

  test('a holder at its own cap loses its least recently used session, idle before streaming', () => {
    const t = new SessionTable(10, 2);
    t.add('old-streaming', session('key:a', 1, 1));
    t.add('newer-idle', session('key:a', 2));
    t.add('other', session('key:b', 0));
    assert.deepEqual(t.victimFor('key:a'), { id: 'newer-idle', reason: 'holder' });
    t.get('newer-idle')!.openRequests = 1;
    assert.deepEqual(t.victimFor('key:a'), { id: 'old-streaming', reason: 'holder' });
  });

  test('at the global cap the holder of the most sessions loses one; on a tie the opener loses its own', () => {
    const t = new SessionTable(4, 4);
    t.add('a1', session('key:a', 5));
    t.add('a2', session('key:a', 6));
    t.add('a3', session('key:a', 7));
    t.add('b1', session('key:b', 1));
    assert.deepEqual(t.victimFor('key:b'), { id: 'a1', reason: 'global' }, 'the holder of the most pays');
    assert.deepEqual(t.victimFor('key:c'), { id: 'a1', reason: 'global' }, 'a newcomer takes from the largest');
    const tie = new SessionTable(2, 2);
    tie.add('x', session('ip:1', 1));
    tie.add('y', session('ip:2', 2));
    assert.deepEqual(tie.victimFor('ip:2'), { id: 'y', reason: 'global' }, 'never from a holder with no more');
  });

  test('delete is idempotent and frees the holder; owners lists keys, not anonymous holders', () => {
    const t = new SessionTable(10, 1);
    t.add('k', session('key:alice', 1));
    t.add('anon', session('ip:127.0.0.1', 1));
    assert.deepEqual(t.owners(), ['alice']);
    assert.deepEqual(
      t.ownedBy('alice').map(([id]) => id),
      ['k'],
    );
    assert.ok(t.victimFor('key:alice'));
    assert.equal(t.delete('k')?.holder, 'key:alice');
    assert.equal(t.delete('k'), undefined);
    assert.equal(t.victimFor('key:alice'), undefined);
    assert.equal(t.size, 1);
  });
});
