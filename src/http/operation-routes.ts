import type {} from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { z } from 'zod';
import type { Context, Services } from '../domain/context.js';
import type { Caller } from '../auth/scopes.js';
import type { Logger } from '../logger.js';
import { AppError, ERROR_CODES } from '../errors.js';
import { invoke } from '../operations/invoke.js';
import { repoHeader } from '../repo-header.js';
import type { AnyOperation, HttpRoute } from '../operations/operation.js';

export interface OperationRoutesOptions {
  services: Services;
  operations: AnyOperation[];
  tools: AnyOperation[];
  callerOf(request: FastifyRequest): Caller;
}

/** The error body every REST route may answer with. */
export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
      message: z.string(),
      details: z.unknown(),
    }),
  })
  .meta({ id: 'Error' });

/** Unwraps optional/default/nullable wrappers to the schema that says what a value is. */
function innerType(schema: z.ZodType): z.ZodType {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable) {
    s = s.unwrap() as z.ZodType;
  }
  return s;
}

/**
 * Query strings are text: turns `"7"` into 7 and `"true"` into true where the input schema wants a
 * number or boolean, so the same zod schema validates MCP arguments and query strings. Anything
 * else is left as it came, for the schema to reject with the field's name.
 */
export function coerceQuery(schema: z.ZodObject, query: Record<string, unknown>): Record<string, unknown> {
  // Built by Object.fromEntries, so a `__proto__` or `constructor` key stays an own (unknown, refused) field:
  // `out[key] = value` would set or ignore the prototype and drop the key unseen.
  return Object.fromEntries(
    Object.entries(query).map(([key, value]) => {
      const field = Object.hasOwn(schema.shape, key) ? (schema.shape[key] as z.ZodType) : undefined;
      const kind = field ? innerType(field) : undefined;
      if (typeof value === 'string' && kind instanceof z.ZodArray)
        return [
          key,
          value
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean),
        ];
      if (typeof value === 'string' && kind instanceof z.ZodNumber && /^-?\d+(\.\d+)?$/.test(value.trim()))
        return [key, Number(value)];
      if (typeof value === 'string' && kind instanceof z.ZodBoolean && (value === 'true' || value === 'false'))
        return [key, value === 'true'];
      return [key, value];
    }),
  );
}

/** The arguments in a JSON body: an object, or none at all (no body) for an operation without required fields. */
function asObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('VALIDATION_ERROR', '(body): must be a JSON object', {
      details: { issues: [{ field: '(body)', message: 'must be a JSON object' }] },
    });
  }
  return body as Record<string, unknown>;
}

/** The OpenAPI tag of a resource route, by its first path segment. */
const TAGS: Record<string, string> = { tasks: 'tasks', plans: 'tasks', memories: 'memory', jobs: 'jobs', keys: 'keys' };
const tagOf = (route: HttpRoute | 'tool') =>
  route === 'tool' ? 'tools' : (TAGS[route.path.split('/')[1] ?? ''] ?? 'graphs');

