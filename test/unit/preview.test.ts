import assert from 'node:assert/strict';
import { test } from 'node:test';
import { preview } from '../../src/domain/preview.js';

/** The whole text collapsed, trimmed and cut: what preview must give, however little of it it reads. */
function reference(text: string, max: number, ellipsis = '…'): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max).trimEnd()}${ellipsis}` : line;
}

test('a preview collapses whitespace, trims, and cuts past max with the ellipsis', () => {
  assert.equal(preview('a  long\ntext', 6), 'a long…');
  assert.equal(preview('  short  ', 10), 'short');
  assert.equal(preview('exactly ten', 11), 'exactly ten');
  assert.equal(preview('cut at a space', 7, '...'), 'cut at...');
  assert.equal(preview('', 5), '');
  assert.equal(preview(' \n\t ', 5), '');
});

test('a long text gives the preview of the whole, read only as far as needed', () => {
  // Whitespace runs longer than the first window, at its edges and across them, and text after.
  const cases: Array<[string, number]> = [
    [`${'word '.repeat(200_000)}end`, 200],
    [`${' '.repeat(5_000)}late start ${'x'.repeat(300)}`, 100],
    [`${'a'.repeat(463)}${' \n'.repeat(4_000)}b tail`, 100],
    [`${'a'.repeat(100)}${' '.repeat(10_000)}`, 100],
    [`${'a'.repeat(101)}${' '.repeat(10_000)}`, 100],
    [`${'a'.repeat(99)} ${' '.repeat(10_000)}b`, 100],
    [`${'😀'.repeat(300)}`, 201],
  ];
  for (const [text, max] of cases)
    assert.equal(preview(text, max), reference(text, max), `${text.slice(0, 40)}… (max ${max})`);
});

test('previews equal the whole-text reference over generated texts', () => {
  // A fixed generator (no randomness between runs): words, Unicode spaces and line breaks, surrogate
  // pairs, and long blank runs at the start, the middle and the end.
  const pieces = ['a', 'bc', ' ', '   ', '\n', '\t', '\u00a0', '\u2028', 'é', '😀', ' \n \t ', 'word'];
  let seed = 42;
  const next = (n: number) => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0; // a 32-bit LCG, exact in integer arithmetic
    return (seed >>> 8) % n;
  };
  for (let i = 0; i < 20_000; i++) {
    let text = '';
    const length = next(1_500);
    while (text.length < length) text += pieces[next(pieces.length)];
    if (next(10) === 0) text = ' '.repeat(next(3_000)) + text;
    if (next(10) === 0) text = `${text}${' '.repeat(next(3_000))}z`;
    const max = [0, 1, 5, 100, 120, 200, 500][i % 7]!;
    assert.equal(preview(text, max), reference(text, max), JSON.stringify({ text: text.slice(0, 80), max }));
  }
});
