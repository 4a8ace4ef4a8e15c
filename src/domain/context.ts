import type { Kysely } from 'kysely';
import type { Caller } from '../auth/scopes.js';
import type { ChangeFeed } from '../db/change-bus.js';
import type { Database } from '../db/schema.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { VectorIndexes } from '../embeddings/vector-indexes.js';
import type { Logger } from '../logger.js';
import type { PacketSettings } from './graphs/packet-settings.js';
import type { AccessTracker } from './memory/access-tracker.js';
import type { SearchIndexCache } from './graphs/search-index.js';

export type NoticeLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error';

/** What semantic memory needs beside the database. */
export interface MemoryServices {
  embedder: Embedder;
  indexes: VectorIndexes;
  /** Search hits, counted into access_count / last_accessed_at in batches. */
  accesses: AccessTracker;
  /** A memory was queued for embedding, or its vector staged for the index: wake the worker. */
  queued(kind: 'embedding' | 'vector'): void;
  /** Weights of the vector and keyword branches in the fused score, and the neighbour share of the keyword branch. */
  weights: { vector: number; keyword: number; neighbours: number };
  /** Staged vectors a search scans at most (see vector-branch.ts); absent: the Postgres default. */
  stagedScanned?: number;
}

/** Background jobs (code analysis on the server). */
export interface JobServices {
  /** Folders the server may analyze (ANALYZE_ROOTS); empty: none. */
  analyzeRoots: readonly string[];
  /** The chat model analyses write summaries with (OLLAMA_SUMMARY_MODEL); absent: `summarize` is refused. */
  summaryModel?: string | undefined;
  /** A job was queued: wake the runner. */
  queued(): void;
}

/** What code search keeps beside the database. */
export interface GraphServices {
  /** Each searched commit's index, built on first use (domain/graphs/search-index.ts). */
  indexes: SearchIndexCache;
}

/** What else must happen when an API key changes (beyond its row). */
export interface KeyServices {
  /** The key was revoked: end what it holds open (its MCP sessions and their streams) now. */
  revoked(name: string): void;
}

/** The service's long-lived parts, the same for every request. */
export interface Services {
  jobs: JobServices;
  /** Absent outside a running service (the CLI): its revocations reach the services by their periodic key check. */
  keys?: KeyServices;
  /**
   * Every instance's changes as they commit (Postgres LISTEN/NOTIFY; PGlite in process), this
   * instance's own included: `changes.subscribe(listener)` returns the unsubscribe. Absent outside a
   * running service (the CLI, benchmarks, the fast tier).
   */
  changes?: ChangeFeed;
  db: Kysely<Database>;
  /** Project name used when a caller names none (DEFAULT_PROJECT). */
  defaultProject: string;
  memory: MemoryServices;
  graphs: GraphServices;
  /** What resolve_context packets show (DEVLENS_PACKET_*); absent (benchmarks, the fast tier): DEFAULT_PACKET. */
  packet?: PacketSettings;
}

/**
 * Everything a domain handler may use. Handlers never see Fastify or MCP objects (design.md §2).
 */
export interface Context extends Services {
  caller: Caller;
  /**
   * The code graph a DevLens tool uses when its `repo` argument is absent: `?repo=` on the MCP URL
   * or an `X-Repo` header (the server cannot see the client's working folder).
   */
  defaultRepo?: string;
  log: Logger;
  /** Records how long a part of the work took (REST: the `Server-Timing` header), e.g. `embed`. */
  timing(name: string, ms: number): void;
  /** A message for the caller's client (MCP logging notification; REST: the service log). */
  notice(level: NoticeLevel, message: string, data?: Record<string, unknown>): void;
}
