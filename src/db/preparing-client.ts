import { createHash } from 'node:crypto';
import pg from 'pg';
import { isPreparableQuery } from './preparable.js';

/**
 * Distinct statements one connection keeps prepared, at most. Each holds its parse tree and plan
 * in the backend; a statement whose text varies with its input (an `in (…)` list of any length)
 * would otherwise add one per variant. Beyond the bound, statements run unnamed, as before.
 */
export const MAX_PREPARED_PER_CONNECTION = 200;
/** A text is prepared once it has run this many times in the process: one-off statements are not. */
const RUNS_BEFORE_PREPARING = 2;
/** Texts counted towards RUNS_BEFORE_PREPARING at most; the count starts over when full. */
const COUNTED_TEXTS = 5_000;

const runs = new Map<string, number>();

/** The statement name of a text: the same on every connection. */
export function statementName(text: string): string {
  return `dsh_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

/**
 * A pg client that runs the service's recurring statements as named prepared statements, so each
 * is parsed and planned once per connection (after Postgres's five custom plans, a generic one
 * when it costs no more), not on every call: planning was the larger half of update_task's SQL
 * (0.48 ms plan, 0.34 ms execution with notes; 0.30 / 0.19 without), and 0.46 of the 0.54 ms the
 * unfiltered task list's two statements executed (no parameters: its page size is in the text).
 * Kysely passes every query as text and parameters (PostgresDriver); those with parameters are
 * named, and those without when they are one query (isPreparableQuery; the rest go by the simple
 * protocol, which may hold several statements: migrations), and only a text seen
 * RUNS_BEFORE_PREPARING times, up to MAX_PREPARED_PER_CONNECTION per connection.
 *
 * Postgres re-plans a prepared statement after DDL on its tables by itself, but refuses one whose
 * result columns changed (`select *` after a migration added a column: a replica still running
 * while another migrates): that statement is run again unnamed, and from then on this connection
 * runs it unnamed (in a transaction the error has aborted it: the caller gets that error, once).
 * A statement that failed before Postgres saw it (a value pg could not serialize: pg then closes
 * the statement but keeps its name as parsed) is not named again on this connection either.
 *
 * After five runs Postgres may keep a generic plan for a statement; it does so only when its
 * estimate is no worse than the custom plans' (see decisions/0007 for the search's).
 */
export class PreparingClient extends pg.Client {
  #prepared = new Set<string>();
  /** Names whose prepared result type went stale (see above): run unnamed on this connection. */
  #stale = new Set<string>();

  // pg's overloads: only (text, values) — how Kysely calls it — is rewritten; the rest pass through.
  override query(...args: unknown[]): never {
    const [text, values] = args;
    if (
      args.length === 2 &&
      typeof text === 'string' &&
      Array.isArray(values) &&
      (values.length > 0 || isPreparableQuery(text))
    ) {
      const name = this.#nameFor(text);
      if (name) {
        const run = super.query({ name, text, values } as pg.QueryConfig) as Promise<pg.QueryResult>;
        return run.catch((error: unknown) => {
          if (!(error instanceof pg.DatabaseError)) this.#stale.add(name);
          if (!isResultTypeChange(error) || this.#stale.has(name)) throw error;
          this.#stale.add(name);
          // In a transaction the refusal has aborted it: a retry would only hide the cause.
          if (this.getTransactionStatus() !== 'I') throw error;
          return super.query(text, values);
        }) as never;
      }
    }
    return (super.query as (...a: unknown[]) => unknown).apply(this, args) as never;
  }

  #nameFor(text: string): string | undefined {
    const name = statementName(text);
    if (this.#stale.has(name)) return undefined;
    if (this.#prepared.has(name)) return name;
    const seen = (runs.get(name) ?? 0) + 1;
    if (seen < RUNS_BEFORE_PREPARING) {
      if (runs.size >= COUNTED_TEXTS) runs.clear();
      runs.set(name, seen);
      return undefined;
    }
    if (this.#prepared.size >= MAX_PREPARED_PER_CONNECTION) return undefined;
    this.#prepared.add(name);
    return name;
  }
}

/** Postgres's refusal of a prepared statement whose result columns changed since it was planned. */
function isResultTypeChange(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === '0A000' &&
    typeof e.message === 'string' &&
    e.message.includes('cached plan must not change result type')
  );
}
