import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { VERSION } from '../version.js';

/**
 * The OpenAPI 3.1 document, derived by @fastify/swagger from the routes' zod schemas (which come
 * from the operation definitions). Served at GET /openapi.json; `npm run openapi` commits it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'DevStream Hub',
        version: VERSION,
        description:
          'REST mirror of the DevStream Hub MCP tools (MCP: Streamable HTTP at /mcp). Errors are ' +
          '`{error: {code, message, details}}` with the codes listed in README.md. With AUTH=required every ' +
          'route but /healthz and /readyz needs `Authorization: Bearer <API key>` (401 without one, 403 ' +
          'FORBIDDEN without the scope a route names, 429 RATE_LIMITED past the rate limit).',
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key token (dsh_…); see README.md, "Security"',
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
        { name: 'tools', description: 'Every MCP tool, 1:1: body = arguments, response = structuredContent' },
        { name: 'service', description: 'Health and the API description' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
