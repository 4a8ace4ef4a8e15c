import type { LoggerOptions } from 'pino';

/**
 * pino's options for every logger of the service (Fastify's and start-up's): JSON lines at `level`,
 * with credentials blanked should anything log a header (Fastify logs none).
 */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: ['req.headers.authorization', 'headers.authorization'] };
}

/**
 * The logging the service's parts need: pino's (and Fastify's) logger satisfies it. A leaf, so
 * every layer may log without importing the domain's context.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
