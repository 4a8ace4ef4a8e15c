import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/** A background statement that has waited this long goes before the requests waiting (no starvation). */
const BACKGROUND_MAX_WAIT_MS = 1_000;

/**
 * Whose turn it is on PGlite's one connection. Requests (foreground) are served first come, first
 * served; background work (the embedding worker's index inserts, folding statistics, access counts)
 * only when no request waits, or once it has waited BACKGROUND_MAX_WAIT_MS. A developer's call on
 * the embedded default then waits for at most the one background statement under way, not for a
 * queue of them.
 */
export class ConnectionTurns {
  #held = false;
  readonly #foreground: Array<() => void> = [];
  readonly #background: Array<{ grant: () => void; since: number }> = [];

  get busy(): boolean {
    return this.#held;
  }

  get waiting(): number {
    return this.#foreground.length + this.#background.length;
  }

  acquire(background: boolean): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise<void>((grant) => {
      if (background) this.#background.push({ grant, since: performance.now() });
      else this.#foreground.push(grant);
    });
  }

  release(): void {
    const oldest = this.#background[0];
    const overdue = oldest !== undefined && performance.now() - oldest.since >= BACKGROUND_MAX_WAIT_MS;
    const next = overdue
      ? this.#background.shift()!.grant
      : (this.#foreground.shift() ?? this.#background.shift()?.grant);
    if (next) next();
    else this.#held = false;
  }
}

/**
 * Kysely dialect for embedded PGlite. PGlite is one Postgres backend in this process, so the
 * driver hands out a single connection at a time: a transaction holds it until commit/rollback,
 * and every other query waits its turn (see ConnectionTurns: two dialects on one PGlite share one,
 * the service's and its background work's). Parameterless statements go through the simple
 * protocol (`exec`) so multi-statement migration scripts work as they do over `pg`.
 */
export class PGliteDialect implements Dialect {
  readonly #turns: ConnectionTurns;
  readonly #background: boolean;
  constructor(
    private readonly pglite: PGlite,
    options: { turns?: ConnectionTurns; background?: boolean } = {},
  ) {
    this.#turns = options.turns ?? new ConnectionTurns();
    this.#background = options.background ?? false;
  }
  /** The one connection in use or idle, and how many queries wait for it. */
  stats(): { busy: number; idle: number; waiting: number } {
    const busy = this.#turns.busy ? 1 : 0;
    return { busy, idle: 1 - busy, waiting: this.#turns.waiting };
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.#turns, this.#background);
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's Dialect interface declares it so
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  readonly #connection: PGliteConnection;
  #holding = false;

  constructor(
    pglite: PGlite,
    private readonly turns: ConnectionTurns,
    private readonly background: boolean,
  ) {
    this.#connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.turns.acquire(this.background);
    this.#holding = true;
    return this.#connection;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await conn.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    if (!this.#holding) return;
    this.#holding = false;
    this.turns.release();
  }

  /** Waits for the statements queued before it. */
  async destroy(): Promise<void> {
    await this.turns.acquire(false);
    this.turns.release();
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.parameters.length === 0) {
      const results = await this.pglite.exec(compiled.sql);
      const last = results.at(-1);
      return {
        rows: (last?.rows ?? []) as R[],
        numAffectedRows: last?.affectedRows === undefined ? undefined : BigInt(last.affectedRows),
      };
    }
    const result = await this.pglite.query<R>(compiled.sql, [...compiled.parameters]);
    return {
      rows: result.rows,
      numAffectedRows: result.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect does not support streaming queries');
  }
}
