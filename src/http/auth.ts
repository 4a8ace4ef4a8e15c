import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Authenticator } from '../auth/authenticator.js';
import type { BearerChallenge } from '../auth/oauth/challenge.js';
import { isTokenCaller } from '../auth/oauth/claims.js';
import { SCOPES, type Caller, type Scope } from '../auth/scopes.js';
import { AppError } from '../errors.js';
import { sendError } from './errors.js';
import { isOpen, isResourceMetadata } from './open-routes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling (set by the auth hook on every route but the open ones). */
    caller: Caller | null;
    /** Why the credentials were refused; answered (401) after the rate limiter has counted the request. */
    authError: AppError | null;
  }
}

export interface AuthOptions {
  authenticator: Authenticator;
  /**
   * `redis`: count in it, shared by every instance on it (REDIS_URL); a request Redis cannot count
   * (down, too slow) is served uncounted. Absent: each instance counts in its own memory.
   */
  rateLimit: { max: number; windowMs: number; redis?: Redis | undefined };
  /** The dashboard's own files (DashboardFiles.has): let through without credentials. */
  isDashboardFile(request: FastifyRequest): boolean;
  /** With OAuth on: the challenges of 401s and 403s point OAuth clients at the metadata and the scopes to ask for. */
  challenge?: BearerChallenge | undefined;
}

/**
 * Counts `extra` more requests of this request's caller (the further messages of a JSON-RPC batch)
 * against its rate limit; throws RATE_LIMITED (429), counting none of them, when they do not all fit.
 */
export type CountMore = (request: FastifyRequest, reply: FastifyReply, extra: number) => Promise<void>;

/**
 * Whose budget a request spends, and whose share of MCP sessions it holds: the key's name, the
 * access token's subject (`token:`, apart from a key of the same name), or the client address for
 * anonymous (AUTH=off) or refused requests.
 */
export const clientKey = (request: FastifyRequest): string =>
  request.caller?.name
    ? `${isTokenCaller(request.caller) ? 'token' : 'key'}:${request.caller.name}`
    : `ip:${request.ip}`;

/** Seconds a client waits before retrying a token the IdP could not check (AUTH_UNAVAILABLE). */
const AUTH_RETRY_AFTER_S = 5;

/** The scope a FORBIDDEN error says was missing (requireScope's `details.required`), if it is one. */
const missingScope = (error: AppError): Scope | undefined => {
  const required = (error.details as { required?: unknown } | null)?.required;
  return error.code === 'FORBIDDEN' && (SCOPES as readonly unknown[]).includes(required)
    ? (required as Scope)
    : undefined;
};

/**
 * One authentication path for REST, /mcp and everything else (design.md §1), in one onRequest
 * hook: find the caller from `Authorization: Bearer …`; count the request against the caller's
 * rate limit (the key's name; the client address for anonymous or refused requests, so guessing
 * tokens is limited too); then refuse bad credentials with 401 and `WWW-Authenticate: Bearer`.
 * Scopes are checked per operation, in `invoke` (shared with MCP). With OAuth on (`challenge`), a
 * 401 names the protected resource metadata and the scopes to ask for, and a 403 for a missing
 * scope (an access token granting no hub scope at all, on any route; a REST operation's scope) says
 * `insufficient_scope` with the IdP's name of that scope (step-up, docs/oauth.md).
 */
export async function registerAuth(app: FastifyInstance, options: AuthOptions): Promise<{ countMore: CountMore }> {
  app.decorateRequest('caller', null);
  app.decorateRequest('authError', null);
  const challenge = options.challenge;
  // Not `global`: the plugin would hang its check on each route, after every root hook (so after a
  // 401, and never for unknown routes). Its handler runs inside the one hook below instead.
  await app.register(rateLimit, {
    global: false,
    max: options.rateLimit.max,
    timeWindow: options.rateLimit.windowMs,
    keyGenerator: clientKey,
    // The plugin's documented Redis store (an atomic INCR + PEXPIRE script per request), when given.
    ...(options.rateLimit.redis
      ? { redis: options.rateLimit.redis, nameSpace: 'devstream-hub:rate-limit:', skipOnError: true }
      : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'RATE_LIMITED',
        `Rate limit exceeded: at most ${context.max} requests per ${Math.round(options.rateLimit.windowMs / 1000)} s; retry in ${context.after}`,
        {
          details: { limit: context.max, retry_after_s: Math.ceil(context.ttl / 1000) },
        },
      ),
  });
  const countRequest = app.rateLimit();
  // The same store and key as countRequest, one request per call, without answering for itself.
  const limiter = app.createRateLimit();
  const windowS = Math.round(options.rateLimit.windowMs / 1000);

  app.addHook('onRequest', async (request, reply) => {
    // The dashboard's own files carry no data: a browser loads them before it has a key.
    if (isOpen(request) || options.isDashboardFile(request) || (challenge && isResourceMetadata(request))) return;
    try {
      request.caller = await options.authenticator.authenticate(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      request.authError = error;
    }
    await countRequest.call(app, request, reply);
    if (request.authError) {
      // The IdP is down: retry soon (a 503, no challenge: the token is not known to be bad).
      if (request.authError.code === 'AUTH_UNAVAILABLE')
        return sendError(reply.header('retry-after', AUTH_RETRY_AFTER_S), request.authError);
      const scope = missingScope(request.authError);
      const header = !challenge
        ? 'Bearer realm="devstream-hub"'
        : scope
          ? challenge.insufficientScope(challenge.defaultScope)
          : challenge.unauthorized(request.headers.authorization !== undefined);
      return sendError(reply.header('www-authenticate', header), request.authError);
    }
  });
  // A route's own refusal for a missing scope (thrown by requireScope), before the error handler answers it.
  if (challenge)
    app.addHook('onError', async (_request, reply, error) => {
      const scope = error instanceof AppError ? missingScope(error) : undefined;
      if (scope) reply.header('www-authenticate', challenge.insufficientScope(challenge.scopeName(scope)));
    });

  const countMore: CountMore = async (request, reply, extra) => {
    if (extra <= 0) return;
    const refuse = (max: number, remaining: number, ttlInSeconds: number) => {
      const messages = extra + 1;
      const retry = Math.max(1, ttlInSeconds);
      reply.header('x-ratelimit-remaining', remaining).header('retry-after', retry);
      const advice = messages > max ? 'send fewer messages per batch' : `retry in ${retry} s`;
      return new AppError(
        'RATE_LIMITED',
        `Rate limit exceeded: a batch of ${messages} JSON-RPC messages counts ${messages} requests; ${remaining} are left of ${max} per ${windowS} s; ${advice}`,
        { details: { limit: max, batch: messages, retry_after_s: retry } },
      );
    };
    // Check first, so that a batch that cannot fit spends no more than its one request …
    const peek = await limiter(request, { increment: false });
    if (peek.isAllowed) return;
    if (extra > peek.remaining) throw refuse(peek.max, peek.remaining, peek.ttlInSeconds);
    // … then count one by one: of two batches racing for the last units, at most one runs.
    let remaining = peek.remaining;
    for (let i = 0; i < extra; i++) {
      const next = await limiter(request);
      if (next.isAllowed) return;
      if (next.isExceeded) throw refuse(next.max, 0, next.ttlInSeconds);
      remaining = next.remaining;
    }
    reply.header('x-ratelimit-remaining', remaining);
  };
  return { countMore };
}

/** The request's caller; only for routes behind registerAuth (never null there). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new AppError('UNAUTHORIZED', 'An API key is required: send Authorization: Bearer <token>');
  return request.caller;
}
