import type { Context } from '../context.js';
import { projectTitlesStarting } from '../../db/queries/prompt-lookups.js';

/** Project names starting with `prefix` (case-insensitive), for completions; and how many there are. */
export function projectNamesStarting(
  ctx: Pick<Context, 'db'>,
  prefix: string,
  limit: number,
): Promise<{ titles: string[]; total: number }> {
  return projectTitlesStarting(ctx.db, prefix, limit);
}
