import type { FastifyBaseLogger } from 'fastify';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/core';
import {
  LOG_LEVEL_META_KEY,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type JSONRPCRequest,
  type LoggingLevel,
  type Result,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { SCOPES, type Scope } from '../auth/scopes.js';
import type { ToolProfileName } from '../auth/tool-profiles.js';
import type { Context, Services } from '../domain/context.js';
import type { Caller } from '../auth/scopes.js';
import type { Logger } from '../logger.js';
import type { FaultLog } from '../operations/fault-log.js';
import { invoke, toAppError } from '../operations/invoke.js';
import { registerPrompts } from './prompts.js';
import { callerAt } from './request-caller.js';
import { registerResources } from './resources.js';
import { toFieldIssues } from '../domain/field-issues.js';
import type { AnyOperation } from '../operations/operation.js';
import { validationError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';

export interface McpDeps {
  services: Services;
  log: FastifyBaseLogger;
  version: string;
  tools: AnyOperation[];
  /** Tool calls are counted and timed here when given. */
  metrics?: Metrics;
  /** Where failed tool calls that are the service's fault are logged (the app's, shared with REST). */
  faults: FaultLog;
}

/** RFC 5424's levels, least severe first, as MCP's logging names them. */
const LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** The methods whose requests are checked against their schema before their handler runs (StrictServer). */
const REQUEST_SCHEMAS: Record<string, z.ZodType> = {
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'logging/setLevel': SetLevelRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'resources/subscribe': SubscribeRequestSchema,
  'resources/unsubscribe': UnsubscribeRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
  'completion/complete': CompleteRequestSchema,
  ping: PingRequestSchema,
};

/**
 * How long an MCP client of the 2026-07-28 era may keep a list or discovery result (its `ttlMs`):
 * the tools and resources of this server change with a deployment or an upload, not per call.
 * `private`: what a key is shown depends on its scopes.
 */
export const LIST_TTL_MS = 60_000;

/** Resource links at most after a tool result's text (a page of tasks may hold 500). */
export const MAX_RESULT_LINKS = 20;

/**
 * The SDK's Server, except that a request not fitting its method's schema (`tools/call` without
 * params, `logging/setLevel` with an unknown level…) is answered -32602 Invalid params naming the
 * fields. The SDK checks a spec method's request before its handler and answers a failure as
 * -32603 Internal error: a server fault for the client's mistake.
 */
class StrictServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const inner = super._wrapHandler(method, handler);
    const schema = REQUEST_SCHEMAS[method];
    if (!schema) return inner;
    return async (request, ctx) => {
      const parsed = schema.safeParse(request);
      if (!parsed.success)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Invalid ${method} request: ${validationError(toFieldIssues(parsed.error)).message}`,
        );
      return inner(request, ctx);
    };
  }
}

/** A tool's JSON Schema as MCP lists it: zod's, without the `$schema` key that some validators reject. */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json as Tool['inputSchema'];
}

/** The server's name and version, as `initialize` and `server/discover` give them. */
const SERVER_INFO = (deps: McpDeps) => ({ name: 'devstream-hub', version: deps.version });

/** The two protocol eras: 2026-07-28 (`modern`) and the 2025 revisions (`legacy`). */
export type Era = 'legacy' | 'modern';

/**
 * Tool arguments mirrored into a request header in the 2026-07-28 era (SEP-2243 `x-mcp-header`):
 * a client sends `Mcp-Param-Repo` / `Mcp-Param-Project` with the call, so a gateway can route or
 * meter by code graph or project without reading the body; the SDK refuses a call whose header
 * disagrees with its arguments (-32020). Not in the 2025 era's schemas: its clients know no such keyword.
 */
const PARAM_HEADERS: Record<string, string> = { repo: 'Repo', project: 'Project' };

/**
 * Tool profiles (`?tools=` on the MCP URL, else the key's default, issue 23): `all` (the default)
 * lists every tool the key may call; `core` only the six most sessions need, so their definitions
 * cost a fraction of the context (bench/tool-profiles.ts measures it).
 */
export const TOOL_PROFILES = {
  all: null,
  core: [
    'resolve_context',
    'find_symbols',
    'devstream_search_memory',
    'devstream_store_memory',
    'devstream_list_tasks',
    'devstream_update_task',
  ],
} as const satisfies Record<ToolProfileName, readonly string[] | null>;
export type ToolProfile = keyof typeof TOOL_PROFILES;

/** The tools of a profile, in the registry's order. */
export function profileTools(tools: AnyOperation[], profile: ToolProfile): AnyOperation[] {
  const names: readonly string[] | null = TOOL_PROFILES[profile];
  return names === null ? tools : tools.filter((op) => names.includes(op.name));
}

const described = new WeakMap<AnyOperation[], Map<string, Tool[]>>();

/**
 * The MCP descriptions of the tools a caller with these scopes may call, computed once per list,
 * set of scopes and era (not per session): a key without `write` is not shown the tools that need it.
 */
export function describeTools(
  tools: AnyOperation[],
  scopes: ReadonlySet<Scope> = new Set(SCOPES),
  era: Era = 'legacy',
  profile: ToolProfile = 'all',
): Tool[] {
  let byScopes = described.get(tools);
  if (!byScopes) {
    byScopes = new Map();
    described.set(tools, byScopes);
  }
  const key = `${era}:${profile}:${SCOPES.filter((s) => scopes.has(s)).join(',')}`;
  let list = byScopes.get(key);
  if (!list) {
    list = profileTools(tools, profile)
      .filter((op) => scopes.has(op.scope))
      .map((op) => describeTool(op, era));
    byScopes.set(key, list);
  }
  return list;
}

function describeTool(op: AnyOperation, era: Era): Tool {
  const inputSchema = toolJsonSchema(op.input, 'input');
  if (era === 'modern') {
    const properties = inputSchema.properties as Record<string, Record<string, unknown>> | undefined;
    for (const [property, header] of Object.entries(PARAM_HEADERS)) {
      const schema = properties?.[property];
      if (schema?.type === 'string') properties![property] = { ...schema, 'x-mcp-header': header };
    }
  }
  return {
    name: op.name,
    title: op.title,
    description: op.description,
    inputSchema,
    outputSchema: toolJsonSchema(op.output, 'output'),
    annotations: { title: op.title, ...op.annotations },
  };
}

/**
 * The 2026-07-28 era's face of a server: an McpServer around it. The SDK's HTTP entry checks a
 * `tools/call`'s `Mcp-Param-*` headers against the called tool's `x-mcp-header` declarations
 * (SEP-2243) only for an McpServer, reading them through `toolInputSchemaJson`; this one answers
 * from the tool list its server shows (test/mcp-eras.test.ts and the conformance scenario
 * http-custom-header-server-validation pin it).
 */
class ModernServer extends McpServer {
  constructor(
    info: { name: string; version: string },
    inner: Server,
    private readonly inputSchemas: ReadonlyMap<string, Record<string, unknown>>,
  ) {
    super(info);
    (this as unknown as { server: Server }).server = inner;
  }

  override toolInputSchemaJson(name: string): Record<string, unknown> | undefined {
    return this.inputSchemas.get(name);
  }
}

/** createMcpServer for a request of the 2026-07-28 era (see ModernServer). */
export function createModernMcpServer(
  deps: McpDeps,
  caller: Caller,
  defaultRepo?: string,
  profile: ToolProfile = 'all',
): McpServer {
  const server = createMcpServer(deps, caller, defaultRepo, 'modern', profile);
  const schemas = new Map(
    describeTools(deps.tools, caller.scopes, 'modern', profile).map((t) => [t.name, t.inputSchema]),
  );
  return new ModernServer(SERVER_INFO(deps), server, schemas);
}

/**
 * One MCP server (one per session, or per request when stateless) whose tools are the registry's
 * operations. Tool failures are `isError` results carrying the catalogue code; only protocol faults
 * (unknown tool) are JSON-RPC errors. Each request is served as the caller of the HTTP request that
 * carried it (request-caller.ts); `caller`, the one the server was opened for, only without HTTP.
 */
export function createMcpServer(
  deps: McpDeps,
  caller: Caller,
  defaultRepo?: string,
  era: Era = 'legacy',
  profile: ToolProfile = 'all',
): Server {
  const server = new StrictServer(SERVER_INFO(deps), {
    capabilities: {
      tools: { listChanged: false },
      resources: { listChanged: true, subscribe: true },
      prompts: { listChanged: false },
      completions: {},
      logging: {},
    },
    cacheHints: {
      'tools/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
      'prompts/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
      'resources/templates/list': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
      'server/discover': { ttlMs: LIST_TTL_MS, cacheScope: 'private' },
    },
    instructions:
      'DevStream Hub: shared tasks and plans, semantic memory and code graphs for a team of coding agents. List ' +
      'tasks and plans before creating new ones; project and phase names match exactly (case-insensitive). ' +
      'Search memory before re-deciding something. For code, find_symbols and get_node answer from the graph the ' +
      'analyzer uploaded: name the repo (repo argument, ?repo= on this URL or an X-Repo header) when there are several.',
  });
  // A tool outside the profile is unknown here, as it is to tools/list.
  const byName = new Map(profileTools(deps.tools, profile).map((op) => [op.name, op]));
  // The legacy era's session level (logging/setLevel); a modern request carries its own in `_meta`.
  let minLevel: LoggingLevel = 'info';

  server.setRequestHandler('logging/setLevel', async (request) => {
    minLevel = request.params.level;
    return {};
  });
  const callerOf = (ctx: ServerContext) => callerAt(ctx, caller);
  server.setRequestHandler('tools/list', async (_request, ctx) => ({
    tools: describeTools(deps.tools, callerOf(ctx).scopes, era, profile),
  }));
  registerResources(server, deps.services, era, callerOf);
  // Prompts read with the request's caller, the server's default repo and its log.
  registerPrompts(server, (ctx) => ({
    ...deps.services,
    caller: callerOf(ctx),
    defaultRepo,
    log: deps.log,
    timing: () => {},
    notice: () => {},
  }));
  server.setRequestHandler('tools/call', async (request, extra): Promise<CallToolResult> => {
    const op = byName.get(request.params.name);
    if (!op)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        profile === 'all' || !deps.tools.some((t) => t.name === request.params.name)
          ? `Unknown tool: ${request.params.name}`
          : `Unknown tool: ${request.params.name} is not in the ${profile} profile (?tools=all on the MCP URL lists every tool)`,
      );
    const started = performance.now();
    const headers = extra.http?.req?.headers;
    // A request's own X-Repo header wins over the session's default.
    const requestRepo = headers?.get('x-repo')?.split(',')[0]?.trim();
    // The id of the HTTP request that carried the call (set by http-transport), on every log line.
    const reqId = headers?.get('x-request-id') ?? undefined;
    // 2026-07-28: the request names its log level in `_meta` (none: no log messages); 2025: the session's.
    const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
    const asked = envelope?.[LOG_LEVEL_META_KEY];
    const threshold = envelope ? (LEVELS.find((l) => l === asked) ?? undefined) : minLevel;
    const log: Logger = reqId ? deps.log.child({ reqId }) : deps.log;
    const ctx: Context = {
      ...deps.services,
      caller: callerOf(extra),
      defaultRepo: requestRepo || defaultRepo,
      log,
      timing: () => {},
      notice(level, message, data) {
        if (threshold === undefined || LEVELS.indexOf(level) < LEVELS.indexOf(threshold)) return;
        void extra.mcpReq
          .notify({
            method: 'notifications/message',
            params: { level, logger: 'devstream-hub', data: { message, ...data } },
          })
          .catch(() => {});
      },
    };
    try {
      const { input, output } = await invoke(op, ctx, request.params.arguments);
      const ms = performance.now() - started;
      deps.metrics?.toolCalls.observe({ tool: op.name, outcome: 'ok' }, ms / 1000);
      ctx.notice('debug', `${op.name} took ${ms.toFixed(1)} ms`, { tool: op.name });
      const links = (op.links?.(output as never) ?? []).slice(0, MAX_RESULT_LINKS);
      return {
        content: [
          { type: 'text', text: op.render(output as never, input as never) },
          ...links.map((link) => ({ type: 'resource_link' as const, ...link, mimeType: 'application/json' })),
        ],
        structuredContent: output as Record<string, unknown>,
      };
    } catch (thrown) {
      const error = toAppError(thrown, op.action);
      deps.metrics?.toolCalls.observe({ tool: op.name, outcome: error.code }, (performance.now() - started) / 1000);
      deps.faults.log(log, error, thrown, { tool: op.name });
      return {
        isError: true,
        content: [{ type: 'text', text: `❌ Error ${op.action}: ${error.code}: ${error.message}` }],
      };
    }
  });
  return server;
}
