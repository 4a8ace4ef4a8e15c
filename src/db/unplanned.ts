import { sql, type RawBuilder } from 'kysely';

/**
 * A parameter the planner does not look at: `(select $n::type)`, a one-row InitPlan whose value the
 * plan uses at run time (in an index condition) as it would the parameter's.
 *
 * Why: a prepared statement is planned with its values (a custom plan) until Postgres estimates that
 * a plan without them costs no more. For the task list it did not: the generic plan of `status = $1
 * and priority >= $2`, the very same index scan, was costed at 43.4 against the custom plans' 26.3
 * (+ their planning's allowance, ~15), so every call planned again: 0.33–0.47 ms, more than running
 * it (0.22). With its values out of sight, its custom and generic plans cost the same, and from the
 * sixth run on a connection it keeps the generic one (planning: 0.008 ms). For filters whose best
 * plan does not depend on the value: a rare value that a custom plan would serve through another
 * index is not seen either. Not for LIMIT / OFFSET: a plan that does not know them assumes a tenth of
 * the rows are fetched, and on a large table may sort them all rather than walk an ordered index.
 */
export function unplanned<T extends string | number>(value: T, type: T extends string ? 'text' : 'int'): RawBuilder<T> {
  return sql<T>`(select ${value}::${sql.raw(type)})`;
}

/**
 * A row count for LIMIT or OFFSET written into the statement (the plan then knows how many rows are
 * fetched; see unplanned). Each value is a statement text of its own: for the few page sizes and
 * offsets callers use. Throws on anything but a non-negative safe integer (validation comes first).
 */
export function rowCount(n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bad row count ${n}`);
  return sql.lit(n);
}
