import { sql, type Kysely } from 'kysely';
import type { ContentType, Database } from '../schema.js';
import { inProjects, type ProjectScope } from './project-scope.js';

/** What MCP prompts and completions read (src/mcp/prompts.ts). */

/** Escapes LIKE's wildcards, so a typed prefix matches itself only. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Project titles (of `projects`) starting with `prefix` (case-insensitive), alphabetically, at most `limit`; and how many match. */
export async function projectTitlesStarting(
  db: Kysely<Database>,
  prefix: string,
  limit: number,
  projects?: ProjectScope,
): Promise<{ titles: string[]; total: number }> {
  const rows = await db
    .selectFrom('intervention_plans')
    .select(['title', sql<number>`count(*) over ()`.as('total')])
    .where(sql`lower(title)`, 'like', sql`lower(${likePrefix(prefix)})`)
    .where(inProjects(sql.ref('id'), projects))
    .orderBy(sql`lower(title)`)
    .limit(limit)
    .execute();
  return { titles: rows.map((r) => r.title), total: Number(rows[0]?.total ?? 0) };
}

/** The newest memories of a project (of `projects`) of these types stored at or after `since`, at most `limit`. */
export async function recentMemories(
  db: Kysely<Database>,
  filter: { project: string; types: readonly ContentType[]; since: Date; limit: number; projects?: ProjectScope },
): Promise<Array<{ id: string; content: string; content_type: ContentType; created_at: Date | string }>> {
  return db
    .selectFrom('semantic_memory as m')
    .innerJoin('intervention_plans as p', 'p.id', 'm.project_id')
    .select(['m.id', 'm.content', 'm.content_type', 'm.created_at'])
    .where(sql`lower(p.title)`, '=', sql`lower(${filter.project})`)
    .where(inProjects(sql.ref('p.id'), filter.projects))
    .where('m.content_type', 'in', [...filter.types])
    .where('m.created_at', '>=', filter.since)
    .where('m.archived_at', 'is', null)
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id')
    .limit(filter.limit)
    .execute();
}
