import type {} from '@fastify/swagger';
import { randomUUID } from 'node:crypto';
import { finished } from 'node:stream';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { classifyInboundRequest, createMcpHandler, isInitializeRequest } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BearerChallenge } from '../auth/oauth/challenge.js';
import { isTokenCaller } from '../auth/oauth/claims.js';
import { credentialOf, type Caller, type Scope } from '../auth/scopes.js';
import { neededScope } from '../operations/invoke.js';
import type { AnyOperation } from '../operations/operation.js';
import { taskUri } from '../domain/resource-links.js';
import { repoHeader } from '../repo-header.js';
import { authInfoOf } from './request-caller.js';
import { LegacyTransport } from './legacy-transport.js';
import { audibleUris } from './resources.js';
import { createMcpServer, createModernMcpServer, TOOL_PROFILES, type McpDeps, type ToolProfile } from './server.js';
import { SessionStore, type McpSessions, type Session } from './session-store.js';

export interface McpHttpOptions extends McpDeps {
  stateless: boolean;
  /** The start of every session id (`r1.` from INSTANCE_NAME), for a load balancer's affinity; '' for none. */
  sessionPrefix?: string;
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
  /**
   * With OAuth on: an access token's request that needs a scope the token lacks is an HTTP 403
   * `insufficient_scope` naming it (step-up: the client asks the IdP for it and retries).
   */
  challenge?: BearerChallenge | undefined;
}

/** Not in the OpenAPI document: /mcp speaks JSON-RPC, described by the MCP specification. */
const MCP_ROUTE = { schema: { hide: true } };

/** A JSON-RPC error outside any request, as the MCP transport itself answers. */
function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The methods counted by name in devstream_mcp_requests_total (any other is `other`). */
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
]);
const methodLabel = (method: unknown) => (typeof method === 'string' && KNOWN_METHODS.has(method) ? method : 'other');

/** Requests that read what the hub holds (resources, prompts, completions): the read scope's, as tools that read are. */
const READ_METHODS = new Set([
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'prompts/get',
  'completion/complete',
]);

/** The first message of a POST that needs a scope the caller lacks: what it is, the scope, its id. */
function missingScope(
  body: unknown,
  caller: Caller,
  tools: ReadonlyMap<string, AnyOperation>,
): { what: string; scope: Scope; id: unknown } | undefined {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages.slice(0, 1000)) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, params, id } = message as {
      method?: unknown;
      params?: { name?: unknown; arguments?: unknown };
      id?: unknown;
    };
    let needed: { what: string; scope: Scope } | undefined;
    if (method === 'tools/call' && typeof params?.name === 'string') {
      const op = tools.get(params.name);
      if (op) needed = { what: op.name, scope: neededScope(op, params.arguments) };
    } else if (typeof method === 'string' && READ_METHODS.has(method)) needed = { what: method, scope: 'read' };
    if (needed && !caller.scopes.has(needed.scope)) return { ...needed, id: id ?? null };
  }
  return undefined;
}

/**
 * Whether a POST (its body parsed by Fastify) speaks the 2025 era: the SDK's `isLegacyRequest`
 * without building a web Request for it (that took ~0.1 ms of every call): a body that is no JSON,
 * or one the SDK's own classification calls legacy (its era headers as `Headers.get` reads them).
 */
function isLegacyPost(request: FastifyRequest): boolean {
  const body: unknown = request.body;
  if (body === undefined) return true;
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return (
    classifyInboundRequest({
      httpMethod: request.method,
      protocolVersionHeader: header('mcp-protocol-version'),
      mcpMethodHeader: header('mcp-method'),
      mcpNameHeader: header('mcp-name'),
      body,
    }).kind === 'legacy'
  );
}

/** The era labels of devstream_mcp_requests_total. */
const MODERN_ERA = '2026-07-28';
const LEGACY_ERA = '2025';

/** Who a modern-era request's server is for, handed to the SDK's per-request factory with the request. */
interface Principal {
  caller: Caller;
  defaultRepo: string | undefined;
  profile: ToolProfile;
}

/**
 * MCP over Streamable HTTP at /mcp, in both protocol eras on one route. A request of the
 * 2026-07-28 era (its `_meta` envelope and `MCP-Protocol-Version` say so; the SDK's own
 * `classifyInboundRequest` decides, as its `isLegacyRequest` does) is served statelessly by the SDK's `createMcpHandler`: a fresh server
 * per request, no session, `server/discover`, `subscriptions/listen`. A request of the 2025 era
 * (2025-11-25, 2025-06-18, 2025-03-26) is served as before: stateful (default), POST initialize
 * opens a session named by `Mcp-Session-Id`; GET opens the server's SSE stream; DELETE ends the
 * session; an unknown session id gets 404 (the client then re-initializes); sessions idle past
 * `sessionIdleMs` are closed. Stateless (`MCP_STATELESS=1`): every legacy POST gets a fresh server
 * and no session; GET and DELETE are 405. Same tools, schemas, scopes and errors in both eras.
 */
