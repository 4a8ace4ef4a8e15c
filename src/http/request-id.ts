import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** A caller's own id is kept when it looks like one (a proxy's or a client's trace id), else replaced. */
const CLIENT_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The request id: the `x-request-id` the client or a proxy sent, when it is a short token, else a
 * fresh UUID. Fastify logs it with every line of the request (`reqId`); it is Fastify's `genReqId`.
 */
export function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : randomUUID();
}

/** Every answer carries its request id in `x-request-id`, refusals (401, 403, 429) included. */
export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