/** Route documentation for @fastify/swagger; validation itself is `invoke`'s, shared with MCP. */
function routeSchema(op: AnyOperation, route: HttpRoute | 'tool', status: number) {
  const scope = `Needs an API key with the \`${op.scope}\` scope${op.scopeFor ? ' (more for some arguments)' : ''}.`;
  const common = {
    operationId:
      route === 'tool' ? `tool_${op.name}` : `${route.method.toLowerCase()}_${op.name.replace(/^devstream_/, '')}`,
    summary: route === 'tool' ? `${op.title} (MCP tool mirror)` : op.title,
    description: `${route === 'tool' ? `Calls the MCP tool \`${op.name}\`: body = its arguments, response = its structuredContent. ` : ''}${op.description} ${scope}`,
    tags: [tagOf(route)],
    response: {
      [status]: op.output,
      '4XX': ErrorBodySchema,
      '5XX': ErrorBodySchema,
    },
  };
  if (route === 'tool') return { ...common, body: op.input };
  const renamed = route.params ?? {};
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const inputFields = new Set(pathParams.map((p) => renamed[p] ?? p));
  const params = pathParams.length
    ? z.object(Object.fromEntries(pathParams.map((p) => [p, op.input.shape[renamed[p] ?? p] as z.ZodType])))
    : undefined;
  const rest = op.input.omit(Object.fromEntries([...inputFields].map((f) => [f, true])) as never);
  const readsQuery = route.method === 'GET' || route.method === 'DELETE';
  const carrier = readsQuery ? { querystring: renameFields(rest, route.query ?? {}) } : { body: rest };
  return { ...common, ...(params ? { params } : {}), ...carrier };
}

/** The schema with some fields under other names (`{ q: 'query' }`: the field `query` shown as `q`). */
function renameFields(schema: z.ZodObject, names: Record<string, string>): z.ZodObject {
  const byField = new Map(Object.entries(names).map(([http, field]) => [field, http]));
  if (byField.size === 0) return schema;
  return z.strictObject(
    Object.fromEntries(
      Object.entries(schema.shape).map(([field, type]) => [byField.get(field) ?? field, type as z.ZodType]),
    ),
  );
}

/** Query-string keys under their input field names. */
function renameQuery(
  query: Record<string, unknown>,
  names: Record<string, string> | undefined,
): Record<string, unknown> {
  if (!names) return query;
  return Object.fromEntries(
    Object.entries(query).map(([key, value]) => [Object.hasOwn(names, key) ? names[key]! : key, value]),
  );
}

/**
 * Registers every operation's REST routes and, for tools, `POST /api/v1/tools/{name}`: all through
 * `invoke`, the path MCP calls take too.
 */
export function registerOperationRoutes(app: FastifyInstance, options: OperationRoutesOptions): void {
  const context = (request: FastifyRequest, timings: string[]): Context => ({
    ...options.services,
    timing: (name, ms) => timings.push(`${name};dur=${ms.toFixed(2)}`),
    caller: options.callerOf(request),
    defaultRepo: repoHeader(request),
    log: request.log as Logger,
    // The response carries what a notice says (a method_note, auto_created): the log gets it at info,
    // so an Ollama outage is one warning (the embedder's), not one per request.
    notice: (level, message, data) => {
      const log = level === 'debug' ? request.log.debug : level === 'error' ? request.log.error : request.log.info;
      log.call(request.log, { notice: level, ...data }, message);
    },
  });

  /** Runs the operation; `Server-Timing` tells the whole operation's time and its parts (`embed`). */
  const run = async (op: AnyOperation, request: FastifyRequest, reply: FastifyReply, raw: unknown, status: number) => {
    const timings: string[] = [];
    const started = performance.now();
    const { output } = await invoke(op, context(request, timings), raw);
    timings.push(`op;dur=${(performance.now() - started).toFixed(2)}`);
    return reply.code(status).header('server-timing', timings.join(', ')).send(output);
  };

  for (const op of options.operations) {
    for (const route of op.routes) {
      const status = route.status ?? 200;
      const readsQuery = route.method === 'GET' || route.method === 'DELETE';
      const options_: RouteOptions = {
        method: route.method,
        url: `/api/v1${route.path}`,
        schema: routeSchema(op, route, status),
        handler: async (request, reply) => {
          const raw = readsQuery
            ? coerceQuery(op.input, renameQuery(request.query as Record<string, unknown>, route.query))
            : { ...asObject(request.body) };
          for (const [param, value] of Object.entries(request.params as Record<string, string>)) {
            raw[route.params?.[param] ?? param] = value;
          }
          return run(op, request, reply, raw, status);
        },
      };
      app.route(options_);
    }
  }

  for (const op of options.tools) {
    app.route({
      method: 'POST',
      url: `/api/v1/tools/${op.name}`,
      schema: routeSchema(op, 'tool', 200),
      handler: async (request, reply) => {
        return run(op, request, reply, asObject(request.body), 200);
      },
    });
  }
  app.post('/api/v1/tools/:name', { schema: { hide: true } }, async (request) => {
    const { name } = request.params as { name: string };
    throw new AppError('NOT_FOUND', `No tool named "${name}"`, {
      details: { tools: options.tools.map((t) => t.name) },
    });
  });
}
