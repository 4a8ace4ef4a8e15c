import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.js';
import { pathOf } from './request-path.js';

/** A request in flight, and how to stop it cleanly at the deadline when its route knows how. */
interface InFlight {
  request: FastifyRequest;
  reply: FastifyReply;
  cancel?: (error: AppError) => void;
}

/**
 * A shutdown in two steps, so that clients get answers rather than refused connections:
 * `start()` turns new requests away with 503 SHUTTING_DOWN (and `Connection: close`) while the
 * listener stays open and the requests in flight run on; `idle()` resolves when none is left;
 * `cut()` (at SHUTDOWN_TIMEOUT_S) stops those whose route registered a clean way to stop
 * (`onCancel`: an upload rolls back and answers 503) and resolves once they have answered or a grace
 * second has passed; the caller then closes what is still open.
 */
export interface Drain {
  readonly draining: boolean;
  start(): void;
  /** Requests still in flight (the server's SSE streams are not counted: closing ends them). */
  inFlight(): number;
  /** How long no request has been in flight, in ms (0 while one is): background work waits for a lull (lull.ts). */
  quietFor(): number;
  idle(): Promise<void>;
  cut(graceMs?: number): Promise<void>;
  /**
   * A route that can stop its work cleanly (nothing written) says how; called at the deadline with
   * the SHUTTING_DOWN error its answer should carry.
   */
  onCancel(request: FastifyRequest, cancel: (error: AppError) => void): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    drain: Drain;
  }
}

const shuttingDown = () =>
  new AppError(
    'SHUTTING_DOWN',
    'the service is shutting down: retry shortly (this instance after its restart, or another one)',
  );

/** The server's own SSE stream (GET /mcp) lasts as long as its session: closing the sessions ends it. */
const isLongLived = (request: FastifyRequest) => request.method === 'GET' && pathOf(request) === '/mcp';

/** Registers the drain: its onRequest hook goes first, so a refused request costs no auth or database. */
export function registerDrain(app: FastifyInstance): Drain {
  const requests = new Map<FastifyRequest, InFlight>();
  /** When a request last started or ended (performance.now()). */
  let lastActive = performance.now();
  let draining = false;
  let waiters: Array<() => void> = [];
  const settle = () => {
    if (requests.size > 0) return;
    for (const resolve of waiters) resolve();
    waiters = [];
  };

  app.addHook('onRequest', async (request, reply) => {
    if (draining && pathOf(request) !== '/healthz') {
      // The error handler renders it (REST body or JSON-RPC error, Retry-After); the client is told
      // not to reuse the connection.
      reply.header('connection', 'close');
      throw shuttingDown();
    }
    if (isLongLived(request)) return;
    requests.set(request, { request, reply });
    lastActive = performance.now();
    // 'close' also fires for a response whose connection was cut before it was sent.
    reply.raw.once('close', () => {
      requests.delete(request);
      lastActive = performance.now();
      settle();
    });
  });

  const drain: Drain = {
    get draining() {
      return draining;
    },
    start() {
      draining = true;
    },
    inFlight: () => requests.size,
    quietFor: () => (requests.size > 0 ? 0 : performance.now() - lastActive),
    idle() {
      if (requests.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
    async cut(graceMs = 1_000) {
      const answered: Array<Promise<void>> = [];
      for (const entry of requests.values()) {
        if (!entry.cancel || entry.reply.raw.headersSent) continue;
        entry.reply.header('connection', 'close');
        answered.push(new Promise((resolve) => entry.reply.raw.once('close', () => resolve())));
        entry.cancel(shuttingDown());
      }
      if (answered.length > 0) await Promise.race([Promise.all(answered), sleep(graceMs, undefined, { ref: false })]);
    },
    onCancel(request, cancel) {
      const entry = requests.get(request);
      if (entry) entry.cancel = cancel;
    },
  };
  app.decorate('drain', drain);
  return drain;
}
