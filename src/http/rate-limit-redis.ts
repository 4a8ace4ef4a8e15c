import { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

/** A command waits at most this long for Redis; then the request is served uncounted (skipOnError). */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * The Redis connection that `@fastify/rate-limit`'s Redis store counts in, shared by every instance
 * on the same REDIS_URL. Built so that Redis being down never holds a request: no offline queue (a
 * command while disconnected fails at once), one try per command, a command timeout; the rate
 * limiter runs with `skipOnError`, so such a request is served without being counted. ioredis keeps
 * reconnecting (0.1 s growing to 2 s between tries); one warning per outage, one line when it is back.
 * The URL (it may carry a password) is never logged.
 */
export function rateLimitRedis(url: string, log: Pick<Logger, 'warn' | 'info'>): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 5_000,
    retryStrategy: (times) => Math.min(100 * times, 2_000),
    connectionName: 'devstream-hub-rate-limit',
  });
  let down = false;
  redis.on('error', (error: Error & { code?: string }) => {
    if (down) return;
    down = true;
    log.warn(
      { code: error.code, reason: error.message },
      'Redis unreachable: requests are served without counting them against rate limits until it is back',
    );
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info({}, 'Redis reachable again: rate limits are counted in it');
  });
  return redis;
}

/**
 * Connects, waiting at most `timeoutMs`; a Redis that does not answer is warned about (by the error
 * handler above) and the service starts anyway: ioredis keeps trying in the background.
 */
export async function connectRateLimitRedis(redis: Redis, timeoutMs = 5_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    redis.connect().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
}

/** Ends the connection (no reconnecting afterwards); QUIT when it is up, else at once. */
export async function closeRateLimitRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
