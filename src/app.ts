import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import type { Db } from './db/client.js';
import type { Caller } from './domain/context.js';
import { registerErrorHandling } from './http/errors.js';
import { registerHealth } from './http/health.js';
import { registerHostCheck } from './http/host-check.js';
import { registerOpenApi } from './http/openapi.js';
import { registerOperationRoutes } from './http/operation-routes.js';
import { registerMcpRoutes } from './mcp/http-transport.js';
import { operations, tools } from './operations/index.js';
import { VERSION } from './version.js';

export interface AppDeps {
  db: Db;
  /** The newest migration version; /readyz wants the database at it. */
  schemaVersion: number;
  /** Fastify logger options (default: pino at config.logLevel). */
  logger?: FastifyServerOptions['logger'];
}

type AppConfig = Pick<
  Config,
  'logLevel' | 'mcpStateless' | 'allowedHosts' | 'allowedOrigins' | 'sessionIdleMs' | 'defaultProject'
>;

const ANONYMOUS: Caller = { name: null, scopes: new Set(['read', 'write', 'admin']) };

/**
 * Builds the service: REST under /api/v1, MCP at /mcp, /openapi.json, /healthz and /readyz.
 * Never listens; `main.ts serve` and the tests do.
 */
export async function buildApp(config: AppConfig, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    // Validation is the operations' own (one zod path for MCP and REST); schemas here document routes.
    schemaErrorFormatter: (errors) => new Error(errors.map((e) => e.message).join('; ')),
  });
  app.setValidatorCompiler(() => (data) => ({ value: data }));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // JSON bodies only: Fastify's built-in text/plain parser would hand routes a string (400), not 415.
  app.removeContentTypeParser('text/plain');

  registerErrorHandling(app);
  registerHostCheck(app, { allowedHosts: config.allowedHosts, allowedOrigins: config.allowedOrigins });
  await registerOpenApi(app);

  const callerOf = (): Caller => ANONYMOUS;
  registerHealth(app, { db: deps.db.kysely, schemaVersion: deps.schemaVersion });
  registerOperationRoutes(app, {
    db: deps.db.kysely,
    defaultProject: config.defaultProject,
    operations,
    tools,
    callerOf,
  });
  await registerMcpRoutes(app, {
    db: deps.db.kysely,
    log: app.log,
    defaultProject: config.defaultProject,
    version: VERSION,
    tools,
    stateless: config.mcpStateless,
    sessionIdleMs: config.sessionIdleMs,
    callerOf,
  });
  return app;
}
