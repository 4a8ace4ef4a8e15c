import { sql, type RawBuilder } from 'kysely';
import type { ContentType } from '../../schema.js';
import { inProjects, type ProjectScope } from '../project-scope.js';

export interface SearchFilters {
  /** Exact project title, case-insensitive; an unknown project matches nothing. */
  project?: string | undefined;
  /** Only memories of these projects (the caller's limit, lower-cased titles); undefined: every project. */
  projects?: ProjectScope;
  content_type?: ContentType | undefined;
  /** Memories carrying every one of these keywords (stored lowercase). */
  keywords?: string[] | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

/**
 * The filters as one SQL condition on `m`, applied inside each branch before its LIMIT. With
 * `indexable: false` each test is written so that no b-tree or GIN index can serve it (same
 * result): the HNSW branch must stay on the HNSW index even in a generic plan, where the planner
 * cannot see how selective the parameters are. With `scopeIndex`, the project is tested as
 * `project_id || ''`, the key of the covering index that exact vector scans read (migrations/0020,
 * 0021) and of no other index: a project's exact scan then reads that index alone, never a plain
 * index on `project_id` with a heap fetch per row. With `vectors`, the condition is on `v`, a row of
 * memory_vectors: live memories only (no archived test) and their keywords looked up in the memory.
 */
export function filterSql(
  f: SearchFilters,
  {
    indexable = true,
    scopeIndex = false,
    vectors = false,
  }: { indexable?: boolean; scopeIndex?: boolean; vectors?: boolean } = {},
): RawBuilder<unknown> {
  const alias = vectors ? 'v' : 'm';
  const col = (name: string, type: string) =>
    indexable ? sql.ref(`${alias}.${name}`) : sql`(${sql.ref(`${alias}.${name}`)} ${sql.raw(type)})`;
  const project = indexable && scopeIndex ? sql`(${sql.ref(`${alias}.project_id`)} || '')` : col('project_id', "|| ''");
  const parts: RawBuilder<unknown>[] = vectors ? [] : [sql`m.archived_at is null`];
  if (f.project !== undefined) {
    parts.push(sql`${project} = (select id from intervention_plans where lower(title) = lower(${f.project}))`);
  }
  if (f.projects !== undefined) parts.push(inProjects(project, f.projects));
  if (f.content_type !== undefined) parts.push(sql`${col('content_type', "|| ''")} = ${f.content_type}`);
  if (f.keywords !== undefined && f.keywords.length > 0) {
    const keywords = sql`${vectors ? sql.ref('k.keywords') : col('keywords', "|| '{}'::text[]")} @> ${f.keywords}::text[]`;
    parts.push(
      vectors
        ? sql`exists (select 1 from semantic_memory k where k.id = v.memory_id and k.archived_at is null and ${keywords})`
        : keywords,
    );
  }
  parts.push(...dateFilterParts(f, col('created_at', "+ interval '0 s'")));
  const all = parts.length > 0 ? sql.join(parts, sql` and `) : sql`true`;
  // One opaque condition: the planner guesses half the rows pass it (not 0.5 % per test), so even
  // a generic plan with a known LIMIT finds the index cheaper than a sequential scan and a sort.
  return indexable ? all : sql`coalesce(${all}, false)`;
}

/** The created_after / created_before tests on `column` (none when neither filter is given). */
export function dateFilterParts(f: SearchFilters, column: RawBuilder<unknown>): RawBuilder<unknown>[] {
  const parts: RawBuilder<unknown>[] = [];
  if (f.created_after !== undefined) parts.push(sql`${column} >= ${f.created_after}::timestamptz`);
  if (f.created_before !== undefined) parts.push(sql`${column} < ${f.created_before}::timestamptz`);
  return parts;
}
