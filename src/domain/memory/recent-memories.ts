import type { Context } from '../context.js';
import { recentMemories as query } from '../../db/queries/prompt-lookups.js';
import type { ContentType } from '../../db/schema.js';

/** A project's newest memories of some types since a time (the `resume` prompt's decisions and errors). */
export function recentMemories(
  ctx: Pick<Context, 'db'>,
  filter: { project: string; types: readonly ContentType[]; since: Date; limit: number },
) {
  return query(ctx.db, filter);
}
