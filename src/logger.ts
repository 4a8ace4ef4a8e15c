import type { LoggerOptions } from 'pino';

/**
 * pino's options for every logger of the service (Fastify's and start-up's): JSON lines at `level`,
 * with credentials blanked should anything log a header (Fastify logs none).
 */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: ['req.headers.authorization', 'headers.authorization'] };
}
