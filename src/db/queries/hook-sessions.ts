import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** A Claude Code session of one caller (the key's name, '' with AUTH=off). */
export interface HookSessionKey {
  caller: string;
  sessionId: string;
}

/** Of `items`, those this session was already given (and whose record has not expired). */
export async function injectedAmong(
  db: Kysely<Database>,
  session: HookSessionKey,
  items: readonly string[],
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = await db
    .selectFrom('hook_injections')
    .select('item')
    .where('caller', '=', session.caller)
    .where('session_id', '=', session.sessionId)
    .where('item', 'in', [...items])
    .where('expires_at', '>', sql<Date>`now()`)
    .execute();
  return new Set(rows.map((r) => r.item));
}

/** Records that this session was given `items`, until `ttlMs` from now. */
export async function recordInjected(
  db: Kysely<Database>,
  session: HookSessionKey,
  items: readonly string[],
  ttlMs: number,
): Promise<void> {
  if (items.length === 0) return;
  const expires = sql<Date>`now() + ${`${Math.round(ttlMs)} milliseconds`}::interval`;
  await db
    .insertInto('hook_injections')
    .values(items.map((item) => ({ caller: session.caller, session_id: session.sessionId, item, expires_at: expires })))
    .onConflict((oc) => oc.columns(['caller', 'session_id', 'item']).doUpdateSet({ expires_at: expires }))
    .execute();
}

/** Forgets what this session was given (its context was cleared or compacted). */
export async function forgetInjected(db: Kysely<Database>, session: HookSessionKey): Promise<void> {
  await db
    .deleteFrom('hook_injections')
    .where('caller', '=', session.caller)
    .where('session_id', '=', session.sessionId)
    .execute();
}

/** What a session touched, as capture adds it up. */
export interface SessionTouches {
  project?: string | undefined;
  filesRead?: readonly string[];
  filesEdited?: readonly string[];
  tasks?: readonly string[];
}

/** At most this many entries per list of a session: a runaway session cannot grow its row without bound. */
const MAX_TOUCHES = 200;

/** Adds to what the session touched (its row created on first use), and extends its expiry. */
export async function addTouches(
  db: Kysely<Database>,
  session: HookSessionKey,
  touches: SessionTouches,
  ttlMs: number,
): Promise<void> {
  const expires = sql<Date>`now() + ${`${Math.round(ttlMs)} milliseconds`}::interval`;
  const list = (values: readonly string[] | undefined) => sql<string[]>`${[...(values ?? [])]}::text[]`;
  // Appends the values not there yet, in order, keeping the first MAX_TOUCHES.
  const merged = (column: 'files_read' | 'files_edited' | 'tasks', values: readonly string[] | undefined) =>
    sql<string[]>`(select coalesce(array_agg(v order by o), '{}') from (
      select v, min(o) as o from unnest(hook_sessions.${sql.ref(column)} || ${list(values)}) with ordinality as u(v, o)
      group by v order by min(o) limit ${MAX_TOUCHES}) as kept)`;
  await db
    .insertInto('hook_sessions')
    .values({
      caller: session.caller,
      session_id: session.sessionId,
      project: touches.project ?? null,
      files_read: list(touches.filesRead?.slice(0, MAX_TOUCHES)),
      files_edited: list(touches.filesEdited?.slice(0, MAX_TOUCHES)),
      tasks: list(touches.tasks?.slice(0, MAX_TOUCHES)),
      expires_at: expires,
    })
    .onConflict((oc) =>
      oc.columns(['caller', 'session_id']).doUpdateSet({
        project: sql`coalesce(hook_sessions.project, excluded.project)`,
        files_read: merged('files_read', touches.filesRead),
        files_edited: merged('files_edited', touches.filesEdited),
        tasks: merged('tasks', touches.tasks),
        expires_at: expires,
      }),
    )
    .execute();
}

/** The session's touches, deleted in the same statement: the capture is stored once. */
export async function takeTouches(
  db: Kysely<Database>,
  session: HookSessionKey,
): Promise<
  { project: string | null; filesRead: string[]; filesEdited: string[]; tasks: string[]; startedAt: Date } | undefined
> {
  const row = await db
    .deleteFrom('hook_sessions')
    .where('caller', '=', session.caller)
    .where('session_id', '=', session.sessionId)
    .returning(['project', 'files_read', 'files_edited', 'tasks', 'started_at'])
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    project: row.project,
    filesRead: row.files_read,
    filesEdited: row.files_edited,
    tasks: row.tasks,
    startedAt: new Date(row.started_at),
  };
}

/** Deletes expired hook rows, at most `limit` of each table per call; how many went. */
export async function sweepHookRows(db: Kysely<Database>, limit: number): Promise<number> {
  let removed = 0;
  for (const table of ['hook_injections', 'hook_sessions'] as const) {
    const result = await sql<{ n: number }>`
      with gone as (
        delete from ${sql.table(table)} where ctid in (
          select ctid from ${sql.table(table)} where expires_at < now() limit ${limit})
        returning 1)
      select count(*)::int as n from gone`.execute(db);
    removed += Number(result.rows[0]?.n ?? 0);
  }
  return removed;
}
