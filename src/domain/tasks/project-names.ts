import type { Context } from '../context.js';
import { projectTitlesStarting } from '../../db/queries/prompt-lookups.js';
import { visibleProjects } from '../visibility.js';

/** Names of the projects the caller may see starting with `prefix` (case-insensitive), for completions; and how many there are. */
export function projectNamesStarting(
  ctx: Pick<Context, 'db' | 'caller'>,
  prefix: string,
  limit: number,
): Promise<{ titles: string[]; total: number }> {
  return projectTitlesStarting(ctx.db, prefix, limit, visibleProjects(ctx.caller));
}
