import { sql, type RawBuilder } from 'kysely';

/**
 * A parameter the planner does not look at: `(select $n::type)`, a one-row InitPlan whose value the
 * plan uses at run time (in an index condition, a LIMIT) as it would the parameter's.
 *
 * Why: a prepared statement is planned with its values (a custom plan) until Postgres estimates that
 * a plan without them costs no more. For the task list it did not: the generic plan of `status =
 * $1 and priority >= $2 … limit $3 offset $4`, the very same index scan, was costed at 43.4 against
 * the custom plans' 26.3 (+ their planning's allowance, ~15), so every call planned again: 0.33–0.47
 * ms, more than running it (0.22). With its values out of sight, its custom and generic plans cost
 * the same, and from the sixth run on a connection it keeps the generic one (planning: 0.008 ms).
 * For statements whose best plan does not depend on the values: a rare value that a custom plan
 * would serve through another index is not seen either.
 */
export function unplanned<T>(value: T, type: 'text' | 'int' | 'bigint'): RawBuilder<T> {
  return sql<T>`(select ${value}::${sql.raw(type)})`;
}
