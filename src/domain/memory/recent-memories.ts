import type { Context } from '../context.js';
import { recentMemories as query } from '../../db/queries/prompt-lookups.js';
import type { ContentType } from '../../db/schema.js';
import { visibleProjects } from '../visibility.js';

/**
 * A project's newest memories of some types since a time (the `resume` prompt's decisions and
 * errors); none of a project the caller may not see.
 */
export function recentMemories(
  ctx: Pick<Context, 'db' | 'caller'>,
  filter: { project: string; types: readonly ContentType[]; since: Date; limit: number },
) {
  return query(ctx.db, { ...filter, projects: visibleProjects(ctx.caller) });
}
