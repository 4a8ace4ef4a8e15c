import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
  SetLevelRequestSchema,
  type CallToolResult,
  type LoggingLevel,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Caller, Context, Logger, Services } from '../domain/context.js';
import type { Database } from '../db/schema.js';
import { invoke, isServerFault, toAppError } from '../operations/invoke.js';
import { registerResources } from './resources.js';
import type { AnyOperation } from '../operations/operation.js';

export interface McpDeps {
  services: Services;
  log: Logger;
  version: string;
  tools: AnyOperation[];
}

const LEVELS = LoggingLevelSchema.options;

/** A tool's JSON Schema as MCP lists it: zod's, without the `$schema` key that some validators reject. */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return json as Tool['inputSchema'];
}

const described = new WeakMap<AnyOperation[], Tool[]>();

/** The MCP descriptions of the given operations, computed once per list (not per session). */
export function describeTools(tools: AnyOperation[]): Tool[] {
  let list = described.get(tools);
  if (!list) {
    list = tools.map(describeTool);
    described.set(tools, list);
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
  const server = new Server(
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
  const tools = describeTools(deps.tools);
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
    // A request's own X-Repo header wins over the session's default.
    const header = extra.requestInfo?.headers?.['x-repo'];
    const requestRepo = (Array.isArray(header) ? header[0] : header)?.trim();
    const ctx: Context = {
      ...deps.services,
      caller,
      defaultRepo: requestRepo || defaultRepo,
      log: deps.log,
      timing: () => {},
      notice(level, message, data) {
        if (LEVELS.indexOf(level) < LEVELS.indexOf(minLevel)) return;
        void extra
          .sendNotification({ method: 'notifications/message', params: { level, logger: 'devstream-hub', data: { message, ...data } } })
          .catch(() => {});
      },
    };
    try {
      const { input, output } = await invoke(op, ctx, request.params.arguments);
      ctx.notice('debug', `${op.name} took ${(performance.now() - started).toFixed(1)} ms`, { tool: op.name });
      return {
        content: [{ type: 'text', text: op.render(output as never, input as never) }],
        structuredContent: output as Record<string, unknown>,
      };
    } catch (thrown) {
      const error = toAppError(thrown, op.action);
      if (isServerFault(error)) deps.log.error({ err: thrown, tool: op.name }, 'tool failed');
      return {
        isError: true,
        content: [{ type: 'text', text: `❌ Error ${op.action}: ${error.code}: ${error.message}` }],
      };
    }
  });
  return server;
}
