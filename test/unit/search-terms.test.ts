import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchTerms } from '../../src/domain/graphs/search-terms.js';

test('caller questions: a question word then a calling verb within four words, or a caller phrase', () => {
  for (const q of [
    'what calls mergeHeaders',
    'Who uses the retry helper?',
    'which code invokes the hooks',
    'what part of ky triggers a retry',
    'callers of parseJson',
    'where are the call sites of timeout',
    'is normalizeRetryOptions called from the constructor',
    'what is used by the migrator',
  ])
    assert.equal(searchTerms(q).asksCallers, true, q);
  for (const q of [
    'how does retrying a failed request work',
    'which code in the client invokes the hooks',
    'what does the client do with a five word gap before calls',
    'which option sets the timeout',
    'calling convention of the driver',
  ])
    assert.equal(searchTerms(q).asksCallers, false, q);
});

test('words that are Object.prototype keys (constructor, toString, __proto__) are words, not a crash', () => {
  const terms = searchTerms('where does the constructor call toString on __proto__ hasOwnProperty');
  assert.deepEqual(terms.askedTypes, []);
  assert.equal(terms.asksContainer, false);
  assert.ok(terms.words.includes('constructor'));
  assert.deepEqual(searchTerms('which class has the constructor').askedTypes, ['CLASS']);
});
