import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requireScope } from '../auth/scopes.js';
import { bearerToken, hashToken, sameHash } from '../auth/tokens.js';
import { requireUnlimited } from '../domain/visibility.js';
import { AppError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import { callerOf } from './auth.js';
import { ErrorBodySchema } from './operation-routes.js';
import { pathOf } from './request-path.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** GET /metrics with METRICS_TOKEN: past the Host check and the API-key auth (see open-routes.ts `isOpen`). */
    scraper: boolean;
  }
}

export interface MetricsOptions {
  metrics: Metrics;
  /** METRICS_TOKEN: when set, /metrics wants exactly this bearer token (or an admin key). */
  token: string | undefined;
}

/**
 * GET /metrics in Prometheus's text format, and the HTTP request histogram behind it. Who may
 * scrape: with METRICS_TOKEN, a request bearing it (from any address and Host: Prometheus scrapes
 * by IP), or an admin key; without, whoever may use the admin routes (anyone with AUTH=off). Never
 * an admin limited to projects or code graphs: the figures are every project's.
 * Register before the Host check and auth, whose hooks let a scraper through.
 */
export function registerMetrics(app: FastifyInstance, options: MetricsOptions): () => void {
  const { metrics } = options;
  const tokenHash = options.token === undefined ? undefined : hashToken(options.token);
  app.decorateRequest('scraper', false);

  app.addHook('onRequest', async (request) => {
    if (tokenHash === undefined || pathOf(request) !== '/metrics') return;
    const token = bearerToken(request.headers.authorization);
    request.scraper = token !== null && sameHash(hashToken(token), tokenHash);
  });

  app.addHook('onResponse', async (request, reply) => {
    // An SSE stream's time is the session's, not a request's.
    if (request.method === 'GET' && request.routeOptions.url === '/mcp') return;
    metrics.httpRequests.observe(
      { method: request.method, route: request.routeOptions.url ?? '(unmatched)', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  // The route itself is added by the caller after the OpenAPI plugin, so that it is documented.
  return () =>
    app.get(
      '/metrics',
      {
        schema: {
          operationId: 'get_metrics',
          tags: ['service'],
          summary: 'Prometheus metrics (METRICS_TOKEN as bearer token, or an admin key)',
          response: {
            200: { description: "Prometheus's text format", content: { 'text/plain': { schema: z.string() } } },
            '4XX': {
              description: 'UNAUTHORIZED without a credential, FORBIDDEN without the admin scope, RATE_LIMITED',
              content: { 'application/json': { schema: ErrorBodySchema } },
            },
            '5XX': {
              description: 'A failure of the service',
              content: { 'application/json': { schema: ErrorBodySchema } },
            },
          },
        },
      },
      async (request: FastifyRequest, reply) => {
        if (!request.scraper) {
          const caller = callerOf(request);
          // AUTH=off lets anyone in, unless a METRICS_TOKEN says who may scrape.
          if (tokenHash !== undefined && caller.name === null) {
            throw new AppError(
              'UNAUTHORIZED',
              'GET /metrics needs METRICS_TOKEN: send Authorization: Bearer <METRICS_TOKEN>',
            );
          }
          requireScope(caller, 'admin', 'GET /metrics');
          requireUnlimited(caller, 'GET /metrics');
        }
        const { contentType, body } = await metrics.render();
        return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
      },
    );
}
