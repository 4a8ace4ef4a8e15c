import type { PGliteHandle } from './pglite-thread.js';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { CHANGE_CHANNEL, parseChangeEvent, type ChangeEvent } from './change-events.js';
import type { Database } from './schema.js';

export type ChangeListener = (event: ChangeEvent) => void;

/** What the rest of the service sees of the bus: every change any instance made, as it commits. */
export interface ChangeFeed {
  /** Calls `listener` for each change (this instance's own too); returns the unsubscribe. */
  subscribe(listener: ChangeListener): () => void;
}

/** The bus of one instance: started when the app is ready, closed with it. */
export interface ChangeBus extends ChangeFeed {
  /** Starts listening; resolves once it listens (or, when the database refuses, once reconnecting has begun). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Waits between reconnection attempts: 250 ms doubling to 5 s. */
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

type BusLog = Pick<Logger, 'warn' | 'info' | 'error'>;

/** The subscribers, each called in turn; one that throws is logged and does not stop the others. */
class Subscribers {
  private readonly listeners = new Set<ChangeListener>();

  constructor(private readonly log: BusLog) {}

  add(listener: ChangeListener): () => void {
    // A wrapper per subscription: the same function subscribed twice is two subscriptions.
    const entry: ChangeListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  dispatch(payload: string | undefined): void {
    const event = parseChangeEvent(payload);
    if (!event) return;
    this.emit(event);
  }

  emit(event: ChangeEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.log.error({ err: error, event: event.type }, 'a change listener failed');
      }
    }
  }
}

/**
 * Postgres: one dedicated connection per instance (not from the pool: a LISTEN lives as long as
 * its session), `LISTEN devstream_changes`. When the connection drops (Postgres restarting, the
 * backend terminated, a network cut) it reconnects with backoff, logging one warning per outage and
 * one line when back; subscribers then get a `resync`, since changes made meanwhile were missed.
 */
export class PostgresChangeBus implements ChangeBus {
  private readonly subscribers: Subscribers;
  private client: pg.Client | undefined;
  private closed = false;
  private down = false;
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connectionString: string,
    private readonly log: BusLog,
  ) {
    this.subscribers = new Subscribers(log);
  }

  subscribe(listener: ChangeListener): () => void {
    return this.subscribers.add(listener);
  }

  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'devstream-hub-changes',
      keepAlive: true,
    });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      this.lost(error);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL) this.subscribers.dispatch(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    if (this.closed || lost) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = FIRST_RETRY_MS;
    if (this.down) {
      this.down = false;
      this.log.info({}, 'change bus: listening again');
      this.subscribers.emit({ type: 'resync', reason: 'the change listener reconnected' });
    }
  }

  private lost(error?: Error): void {
    if (this.closed) return;
    if (!this.down) {
      this.down = true;
      this.log.warn(
        { reason: error?.message ?? 'connection ended' },
        'change bus: the listener connection to Postgres was lost; reconnecting (changes on other instances are not seen meanwhile)',
      );
    }
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), wait);
  }
}

/**
 * PGlite: one process holds the database, so every writer is in this process; PGlite delivers its
 * own NOTIFYs (at commit) to `listen` callbacks. The same pg_notify path as Postgres, in process.
 * LISTEN and UNLISTEN run while this holds the dialect's one connection: inside a transaction of
 * someone else's they would be undone by its rollback.
 */
export class PgliteChangeBus implements ChangeBus {
  private readonly subscribers: Subscribers;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly pglite: PGliteHandle,
    private readonly kysely: Kysely<Database>,
    log: BusLog,
  ) {
    this.subscribers = new Subscribers(log);
  }

  subscribe(listener: ChangeListener): () => void {
    return this.subscribers.add(listener);
  }

  async start(): Promise<void> {
    if (this.unlisten) return;
    this.unlisten = await this.kysely
      .connection()
      .execute(() => this.pglite.listen(CHANGE_CHANNEL, (payload) => this.subscribers.dispatch(payload)));
  }

  async close(): Promise<void> {
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    if (!unlisten || this.pglite.closed) return;
    // A database already closed has no listener left to remove.
    await this.kysely
      .connection()
      .execute(() => unlisten())
      .catch(() => {});
  }
}
