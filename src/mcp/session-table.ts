/** What the table needs to know of a session to choose which one makes room. */
export interface Tracked {
  /** Whose share the session counts against: `key:<name>`, or `ip:<address>` without a key. */
  holder: string;
  /** The API key that opened it (null with AUTH=off). */
  owner: string | null;
  lastSeen: number;
  /** Its GET streams and calls in flight: while any is open, the session is busy. */
  openRequests: number;
}

/**
 * The open MCP sessions, indexed by holder, with the two caps: at most `maxPerHolder` per key (per
 * client address without one) and `max` in all. Which session makes room for a new one:
 *
 * - a holder at its cap loses its own least recently used session (idle ones, without an open
 *   stream or a call in flight, first): a key squatting sessions rotates through its own share;
 * - at the global cap, the holder of the most sessions loses one (its least recently used, idle
 *   first); on a tie the holder opening the session loses its own, so a key never takes a session
 *   from a key holding no more than it does.
 */
export class SessionTable<S extends Tracked> {
  private readonly sessions = new Map<string, S>();
  private readonly byHolder = new Map<string, Set<string>>();

  constructor(
    readonly max: number,
    readonly maxPerHolder: number,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): S | undefined {
    return this.sessions.get(id);
  }

  values(): IterableIterator<S> {
    return this.sessions.values();
  }

  add(id: string, session: S): void {
    this.delete(id);
    this.sessions.set(id, session);
    let ids = this.byHolder.get(session.holder);
    if (!ids) this.byHolder.set(session.holder, (ids = new Set()));
    ids.add(id);
  }

  /** Idempotent: a closing transport reports its end after the table let it go. */
  delete(id: string): S | undefined {
    const session = this.sessions.get(id);
    if (!session) return undefined;
    this.sessions.delete(id);
    const ids = this.byHolder.get(session.holder);
    ids?.delete(id);
    if (ids?.size === 0) this.byHolder.delete(session.holder);
    return session;
  }

  clear(): void {
    this.sessions.clear();
    this.byHolder.clear();
  }

  /** The sessions an API key opened. */
  ownedBy(owner: string): Array<[string, S]> {
    return [...this.sessions].filter(([, s]) => s.owner === owner);
  }

  /** The API keys holding sessions (not AUTH=off's anonymous ones). */
  owners(): string[] {
    const names = new Set<string>();
    for (const s of this.sessions.values()) if (s.owner !== null) names.add(s.owner);
    return [...names];
  }

  /**
   * The session to close before `holder` opens one more, with why; undefined when there is room.
   */
  victimFor(holder: string): { id: string; reason: 'holder' | 'global' } | undefined {
    const own = this.byHolder.get(holder)?.size ?? 0;
    if (own >= this.maxPerHolder) return { id: this.leastRecentlyUsed([holder])!, reason: 'holder' };
    if (this.sessions.size < this.max) return undefined;
    let most = 0;
    for (const ids of this.byHolder.values()) most = Math.max(most, ids.size);
    const candidates =
      own === most ? [holder] : [...this.byHolder].filter(([, ids]) => ids.size === most).map(([h]) => h);
    const id = this.leastRecentlyUsed(candidates);
    return id === undefined ? undefined : { id, reason: 'global' };
  }

  /** Among these holders' sessions: idle ones (no open stream, no call in flight) first, then the least recently used. */
  private leastRecentlyUsed(holders: string[]): string | undefined {
    let victim: [string, S] | undefined;
    const busy = (s: S) => (s.openRequests > 0 ? 1 : 0);
    for (const holder of holders) {
      for (const id of this.byHolder.get(holder) ?? []) {
        const s = this.sessions.get(id)!;
        const v = victim?.[1];
        if (!v || busy(s) < busy(v) || (busy(s) === busy(v) && s.lastSeen < v.lastSeen)) victim = [id, s];
      }
    }
    return victim?.[0];
  }
}
