import type {} from '@fastify/swagger';
import { randomUUID } from 'node:crypto';
import { finished } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../domain/context.js';
import { revokedAmong } from '../domain/keys.js';
import { repoHeader } from '../http/operation-routes.js';
import { createMcpServer, type McpDeps } from './server.js';
import { SessionTable } from './session-table.js';

/**
 * How often the keys of open sessions are checked against the database, so that a key revoked
 * elsewhere (the CLI, another instance) loses its sessions and streams within this long.
 */
export const KEY_RECHECK_MS = 5_000;

export interface McpHttpOptions extends McpDeps {
  stateless: boolean;
  /** A session with no request and no open stream for this long is closed. */
  sessionIdleMs: number;
  /** How often the keys of open sessions are checked against the database (default KEY_RECHECK_MS). */
  keyRecheckMs?: number;
  /** Open sessions at most; opening one more closes the least recently used. */
  maxSessions: number;
  /** Open sessions per key (per client address without one); one more closes the key's own least recently used. */
  maxSessionsPerKey: number;
  /** The caller of a request (set by the auth hook). */
  callerOf(request: FastifyRequest): Caller;
  /** Whose share of the sessions a request's new session counts against: its key, or its address without one. */
  holderOf(request: FastifyRequest): string;
  /**
   * Counts `extra` more requests against the caller's rate limit (a batch's messages past its
   * first; the HTTP request itself was counted by the auth hook), throwing RATE_LIMITED when they do not fit.
   */
  countMore?(request: FastifyRequest, reply: FastifyReply, extra: number): Promise<void>;
}

/** What the rest of the service may do to open sessions. */
export interface McpSessions {
  /** Closes every session of this API key, and so its streams (the key was revoked); how many. */
  closeSessionsOf(owner: string): number;
}

/** Not in the OpenAPI document: /mcp speaks JSON-RPC, described by the MCP specification. */
const MCP_ROUTE = { schema: { hide: true } };

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** The API key that opened the session (null with AUTH=off): no other key may use it. */
  owner: string | null;
  /** Whose share of the sessions it counts against (`key:<name>`, or `ip:<address>` without a key). */
  holder: string;
  lastSeen: number;
  openStreams: number;
}

/** A JSON-RPC error outside any request, as the MCP transport itself answers. */
function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * MCP over Streamable HTTP at /mcp. Stateful (default): POST initialize opens a session named by
 * `Mcp-Session-Id`; GET opens the server's SSE stream; DELETE ends the session; an unknown session
 * id gets 404 (the client then re-initializes); sessions idle past `sessionIdleMs` are closed.
 * Stateless (`MCP_STATELESS=1`): every POST gets a fresh server and no session; GET and DELETE are 405.
 */
