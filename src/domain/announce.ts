import { notifyChange, type ChangeEvent } from '../db/change-events.js';
import type { Context } from './context.js';

/**
 * After a write that committed on its own (one statement, no transaction): tells every instance.
 * The write stands either way, so a failure to tell is logged, not the caller's error; inside a
 * transaction, call notifyChange with it instead (sent at commit, nothing on rollback).
 */
export async function announce(ctx: Pick<Context, 'db' | 'log'>, event: ChangeEvent): Promise<void> {
  await notifyChange(ctx.db, event).catch((error: unknown) =>
    ctx.log.warn({ err: error, event: event.type }, 'could not announce a change to the other instances'),
  );
}
