import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** Who is calling. `name` is the API key's name once keys exist; null for an anonymous caller. */
export interface Caller {
  name: string | null;
  scopes: ReadonlySet<'read' | 'write' | 'admin'>;
}

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type NoticeLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error';

/**
 * Everything a domain handler may use. Handlers never see Fastify or MCP objects (design.md §2).
 */
export interface Context {
  db: Kysely<Database>;
  caller: Caller;
  log: Logger;
  /** Project name used when a caller names none (DEFAULT_PROJECT). */
  defaultProject: string;
  /** A message for the caller's client (MCP logging notification; REST: the service log). */
  notice(level: NoticeLevel, message: string, data?: Record<string, unknown>): void;
}
