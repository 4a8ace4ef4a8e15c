import type { AddressInfo } from 'node:net';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { VERSION } from '../version.js';

export interface OpenApiOptions {
  /** The service's URL as clients reach it (PUBLIC_URL). Unset: the address it listens on, found per request. */
  publicUrl?: string | undefined;
}

const SERVER_DESCRIPTION = 'This DevStream Hub (PUBLIC_URL; by default the address it listens on)';

/**
 * The URL of the address the service listens on: a wildcard address (HOST=0.0.0.0 or ::) is shown
 * as `localhost`, the one name it surely answers to; behind a proxy or a wildcard, PUBLIC_URL says better.
 */
function listeningUrl(address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') return '/';
  const host = address.address === '0.0.0.0' || address.address === '::' ? 'localhost' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Every `#/components/schemas/<name>` that `value` refers to. */
function schemaRefs(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const item of value) schemaRefs(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string' && item.startsWith('#/components/schemas/'))
        into.add(item.slice('#/components/schemas/'.length));
      else schemaRefs(item, into);
    }
  }
  return into;
}

/**
 * The document without the component schemas nothing refers to: the zod transform registers an
 * input and an output form of every schema with an id (`Error` and `ErrorInput`), though errors
 * are only answered and a commit file only sent.
 */
function withoutUnusedSchemas<T extends { paths?: unknown; components?: { schemas?: Record<string, unknown> } }>(
  document: T,
): T {
  const schemas = document.components?.schemas;
  if (!schemas) return document;
  const used = schemaRefs(document.paths, new Set());
  for (let pending = [...used]; pending.length > 0;) {
    const found = schemaRefs(schemas[pending.pop()!], new Set());
    for (const name of found) {
      if (used.has(name)) continue;
      used.add(name);
      pending.push(name);
    }
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...document, components: { ...document.components, schemas: kept } };
}

/**
 * The OpenAPI 3.1 document, derived by @fastify/swagger from the routes' zod schemas (which come
 * from the operation definitions). Served at GET /openapi.json; `npm run openapi` commits it. Its
 * one server is PUBLIC_URL, or else the address the service listens on (so a client generated from
 * the served document calls the instance that served it).
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions = {}): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'DevStream Hub',
        version: VERSION,
        description:
          'REST mirror of the DevStream Hub MCP tools (MCP: Streamable HTTP at /mcp). Errors are ' +
          '`{error: {code, message, details}}` with the codes listed in docs/rest.md (Errors). With AUTH=required every ' +
          'route but /healthz and /readyz needs `Authorization: Bearer <API key>` (401 without one, 403 ' +
          'FORBIDDEN without the scope a route names, 429 RATE_LIMITED past the rate limit).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: options.publicUrl ? [{ url: options.publicUrl, description: SERVER_DESCRIPTION }] : [],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key token (dsh_…); see docs/security.md',
          },
        },
      },
      security: [{ apiKey: [] }],
      tags: [
        { name: 'tasks', description: 'Tasks and plans (projects → phases → tasks)' },
        { name: 'memory', description: 'Semantic memory: store, hybrid search, get, delete' },
        { name: 'graphs', description: 'Code graphs uploaded by an analyzer job (DevLens commit files)' },
        { name: 'jobs', description: 'Background jobs (code analysis on the server)' },
        { name: 'keys', description: 'API keys (admin scope)' },
        { name: 'hooks', description: "Claude Code's hooks served by the hub: context for the session, fail-open" },
        { name: 'tools', description: 'Every MCP tool, 1:1: body = arguments, response = structuredContent' },
        { name: 'service', description: 'Health and the API description' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: (input) => withoutUnusedSchemas(jsonSchemaTransformObject(input) as Partial<OpenAPIV3_1.Document>),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => {
    const document = app.swagger();
    if (options.publicUrl) return document;
    return { ...document, servers: [{ url: listeningUrl(app.server.address()), description: SERVER_DESCRIPTION }] };
  });
}
