import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { halfValue, toHalf, vectorLiteral } from '../src/db/vector-literal.js';
import { backends, type TestDb } from './helpers/backends.js';

/**
 * Numbers that exercise every half value and its rounding: each finite half, the midpoints between
 * neighbours (ties, to even), and doubles just either side of each midpoint.
 */
function probeValues(): number[] {
  const values: number[] = [];
  for (let h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) === 0x7c00) continue;
    const value = halfValue(h);
    values.push(value);
    const next = h === 0x7bff || h === 0xfbff ? null : h + 1;
    if (next === null) continue;
    const mid = (value + halfValue(next)) / 2;
    values.push(mid, mid * (1 + 2 ** -40), mid * (1 - 2 ** -40));
  }
  values.push(0.1, -0.3333333333333333, 1e-9, -1e-9, 65505, -65519.9, 6e-8, 2.9e-8);
  return values;
}

test('toHalf and halfValue agree on every finite half', () => {
  for (let h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) === 0x7c00) continue;
    assert.equal(toHalf(halfValue(h)), h, `half 0x${h.toString(16)}`);
  }
  assert.equal(toHalf(65520), 0x7c00, 'beyond the range: infinity');
  assert.equal(toHalf(-70000), 0xfc00);
});

test('a value beyond halfvec range is written in full, for Postgres to refuse as before', () => {
  assert.equal(vectorLiteral([1, 70000, -0.5]), '[1,70000,-0.5]');
  assert.equal(vectorLiteral([]), '[]');
});

for (const backend of backends) {
  describe(`vector literal (${backend.name})`, () => {
    let database: TestDb;
    before(async () => {
      database = await backend.open();
    });
    after(async () => {
      await database?.dispose();
    });

    test('Postgres stores the same halfvec from the short text as from the full numbers', async () => {
      const values = probeValues();
      const chunks: number[][] = [];
      for (let i = 0; i < values.length; i += 4000) chunks.push(values.slice(i, i + 4000));
      const full = chunks.map((c) => JSON.stringify(c));
      const short = chunks.map((c) => vectorLiteral(c));
      assert.ok(short.join('').length < full.join('').length / 2, 'the short text is less than half as long');
      const { rows } = await sql<{ i: number; a: string; b: string }>`
        select i::int as i, a::halfvec::text as a, b::halfvec::text as b
          from unnest(${short}::text[], ${full}::text[]) with ordinality as t(a, b, i)`.execute(database.db.kysely);
      assert.equal(rows.length, chunks.length);
      for (const row of rows) {
        if (row.a === row.b) continue;
        // Name the first element that differs.
        const a = row.a.slice(1, -1).split(',');
        const b = row.b.slice(1, -1).split(',');
        const k = a.findIndex((x, j) => x !== b[j]);
        assert.fail(
          `chunk ${row.i}, element ${k}: ${chunks[row.i - 1]![k]} stored as ${a[k]} from the short text, ${b[k]} from the full number`,
        );
      }
    });

    test('a value beyond halfvec range is refused, as with the full numbers', async () => {
      await assert.rejects(
        sql`select ${vectorLiteral([1, 70000])}::halfvec`.execute(database.db.kysely),
        /out of range/,
      );
    });
  });
}
