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

test('code synonyms: a word or two-word phrase of a question also searches for what code writes for it (issue 21)', () => {
  const of = (q: string) => searchTerms(q).synonyms.map((s) => `${s.of}>${s.word}`);
  assert.deepEqual(of('where is the JSON list column built'), ['list>array']);
  assert.ok(of('how does the per-attempt time limit abort a request').includes('time>timeout'));
  assert.ok(of('how does the per-attempt time limit abort a request').includes('abort>cancel'));
  // Inflections are read through: "escaped" and "arrays" are escape and array.
  assert.ok(of('where are quotes escaped').includes('escaped>sanitize'));
  assert.ok(of('how are arrays of rows flattened').includes('arrays>list'));
  // A phrase whose words are not searched still brings what it stands for.
  assert.ok(searchTerms('when is a failed request tried again').synonyms.some((s) => s.word === 'retry'));
  // Never a word the question already searches, and none for a name written as words.
  assert.ok(!of('merge the error and exception lists').some((s) => s.endsWith('>exception')));
  assert.deepEqual(searchTerms('error list').synonyms, []);
});

test('a container word is asked for only as the question\'s object ("which class…", "the file that…"), not when mentioned', () => {
  assert.deepEqual(searchTerms('which class holds the entries').askedTypes, ['CLASS']);
  assert.deepEqual(searchTerms('in what file is the retry loop').askedTypes, ['FILE']);
  assert.deepEqual(searchTerms('where is the module that parses headers').askedTypes, ['MODULE', 'FILE']);
  for (const q of [
    "how are errors converted into this library's own exception classes",
    'how is the body built when I pass form data versus uploaded files',
    'where are migration files read from a folder',
  ]) {
    assert.deepEqual(searchTerms(q).askedTypes, [], q);
    assert.equal(searchTerms(q).asksContainer, false, q);
  }
});
