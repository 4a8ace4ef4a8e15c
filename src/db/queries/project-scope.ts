import { sql, type RawBuilder } from 'kysely';

/**
 * The projects a query is limited to: lower-cased titles (domain/visibility.ts, from the caller's
 * key); undefined: every project. A row of another project, or of none, matches nothing.
 */
export type ProjectScope = readonly string[] | undefined;

/** `planId` (an expression naming a plan id) is a project of `scope`; true when unlimited. */
export function inProjects(planId: RawBuilder<unknown>, scope: ProjectScope): RawBuilder<boolean> {
  if (scope === undefined) return sql<boolean>`true`;
  return sql<boolean>`${planId} in (select id from intervention_plans where lower(title) = any(${[...scope]}::text[]))`;
}