export async function registerMcpRoutes(app: FastifyInstance, options: McpHttpOptions): Promise<McpSessions> {
  const sessions = new SessionTable<Session>(
    options.maxSessions,
    Math.min(options.maxSessionsPerKey, options.maxSessions),
  );
  options.metrics?.gauge('devstream_mcp_sessions_active', 'Open MCP sessions', () => sessions.size);

  /**
   * A JSON-RPC batch is as many requests as it holds messages (the auth hook counted the HTTP
   * request as one): a batch of 100 calls is 100 calls against the key's rate limit, and one that
   * does not fit is refused whole (429) before any of it runs.
   */
  const countBatch = async (request: FastifyRequest, reply: FastifyReply) => {
    if (Array.isArray(request.body) && request.body.length > 1)
      await options.countMore?.(request, reply, request.body.length - 1);
  };

  const handoff = async (request: FastifyRequest, reply: FastifyReply, transport: StreamableHTTPServerTransport) => {
    // Headers set before the hand-off (x-ratelimit-*, x-request-id) go out with the transport's answer.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    // Tool handlers see the request's headers as the SDK reads them (from the raw list): the id
    // there is this request's, so their log lines carry the id the answer does.
    const raw = request.raw.rawHeaders;
    for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === 'x-request-id') raw.splice(i, 2);
    raw.push('x-request-id', request.id);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  };

  if (options.stateless) {
    app.post('/mcp', MCP_ROUTE, async (request, reply) => {
      await countBatch(request, reply);
      const server = createMcpServer(options, options.callerOf(request), sessionRepo(request));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      // Closing the transport also detaches the server (the SDK's Protocol cleans up on transport close).
      reply.raw.on('close', () => void transport.close());
      await server.connect(transport);
      await handoff(request, reply, transport);
    });
    const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
      rpcError(
        reply.header('allow', 'POST'),
        405,
        -32000,
        'Method not allowed: this server is stateless (MCP_STATELESS=1)',
      );
    app.get('/mcp', MCP_ROUTE, notAllowed);
    app.delete('/mcp', MCP_ROUTE, notAllowed);
    // No sessions: a revoked key's requests in flight end with their requests.
    return { closeSessionsOf: () => 0 };
  }

  const sessionOf = (request: FastifyRequest, reply: FastifyReply): Session | undefined => {
    const id = request.headers['mcp-session-id'];
    if (typeof id !== 'string' || id === '') {
      rpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const session = sessions.get(id);
    // Another key's session is answered as if it did not exist: its id reveals nothing.
    if (!session || session.owner !== options.callerOf(request).name) {
      rpcError(reply, 404, -32001, 'Session not found: it ended or expired; initialize a new session');
      return undefined;
    }
    session.lastSeen = Date.now();
    return session;
  };

  /**
   * POSTs under way (a tool call in flight), counted from their first hook to their response's end
   * (sent, or its connection cut): a shutdown lets them finish before it closes the sessions.
   */
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const track = async (_request: FastifyRequest, reply: FastifyReply) => {
    inFlight += 1;
    // finished() also calls back for a response that has already closed.
    finished(reply.raw, () => {
      inFlight -= 1;
      if (inFlight === 0) drained?.();
    });
  };

  app.post('/mcp', { ...MCP_ROUTE, onRequest: track }, async (request, reply) => {
    if (request.headers['mcp-session-id'] !== undefined) {
      const session = sessionOf(request, reply);
      if (!session) return reply;
      await countBatch(request, reply);
      await handoff(request, reply, session.transport);
      return reply;
    }
    if (!isInitializeRequest(request.body)) {
      return rpcError(reply, 400, -32000, 'Bad Request: no Mcp-Session-Id header and the request is not initialize');
    }
    const caller = options.callerOf(request);
    const holder = options.holderOf(request);
    const server = createMcpServer(options, caller, sessionRepo(request));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        makeRoom(holder);
        sessions.add(id, { transport, server, owner: caller.name, holder, lastSeen: Date.now(), openStreams: 0 });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    // Not server.close() here: it closes the transport again, which calls this again.
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await handoff(request, reply, transport);
    return reply;
  });

  app.get('/mcp', MCP_ROUTE, async (request, reply) => {
    const session = sessionOf(request, reply);
    if (!session) return reply;
    session.openStreams += 1;
    reply.raw.on('close', () => {
      session.openStreams -= 1;
      session.lastSeen = Date.now();
    });
    await handoff(request, reply, session.transport);
    return reply;
  });

  app.delete('/mcp', MCP_ROUTE, async (request, reply) => {
    const session = sessionOf(request, reply);
    if (session) await handoff(request, reply, session.transport);
    return reply;
  });

  /** Makes room for one more session of `holder` (see SessionTable for which session goes). */
  const makeRoom = (holder: string) => {
    const victim = sessions.victimFor(holder);
    if (!victim) return;
    const closed = sessions.delete(victim.id)!;
    if (victim.reason === 'holder') {
      app.log.info(
        { holder: closed.holder, max: sessions.maxPerHolder },
        'MCP sessions per key reached: closed its least recently used session',
      );
    } else {
      app.log.info(
        { sessions: sessions.size + 1, max: sessions.max },
        'MCP session limit reached: closed a least recently used session of the key holding the most',
      );
    }
    void closed.transport.close();
  };

  const closeSessionsOf = (owner: string) => {
    const owned = sessions.ownedBy(owner);
    for (const [id, session] of owned) {
      sessions.delete(id);
      void session.transport.close();
    }
    if (owned.length > 0)
      app.log.info({ key: owner, sessions: owned.length }, 'API key revoked: closed its MCP sessions');
    return owned.length;
  };

  // Keys revoked elsewhere (the CLI, another instance): one query for the distinct keys of the
  // open sessions every KEY_RECHECK_MS. On a failed query the sessions stay (each request is
  // still authenticated); the next round tries again.
  let checking = false;
  let stopped = false;
  const recheck = setInterval(() => {
    const owners = sessions.owners();
    if (checking || owners.length === 0) return;
    checking = true;
    revokedAmong(options.services, owners)
      .then((revoked) => revoked.forEach(closeSessionsOf))
      .catch((error: unknown) => {
        if (!stopped) app.log.warn({ err: error }, 'could not check the keys of open MCP sessions');
      })
      .finally(() => (checking = false));
  }, options.keyRecheckMs ?? KEY_RECHECK_MS);
  recheck.unref();

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - options.sessionIdleMs;
      for (const session of sessions.values()) {
        if (session.openStreams === 0 && session.lastSeen < cutoff) void session.transport.close();
      }
    },
    Math.max(50, Math.min(60_000, options.sessionIdleMs / 4)),
  );
  sweep.unref();

  // preClose, not onClose: open SSE streams would otherwise keep the HTTP server from closing.
  // Calls in flight finish first (main.ts bounds the wait by cutting connections at SHUTDOWN_TIMEOUT_S);
  // new requests meanwhile get 503 from Fastify, which is closing.
  app.addHook('preClose', async () => {
    clearInterval(sweep);
    clearInterval(recheck);
    stopped = true;
    if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
    sessions.clear();
  });
  return { closeSessionsOf };
}

/** The code graph a session's DevLens tools default to: `?repo=` on the MCP URL, else `X-Repo`. */
function sessionRepo(request: FastifyRequest): string | undefined {
  const fromUrl = (request.query as Record<string, unknown> | undefined)?.repo;
  if (typeof fromUrl === 'string' && fromUrl.trim() !== '') return fromUrl.trim().slice(0, 500);
  return repoHeader(request);
}
