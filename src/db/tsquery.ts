import { sql, type RawBuilder } from 'kysely';

/**
 * A lexeme as tsquery input text: quoted, its backslashes and quotes escaped, so that any text is
 * one safe term (`it's` → `'it''s'`). Append a weight (`|| ':A'`) or join terms with `|` / `&`,
 * then cast the whole to `::tsquery`.
 *
 * @example sql`string_agg(${tsqueryTerm(sql.ref('lex'))}, ' | ')::tsquery`
 */
export function tsqueryTerm(lexeme: RawBuilder<unknown> | ReturnType<typeof sql.ref>): RawBuilder<string> {
  return sql<string>`('''' || replace(replace(${lexeme}, '\\', '\\\\'), '''', '''''') || '''')`;
}
