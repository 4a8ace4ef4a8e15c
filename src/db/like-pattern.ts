import { sql, type RawBuilder } from 'kysely';

/**
 * `text` as literal LIKE pattern text: its `\`, `%` and `_` escaped (with LIKE's default escape
 * character, the backslash), so that only the wildcards the caller adds around it match anything.
 *
 * @example sql`name like ('%.' || ${likeLiteral(sql`lower(${name})`)})` // ends in `.name`
 */
export function likeLiteral(text: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`replace(replace(replace(${text}, '\\', '\\\\'), '%', '\\%'), '_', '\\_')`;
}
