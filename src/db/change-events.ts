import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/** The Postgres channel every instance LISTENs on (change-bus.ts). */
export const CHANGE_CHANNEL = 'devstream_changes';

/**
 * A write that other instances may have to react to, small enough for a NOTIFY payload (< 8000
 * bytes). `resync` is no write: events may have been missed (the listener was disconnected, or an
 * event was too large to send), so a subscriber rechecks whatever it keeps.
 */
export type ChangeEvent =
  | { type: 'key-revoked'; name: string }
  | { type: 'key-changed'; name: string }
  | { type: 'graph-uploaded'; graphId: string; repo: string; commitHash: string }
  | { type: 'task-changed'; project: string; id: string }
  | { type: 'plan-changed'; project: string; id: string }
  /** Stored or deleted; `project` is '' for a memory of no project. */
  | { type: 'memory-changed'; project: string; id: string }
  | { type: 'resync'; reason: string };

export type ChangeType = ChangeEvent['type'];

const TYPES: ReadonlySet<string> = new Set<ChangeType>([
  'key-revoked',
  'key-changed',
  'graph-uploaded',
  'task-changed',
  'plan-changed',
  'memory-changed',
  'resync',
]);

/** Postgres refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_999;

/** The payload for `event`: its JSON, or a `resync` when that would not fit a NOTIFY. */
export function changePayload(event: ChangeEvent): string {
  const json = JSON.stringify(event);
  if (Buffer.byteLength(json) <= MAX_PAYLOAD_BYTES) return json;
  return JSON.stringify({ type: 'resync', reason: `a ${event.type} event too large to send` });
}

/** A payload read back; undefined when it is not one of ours. */
export function parseChangeEvent(payload: string | undefined): ChangeEvent | undefined {
  if (!payload) return undefined;
  try {
    const value: unknown = JSON.parse(payload);
    if (typeof value !== 'object' || value === null) return undefined;
    const type = (value as { type?: unknown }).type;
    return typeof type === 'string' && TYPES.has(type) ? (value as ChangeEvent) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Tells every instance (every LISTENer on CHANGE_CHANNEL) about a change. Inside a transaction
 * (pass the transaction), Postgres delivers it at commit, and a rolled-back transaction sends
 * nothing; after a single statement (autocommit) has returned, the change is already committed.
 */
export async function notifyChange(db: Kysely<Database>, event: ChangeEvent): Promise<void> {
  await sql`select pg_notify(${CHANGE_CHANNEL}, ${changePayload(event)})`.execute(db);
}

/**
 * The pg_notify of a change, as an SQL expression for the statement that makes it (one round trip
 * instead of two): sent at that statement's commit, or its transaction's, and never for a write
 * that failed. `project` and `id` are SQL expressions of the written row (a title is at most 200
 * characters, so the payload stays far below NOTIFY's 8000 bytes). Read back by parseChangeEvent.
 */
export function notifyChangeSql(
  type: 'task-changed' | 'plan-changed' | 'memory-changed',
  project: RawBuilder<unknown>,
  id: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`pg_notify(${sql.lit(CHANGE_CHANNEL)}, json_build_object('type', ${sql.lit(type)}, 'project', ${project}, 'id', ${id})::text)`;
}