export async function registerMcpRoutes(app: FastifyInstance, options: McpHttpOptions): Promise<McpSessions> {
  const sessionsGauge = (count: () => number) =>
    options.metrics?.gauge('devstream_mcp_sessions_active', 'Open MCP sessions', count);

  /**
   * A JSON-RPC batch is as many requests as it holds messages (the auth hook counted the HTTP
   * request as one): a batch of 100 calls is 100 calls against the key's rate limit, and one that
   * does not fit is refused whole (429) before any of it runs.
   */
  const countBatch = async (request: FastifyRequest, reply: FastifyReply) => {
    if (Array.isArray(request.body) && request.body.length > 1)
      await options.countMore?.(request, reply, request.body.length - 1);
  };

  const toolsByName = new Map(options.tools.map((op) => [op.name, op]));
  /**
   * Step-up (MCP authorization, "scope challenge handling"): with OAuth on, an access token's
   * request that needs a scope the token lacks is answered here, before the SDK, with HTTP 403 and
   * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<the IdP's name of it>"`, so that the
   * client can ask the IdP for it and retry; true when answered. An API key cannot step up: its
   * calls get the tool's FORBIDDEN result, as before.
   */
  const refusedForScope = (request: FastifyRequest, reply: FastifyReply, caller: Caller): boolean => {
    const challenge = options.challenge;
    if (!challenge || !isTokenCaller(caller)) return false;
    const missing = missingScope(request.body, caller, toolsByName);
    if (!missing) return false;
    const name = challenge.scopeName(missing.scope);
    const held = [...caller.scopes].join(', ') || 'none';
    const message = `FORBIDDEN: ${missing.what} needs the "${missing.scope}" scope (${name}); ${credentialOf(caller)} has: ${held}`;
    void reply
      .code(403)
      .header('www-authenticate', challenge.insufficientScope(name))
      .header('content-type', 'application/json')
      .send({
        jsonrpc: '2.0',
        error: { code: -32000, message, data: { code: 'FORBIDDEN', required: missing.scope, scope: name } },
        id: missing.id,
      });
    return true;
  };

  /**
   * A `subscriptions/listen` hears updates of the resources its caller may read only: the SDK's
   * listen streams deliver every published event their filter names, so the filter is narrowed
   * here, before the SDK sees it (its acknowledgement then shows what is honoured).
   */
  const narrowListen = async (body: unknown, caller: Caller) => {
    const params = (body as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } })
      ?.params;
    const uris = params?.notifications?.resourceSubscriptions;
    if ((body as { method?: unknown })?.method !== 'subscriptions/listen' || !Array.isArray(uris)) return;
    const strings = uris.filter((u): u is string => typeof u === 'string');
    // Anything but a list of strings is left as is: the SDK refuses it (-32602).
    if (strings.length !== uris.length) return;
    params!.notifications!.resourceSubscriptions = await audibleUris(options.services, caller, strings);
  };

  /** Hands the request over to the SDK (which answers it on the raw response). */
  const hijack = (request: FastifyRequest, reply: FastifyReply) => {
    // Headers set before the hand-off (x-ratelimit-*, x-request-id) go out with the SDK's answer.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    // Tool handlers see the request's headers as the SDK reads them (from the raw list and
    // object): the id there is this request's, so their log lines carry the id the answer does.
    const raw = request.raw.rawHeaders;
    for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === 'x-request-id') raw.splice(i, 2);
    raw.push('x-request-id', request.id);
    request.raw.headers['x-request-id'] = request.id;
    reply.hijack();
  };
  /**
   * Hands a 2025-era request to its session's (or stateless) transport, with the caller this
   * request's own credential made as its `authInfo`: the session's server serves it as that caller
   * (request-caller.ts), not as the one that opened the session.
   */
  const handoff = async (request: FastifyRequest, reply: FastifyReply, transport: LegacyTransport) => {
    const auth = authInfoOf(options.callerOf(request));
    hijack(request, reply);
    await transport.serve(Object.assign(request.raw, { auth }), reply.raw, request.body);
  };

  // The 2026-07-28 era: one SDK handler for the app, a server per request for its caller.
  const modern = createMcpHandler(
    ({ authInfo }) => {
      const principal = authInfo?.extra?.principal as Principal;
      return createModernMcpServer(options, principal.caller, principal.defaultRepo, principal.profile);
    },
    { legacy: 'reject', onerror: (error) => app.log.debug({ err: error }, 'MCP request refused') },
  );
  const modernNode = toNodeHandler(modern, {
    onerror: (error) => app.log.error({ err: error }, 'MCP request failed'),
  });
  const serveModern = async (request: FastifyRequest, reply: FastifyReply) => {
    await countBatch(request, reply);
    // Gateways route and meter on Mcp-Method / Mcp-Name (the SDK refuses a request whose headers
    // disagree with its body, -32020); so do this server's metrics and request log.
    const method = request.headers['mcp-method'];
    const name = request.headers['mcp-name'];
    options.metrics?.mcpRequests.inc({ era: MODERN_ERA, method: methodLabel(method) });
    request.log = request.log.child({ mcp: { era: MODERN_ERA, method, name } });
    const caller = options.callerOf(request);
    if (refusedForScope(request, reply, caller)) return;
    const profile = toolProfile(request, reply, caller);
    if (!profile) return;
    await narrowListen(request.body, caller);
    const principal: Principal = { caller, defaultRepo: sessionRepo(request), profile };
    const auth = authInfoOf(caller, { principal });
    hijack(request, reply);
    await modernNode(Object.assign(request.raw, { auth }), reply.raw, request.body);
  };
  /**
   * Whether a POST speaks the 2025 era (the SDK's own classification, so the two never disagree);
   * a legacy POST's messages are counted by method here.
   */
  const isLegacy = async (request: FastifyRequest) => {
    const legacy = isLegacyPost(request);
    if (legacy && options.metrics) {
      const messages = Array.isArray(request.body) ? request.body : [request.body];
      for (const m of messages.slice(0, 1000))
        options.metrics.mcpRequests.inc({ era: LEGACY_ERA, method: methodLabel((m as { method?: unknown })?.method) });
    }
    return legacy;
  };

  if (options.stateless) {
    sessionsGauge(() => 0);
    app.post('/mcp', MCP_ROUTE, async (request, reply) => {
      if (!(await isLegacy(request))) return serveModern(request, reply);
      const caller = options.callerOf(request);
      if (refusedForScope(request, reply, caller)) return reply;
      const profile = toolProfile(request, reply, caller);
      if (!profile) return reply;
      await countBatch(request, reply);
      const server = createMcpServer(options, caller, sessionRepo(request), 'legacy', profile);
      const transport = new LegacyTransport({ sessionIdGenerator: undefined });
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
    const unsubscribe = listenForChanges(options, {
      resourcesChanged: () => modern.notify.resourcesChanged(),
      resourceUpdated: (uri) => modern.notify.resourceUpdated(uri),
    });
    app.addHook('preClose', async () => {
      unsubscribe();
      await modern.close();
    });
    // No sessions: a revoked key's requests in flight end with their requests.
    return { closeSessionsOf: () => 0 };
  }

  const store = new SessionStore({ ...options, log: app.log });
  sessionsGauge(() => store.size);
  const unsubscribe = listenForChanges(options, {
    resourcesChanged: () => {
      modern.notify.resourcesChanged();
      store.resourcesChanged();
    },
    resourceUpdated: (uri) => {
      modern.notify.resourceUpdated(uri);
      store.resourceUpdated(uri);
    },
    missed: () => store.recheckKeys(),
  });
  const sessionOf = (request: FastifyRequest, reply: FastifyReply): Session | undefined => {
    const id = request.headers['mcp-session-id'];
    if (typeof id !== 'string' || id === '') {
      rpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return undefined;
    }
    const session = store.get(id);
    // Another key's session is answered as if it did not exist: its id reveals nothing.
    if (!session || session.owner !== ownerOf(options.callerOf(request))) {
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

  /** A session's request whose answer is open (a GET stream, a call in flight) until the answer ends. */
  const openRequest = (session: Session, reply: FastifyReply) => {
    session.openRequests += 1;
    // finished() also calls back for a response closed before this (a client gone during the hooks).
    finished(reply.raw, () => {
      session.openRequests -= 1;
      session.lastSeen = Date.now();
    });
  };

  app.post('/mcp', { ...MCP_ROUTE, onRequest: track }, async (request, reply) => {
    if (!(await isLegacy(request))) {
      await serveModern(request, reply);
      return reply;
    }
    if (request.headers['mcp-session-id'] !== undefined) {
      const session = sessionOf(request, reply);
      if (!session) return reply;
      if (refusedForScope(request, reply, options.callerOf(request))) return reply;
      await countBatch(request, reply);
      // A call in flight keeps its session busy: not closed as idle, the last to make room.
      openRequest(session, reply);
      await handoff(request, reply, session.transport);
      return reply;
    }
    if (!isInitializeRequest(request.body)) {
      return rpcError(reply, 400, -32000, 'Bad Request: no Mcp-Session-Id header and the request is not initialize');
    }
    // A session's tool profile is the one its initialize asked for (?tools= on the MCP URL, else the key's).
    const caller = options.callerOf(request);
    const profile = toolProfile(request, reply, caller);
    if (!profile) return reply;
    const holder = options.holderOf(request);
    const server = createMcpServer(options, caller, sessionRepo(request), 'legacy', profile);
    const transport: LegacyTransport = new LegacyTransport({
      sessionIdGenerator: () => `${options.sessionPrefix ?? ''}${randomUUID()}`,
      onsessioninitialized: (id) => {
        store.add(id, { transport, server, owner: ownerOf(caller), holder, lastSeen: Date.now(), openRequests: 0 });
      },
      onsessionclosed: (id) => {
        store.delete(id);
      },
    });
    // Not server.close() here: it closes the transport again, which calls this again.
    transport.onclose = () => {
      if (transport.sessionId) store.delete(transport.sessionId);
    };
    await server.connect(transport);
    await handoff(request, reply, transport);
    return reply;
  });

  app.get('/mcp', MCP_ROUTE, async (request, reply) => {
    const session = sessionOf(request, reply);
    if (!session) return reply;
    openRequest(session, reply);
    await handoff(request, reply, session.transport);
    return reply;
  });

  app.delete('/mcp', MCP_ROUTE, async (request, reply) => {
    const session = sessionOf(request, reply);
    if (session) await handoff(request, reply, session.transport);
    return reply;
  });

  // preClose, not onClose: open SSE streams would otherwise keep the HTTP server from closing.
  // Calls in flight finish first (main.ts bounds the wait by cutting connections at SHUTDOWN_TIMEOUT_S);
  // new requests meanwhile get 503 from Fastify, which is closing.
  app.addHook('preClose', async () => {
    unsubscribe();
    store.stop();
    if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    await Promise.all([store.closeAll(), modern.close()]);
  });
  return store;
}

/**
 * Changes of every instance (the change bus) that MCP clients hear of: a graph uploaded anywhere
 * changes the resource list (`devlens://graph/{id}/meta`); a task changed anywhere updates its
 * resource (`devstream://task/{id}`), told to the clients that subscribed to it. Both go to the 2026
 * era's `subscriptions/listen` streams and to the 2025 era's open sessions. After the bus reconnected
 * (`resync`: changes may have been missed) the list is told changed and `missed` runs.
 */
function listenForChanges(
  options: McpHttpOptions,
  tell: { resourcesChanged(): void; resourceUpdated(uri: string): void; missed?(): void },
): () => void {
  return (
    options.services.changes?.subscribe((event) => {
      if (event.type === 'graph-uploaded' || event.type === 'resync') tell.resourcesChanged();
      if (event.type === 'task-changed') tell.resourceUpdated(taskUri(event.id));
      if (event.type === 'resync') tell.missed?.();
    }) ?? (() => {})
  );
}

/**
 * Whose a session is: the key's name (null with AUTH=off), or `token:<subject>` for an access
 * token's caller, so that a key and a token subject of the same name never share sessions (and a
 * token's sessions are not taken for a revoked key's: no key name holds a colon).
 */
const ownerOf = (caller: Caller): string | null =>
  caller.name !== null && isTokenCaller(caller) ? `token:${caller.name}` : caller.name;

/**
 * The tool profile a request asks for with `?tools=` on the MCP URL, else its key's default
 * (`keys create --profile`), else `all`; or undefined once a bad value has been answered 400
 * (-32602, naming `tools`).
 */
function toolProfile(request: FastifyRequest, reply: FastifyReply, caller: Caller): ToolProfile | undefined {
  const asked = (request.query as Record<string, unknown> | undefined)?.tools;
  if (asked === undefined || asked === '') return caller.toolProfile ?? 'all';
  if (typeof asked === 'string' && Object.hasOwn(TOOL_PROFILES, asked)) return asked as ToolProfile;
  rpcError(
    reply,
    400,
    -32602,
    `Invalid tools: must be one of ${Object.keys(TOOL_PROFILES).join(', ')} (?tools= on the MCP URL)`,
  );
  return undefined;
}

/** The code graph a session's DevLens tools default to: `?repo=` on the MCP URL, else `X-Repo`. */
function sessionRepo(request: FastifyRequest): string | undefined {
  const fromUrl = (request.query as Record<string, unknown> | undefined)?.repo;
  if (typeof fromUrl === 'string' && fromUrl.trim() !== '') return fromUrl.trim().slice(0, 500);
  return repoHeader(request);
}
