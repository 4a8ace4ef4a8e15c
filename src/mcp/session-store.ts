import type { LegacyTransport } from './legacy-transport.js';
import type { Server } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../domain/context.js';
import { revokedAmong } from '../domain/keys.js';
import { subscribedTo } from './resources.js';
import { SessionTable } from './session-table.js';

/**
 * How often the keys of open sessions are checked against the database, so that a key revoked
 * elsewhere (the CLI, another instance) loses its sessions and streams within this long.
 */
export const KEY_RECHECK_MS = 5_000;

/** An open MCP session: its transport and server, whose it is, and how recently it was used. */
export interface Session {
  transport: LegacyTransport;
  server: Server;
  /** The API key that opened the session (null with AUTH=off): no other key may use it. */
  owner: string | null;
  /** Whose share of the sessions it counts against (`key:<name>`, or `ip:<address>` without a key). */
  holder: string;
  /** When its last request began or its last answer ended. */
  lastSeen: number;
  /** Its requests whose answers are still open: GET streams and calls in flight. */
  openRequests: number;
}

/** What the rest of the service may do to open sessions. */
export interface McpSessions {
  /** Closes every session of this API key, and so its streams (the key was revoked); how many. */
  closeSessionsOf(owner: string): number;
}

export interface SessionStoreOptions {
  /** Open sessions at most; opening one more closes the least recently used. */
  maxSessions: number;
  /** Open sessions per key (per client address without one); one more closes the key's own least recently used. */
  maxSessionsPerKey: number;
  /** A session with no request, no call in flight and no open stream for this long is closed. */
  sessionIdleMs: number;
  /** How often the keys of open sessions are checked against the database (default KEY_RECHECK_MS). */
  keyRecheckMs?: number;
  services: Services;
  log: FastifyBaseLogger;
}

/**
 * The open sessions of a stateful /mcp (one store per app): the caps (see SessionTable for which
 * session makes room), sessions of revoked keys closed (on `closeSessionsOf`, and by a check of
 * the open sessions' keys against the database every KEY_RECHECK_MS), idle sessions closed.
 * Closing a session closes its transport, which ends its streams.
 */
export class SessionStore implements McpSessions {
  private readonly sessions: SessionTable<Session>;
  private readonly recheck: NodeJS.Timeout;
  private readonly sweep: NodeJS.Timeout;
  private checking = false;
  private stopped = false;

  constructor(private readonly options: SessionStoreOptions) {
    this.sessions = new SessionTable<Session>(
      options.maxSessions,
      Math.min(options.maxSessionsPerKey, options.maxSessions),
    );
    // Keys revoked elsewhere (the CLI, another instance): one query for the distinct keys of the
    // open sessions every KEY_RECHECK_MS. On a failed query the sessions stay (each request is
    // still authenticated); the next round tries again.
    this.recheck = setInterval(() => this.recheckKeys(), options.keyRecheckMs ?? KEY_RECHECK_MS);
    this.recheck.unref();

    this.sweep = setInterval(
      () => {
        const cutoff = Date.now() - options.sessionIdleMs;
        for (const session of this.sessions.values()) {
          if (session.openRequests === 0 && session.lastSeen < cutoff) void session.transport.close('it was idle');
        }
      },
      Math.max(50, Math.min(60_000, options.sessionIdleMs / 4)),
    );
    this.sweep.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Checks the keys of the open sessions against the database now (the change bus reconnected and
   * may have missed a revocation); also every KEY_RECHECK_MS.
   */
  recheckKeys(): void {
    const owners = this.sessions.owners();
    if (this.checking || this.stopped || owners.length === 0) return;
    this.checking = true;
    revokedAmong(this.options.services, owners)
      .then((revoked) => revoked.forEach((owner) => this.closeSessionsOf(owner)))
      .catch((error: unknown) => {
        if (!this.stopped) this.options.log.warn({ err: error }, 'could not check the keys of open MCP sessions');
      })
      .finally(() => (this.checking = false));
  }

  /** Sends `notifications/resources/updated` for `uri` to the open sessions that subscribed to it. */
  resourceUpdated(uri: string): void {
    for (const session of this.sessions.values())
      if (subscribedTo(session.server, uri)) void session.server.sendResourceUpdated({ uri }).catch(() => {});
  }

  /** Sends `notifications/resources/list_changed` to every open session (delivered on its GET stream, if open). */
  resourcesChanged(): void {
    for (const session of this.sessions.values()) void session.server.sendResourceListChanged().catch(() => {});
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Adds a session that has just been initialized, first making room for it. */
  add(id: string, session: Session): void {
    this.makeRoom(session.holder);
    this.sessions.add(id, session);
  }

  /** Idempotent: a closing transport reports its end after the store let it go. */
  delete(id: string): void {
    this.sessions.delete(id);
  }

  closeSessionsOf(owner: string): number {
    const owned = this.sessions.ownedBy(owner);
    for (const [id, session] of owned) {
      this.sessions.delete(id);
      void session.transport.close("the session's API key was revoked");
    }
    if (owned.length > 0)
      this.options.log.info({ key: owner, sessions: owned.length }, 'API key revoked: closed its MCP sessions');
    return owned.length;
  }

  /** Stops the key checks and the idle sweep (the service is shutting down). */
  stop(): void {
    clearInterval(this.sweep);
    clearInterval(this.recheck);
    this.stopped = true;
  }

  /** Closes every session. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((s) => s.transport.close('the server is shutting down')));
    this.sessions.clear();
  }

  /** Makes room for one more session of `holder` (see SessionTable for which session goes). */
  private makeRoom(holder: string): void {
    const victim = this.sessions.victimFor(holder);
    if (!victim) return;
    const closed = this.sessions.delete(victim.id)!;
    if (victim.reason === 'holder') {
      this.options.log.info(
        { holder: closed.holder, max: this.sessions.maxPerHolder },
        'MCP sessions per key reached: closed its least recently used session',
      );
    } else {
      this.options.log.info(
        { sessions: this.sessions.size + 1, max: this.sessions.max },
        'MCP session limit reached: closed a least recently used session of the key holding the most',
      );
    }
    void closed.transport.close('the session limit made room for a newer session');
  }
}
