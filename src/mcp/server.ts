import type { FastifyBaseLogger } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnyObjectSchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  SetLevelRequestSchema,
  type CallToolResult,
  type LoggingLevel,
  type Notification,
  type Request,
  type Result,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { SCOPES, type Scope } from '../auth/scopes.js';
import type { Context, Services } from '../domain/context.js';
import type { Caller } from '../auth/scopes.js';
import type { Logger } from '../logger.js';
import type { FaultLog } from '../operations/fault-log.js';
import { invoke, toAppError } from '../operations/invoke.js';
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

const LEVELS = LoggingLevelSchema.options;

/**
 * The SDK's Server, except that a request not fitting its method's schema (`tools/call` without
 * params, `logging/setLevel` with an unknown level…) is answered -32602 Invalid params naming the
 * fields. The SDK parses each request before its handler and answers a failure as -32603 Internal
 * error with zod's issue dump: a server fault for the client's mistake. Every handler, the SDK's own
 * (initialize, ping) included, is registered through this override.
 */
class StrictServer extends Server {
  override setRequestHandler<T extends AnyObjectSchema>(
    schema: T,
    handler: (
      request: SchemaOutput<T>,
      extra: RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>,
    ) => ServerResult | Result | Promise<ServerResult | Result>,
  ): void {
    const method = ((schema as unknown as z.ZodObject).shape.method as z.ZodLiteral<string>).value;
    super.setRequestHandler(z.looseObject({ method: z.literal(method) }), (request, extra) => {
      const parsed = (schema as unknown as z.ZodType).safeParse(request);
      if (!parsed.success)
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid ${method} request: ${validationError(toFieldIssues(parsed.error)).message}`,
        );
      return handler(parsed.data as SchemaOutput<T>, extra);
    });
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

const described = new WeakMap<AnyOperation[], Map<string, Tool[]>>();

/**
 * The MCP descriptions of the tools a caller with these scopes may call, computed once per list and
 * set of scopes (not per session): a key without `write` is not shown the tools that need it.
 */
export function describeTools(tools: AnyOperation[], scopes: ReadonlySet<Scope> = new Set(SCOPES)): Tool[] {
  let byScopes = described.get(tools);
  if (!byScopes) {
    byScopes = new Map();
    described.set(tools, byScopes);
  }
  const key = SCOPES.filter((s) => scopes.has(s)).join(',');
  let list = byScopes.get(key);
  if (!list) {
    list = tools.filter((op) => scopes.has(op.scope)).map(describeTool);
    byScopes.set(key, list);
  }
  return list;
}

function describeTool(op: AnyOperation): Tool {
  return {
    name: op.name,
    title: op.title,
    description: op.description,
    inputSchema: toolJsonSchema(op.input, 'input'),
    outputSchema: toolJsonSchema(op.output, 'output'),
    annotations: { title: op.title, ...op.annotations },
  };
}

/**
 * One MCP server (one per session, or per request when stateless) whose tools are the registry's
 * operations. Tool failures are `isError` results carrying the catalogue code; only protocol faults
 * (unknown tool) are JSON-RPC errors.
 */
export function createMcpServer(deps: McpDeps, caller: Caller, defaultRepo?: string): Server {
  const server = new StrictServer(
    { name: 'devstream-hub', version: deps.version },
    {
      capabilities: { tools: { listChanged: false }, resources: {}, logging: {} },
      instructions:
        'DevStream Hub: shared tasks and plans, semantic memory and code graphs for a team of coding agents. List ' +
        'tasks and plans before creating new ones; project and phase names match exactly (case-insensitive). ' +
        'Search memory before re-deciding something. For code, find_symbols and get_node answer from the graph the ' +
        'analyzer uploaded: name the repo (repo argument, ?repo= on this URL or an X-Repo header) when there are several.',
    },
  );
  const tools = describeTools(deps.tools, caller.scopes);
  const byName = new Map(deps.tools.map((op) => [op.name, op]));
  let minLevel: LoggingLevel = 'info';

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    minLevel = request.params.level;
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  registerResources(server, deps.services);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const op = byName.get(request.params.name);
    if (!op) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const started = performance.now();
    const headers = extra.requestInfo?.headers ?? {};
    const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
    // A request's own X-Repo header wins over the session's default.
    const requestRepo = first(headers['x-repo'])?.trim();
    // The id of the HTTP request that carried the call (set by http-transport), on every log line.
    const reqId = first(headers['x-request-id']);
    const log: Logger = reqId ? deps.log.child({ reqId }) : deps.log;
    const ctx: Context = {
      ...deps.services,
      caller,
      defaultRepo: requestRepo || defaultRepo,
      log,
      timing: () => {},
      notice(level, message, data) {
        if (LEVELS.indexOf(level) < LEVELS.indexOf(minLevel)) return;
        void extra
          .sendNotification({
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
      return {
        content: [{ type: 'text', text: op.render(output as never, input as never) }],
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
