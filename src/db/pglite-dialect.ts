import { isPreparableQuery } from './preparable.js';
import type { PGliteHandle } from './pglite-thread.js';
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

/**
 * A background statement that has waited this long goes before the requests waiting: under steady
 * load the embedding worker still puts a few vectors a second into the index (searches scan the
 * vectors it has not indexed yet, exactly, and slow down as they pile up).
 */
const BACKGROUND_MAX_WAIT_MS = 250;
/** Background work starts only once no request has used the connection for this long (a lull, not a gap in a burst). */
const BACKGROUND_IDLE_MS = 50;

/**
 * Whose turn it is on PGlite's one connection. Requests (foreground) are served first come, first
 * served; background work (the embedding worker's index inserts, statistics, vacuum, access counts)
 * only in a lull — no request waiting, none for BACKGROUND_IDLE_MS — or once it has waited
 * BACKGROUND_MAX_WAIT_MS. PGlite runs one statement at a time, start to end (in its own thread, see
 * PGliteThread), so a background statement in the gaps of a burst (a request awaiting its
 * embedding) holds the next requests for its whole length: with the worker putting vectors into
 * the HNSW index (~30 ms each there) between them, 10 stores in flight ran at ~24/s with a p95 of 1.6 s.
 */
export class ConnectionTurns {
  #held = false;
  #lastForeground = 0;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  readonly #foreground: Array<() => void> = [];
  readonly #background: Array<{ grant: () => void; since: number }> = [];

  get busy(): boolean {
    return this.#held;
  }

  get waiting(): number {
    return this.#foreground.length + this.#background.length;
  }

  acquire(background: boolean): Promise<void> {
    return new Promise<void>((grant) => {
      if (background) this.#background.push({ grant, since: performance.now() });
      else this.#foreground.push(grant);
      // Granted a microtask later, as before turns: callers that start queries together and read
      // poolStats() meanwhile (a /metrics scrape) see the connection as it was.
      queueMicrotask(() => this.#dispatch());
    });
  }

  release(): void {
    this.#held = false;
    this.#dispatch();
  }

  #overdue(): boolean {
    const oldest = this.#background[0];
    return oldest !== undefined && performance.now() - oldest.since >= BACKGROUND_MAX_WAIT_MS;
  }

  /** Hands the free connection to whoever's turn it is, or waits for a lull for the background. */
  #dispatch(): void {
    if (this.#held) return;
    const now = performance.now();
    const oldest = this.#background[0];
    const overdue = this.#overdue();
    if (this.#foreground.length > 0 && !overdue) {
      this.#held = true;
      this.#lastForeground = now;
      this.#foreground.shift()!();
      return;
    }
    if (!oldest) return;
    const quietFor = now - this.#lastForeground;
    if (overdue || quietFor >= BACKGROUND_IDLE_MS) {
      // Not now: after the event loop has read what arrived (setImmediate runs after its poll
      // phase). Granted straight from the release, the worker's drain went on statement after
      // statement while requests that had arrived were not yet read, so none was waiting: 10 stores
      // in flight waited up to 4.6-7 s (c10 ~24/s); with the grant deferred, at most 0.43 s (~115/s).
      if (this.#immediate) return;
      this.#immediate = setImmediate(() => {
        this.#immediate = undefined;
        if (this.#held || (this.#foreground.length > 0 && !this.#overdue())) return this.#dispatch();
        const next = this.#background.shift();
        if (!next) return;
        this.#held = true;
        next.grant();
      });
      return;
    }
    if (this.#timer) return;
    const wait = Math.min(BACKGROUND_IDLE_MS - quietFor, BACKGROUND_MAX_WAIT_MS - (now - oldest.since));
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#dispatch();
      },
      Math.max(1, Math.ceil(wait)),
    );
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
    private readonly pglite: PGliteHandle,
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
    pglite: PGliteHandle,
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
  constructor(private readonly pglite: PGliteHandle) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // Several statements (migrations) go through exec; one query is prepared like any other (the thread's).
    if (compiled.parameters.length === 0 && !isPreparableQuery(compiled.sql)) {
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
