import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { Authenticator } from './auth/authenticator.js';
import { OAuthResourceServer } from './auth/oauth/resource-server.js';
import type { Services } from './domain/context.js';
import type { ChangeFeed } from './db/change-bus.js';
import { AccessTracker } from './domain/memory/access-tracker.js';
import { KeywordStatsCompactor } from './domain/memory/keyword-stats-compactor.js';
import { TableMaintenance } from './db/table-maintenance.js';
import { embeddingPipeline } from './embeddings/embedding-pipeline.js';
import { analyzeJob } from './jobs/analyze-job.js';
import { JobRunner } from './jobs/job-runner.js';
import { callerOf, clientKey, registerAuth } from './http/auth.js';
import { closeRateLimitRedis, connectRateLimitRedis, rateLimitRedis } from './http/rate-limit-redis.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/errors.js';
import { registerGraphUpload } from './http/graph-upload.js';
import { registerHookRoutes } from './http/hooks.js';
import { registerHealth } from './http/health.js';
import { registerHostCheck } from './http/host-check.js';
import { registerOpenApi } from './http/openapi.js';
import { registerOperationRoutes } from './http/operation-routes.js';
import { registerResourceMetadata } from './http/resource-metadata.js';
import { registerMcpRoutes } from './mcp/http-transport.js';
import type { McpSessions } from './mcp/session-store.js';
import { operations, tools } from './operations/index.js';
import { VERSION } from './version.js';
import { loggerOptions } from './logger.js';
import { Metrics } from './observability/metrics.js';
import { registerMetrics } from './http/metrics.js';
import { DashboardFiles, registerDashboard } from './http/dashboard.js';
import { registerRequestId, requestId } from './http/request-id.js';
import { registerDrain } from './http/drain.js';
import { REQUEST_LULL, requestLull } from './lull.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { registerGauges } from './observability/gauges.js';
import { FaultLog } from './operations/fault-log.js';
import { SearchIndexCache } from './domain/graphs/search-index.js';
import { PGLITE_STAGED_SCANNED } from './db/queries/memories/vector-branch.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every instance's changes as they commit (Services.changes), for parts outside the domain. */
    changes: ChangeFeed;
  }
}

export interface AppDeps {
  db: Db;
  /** The newest migration version; /readyz wants the database at it. */
  schemaVersion: number;
  /** Where log lines go (default: stdout), e.g. a test capturing them. */
  logStream?: { write(line: string): void };
  /** The metrics registry (default: a new one per app). */
  metrics?: Metrics;
  /** How often open MCP sessions' keys are checked for revocation (default KEY_RECHECK_MS, 5 s); tests shorten it. */
  keyRecheckMs?: number;
  /** Least time between two warnings for 503s (default UNAVAILABLE_LOG_EVERY_MS, 5 s); tests shorten it. */
  unavailableLogEveryMs?: number;
  /**
   * Told of every route as it is registered (HEAD routes Fastify adds included): tests walk the
   * whole route table with it, so that a route added later cannot escape their checks.
   */
  onRoute?(route: { method: string; url: string }): void;
}

type AppConfig = Pick<
  Config,
  | 'logLevel'
  | 'mcpStateless'
  | 'instanceName'
  | 'allowedHosts'
  | 'allowedOrigins'
  | 'sessionIdleMs'
  | 'defaultProject'
  | 'embedding'
  | 'summaries'
  | 'searchWeights'
  | 'graphs'
  | 'graphUploads'
  | 'packet'
  | 'hooks'
  | 'auth'
  | 'limits'
  | 'metricsToken'
> &
  Partial<Pick<Config, 'publicUrl' | 'redisUrl'>>;

/**
 * Builds the service: REST under /api/v1, MCP at /mcp, /openapi.json, /healthz and /readyz.
 * Never listens; `main.ts serve` and the tests do.
 */
export async function buildApp(config: AppConfig, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { ...loggerOptions(config.logLevel), ...(deps.logStream ? { stream: deps.logStream } : {}) },
    // Every log line of a request carries its id (`reqId`), returned in `x-request-id`.
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: config.limits.bodyLimit,
    requestTimeout: config.limits.requestTimeoutMs,
    // Node ids in paths (GET /api/v1/nodes/{id}) run to 2,000 bytes, ~6 KB percent-encoded.
    routerOptions: { maxParamLength: 16_384 },
    // Router and HTTP-parser faults in the service's error body, not Fastify's or Node's.
    frameworkErrors,
    clientErrorHandler,
    // Validation is the operations' own (one zod path for MCP and REST); schemas here document routes.
    schemaErrorFormatter: (errors) => new Error(errors.map((e) => e.message).join('; ')),
  });
  const onRoute = deps.onRoute;
  if (onRoute)
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) onRoute({ method, url: route.url });
    });
  app.setValidatorCompiler(() => (data) => ({ value: data }));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // JSON bodies only: Fastify's built-in text/plain parser would hand routes a string (400), not 415.
  app.removeContentTypeParser('text/plain');
  // Nesting and size bounded before parsing: a 2 MB body cannot buy half a second of CPU.
  registerJsonBodyParser(app);

  // The 503 warnings' throttle is the app's own, shared by the REST error handler and the MCP tools.
  const faults = new FaultLog(undefined, deps.unavailableLogEveryMs);
  registerErrorHandling(app, faults);
  registerRequestId(app);
  const drain = registerDrain(app);
  const metrics = deps.metrics ?? new Metrics();
  const addMetricsRoute = registerMetrics(app, { metrics, token: config.metricsToken });
  registerHostCheck(app, { allowedHosts: config.allowedHosts, allowedOrigins: config.allowedOrigins });
  const db = deps.db.kysely;
  const dashboard = new DashboardFiles();
  // REDIS_URL: rate limits shared by every instance on it; connected once the app is ready, closed with it.
  const redis = config.redisUrl ? rateLimitRedis(config.redisUrl, app.log) : undefined;
  if (redis) {
    app.addHook('onReady', () => connectRateLimitRedis(redis));
    app.addHook('onClose', () => closeRateLimitRedis(redis));
  }
  // OAUTH_ISSUER: the IdP's access tokens beside the API keys (docs/oauth.md).
  const oauth = config.auth.oauth ? new OAuthResourceServer(config.auth.oauth, app.log) : undefined;
  const { countMore } = await registerAuth(app, {
    isDashboardFile: (request) => dashboard.has(request),
    authenticator: new Authenticator(db, config.auth.mode, config.auth.adminToken, app.log, oauth),
    challenge: oauth?.challenge,
    rateLimit: { max: config.limits.rateLimitMax, windowMs: config.limits.rateLimitWindowMs, redis },
  });
  if (oauth) registerResourceMetadata(app, { challenge: oauth.challenge, resource: oauth.config.resource });
  await registerOpenApi(app, { publicUrl: config.publicUrl });
  addMetricsRoute();

  // On Postgres, the embedding worker's rounds start in a lull of the requests (lull.ts); PGlite's one
  // connection already serves its background statements only in lulls, one at a time (pglite-dialect.ts).
  // Not the keyword statistics' folds: they make searches cheaper (lull.ts).
  const lull = deps.db.kind === 'postgres' ? requestLull(drain.quietFor, REQUEST_LULL) : undefined;
  const { embedder, indexes, worker } = embeddingPipeline(config.embedding, db, app.log, metrics, {
    engine: deps.db.kind,
    background: deps.db.background,
    lull,
  });
  const jobs = new JobRunner(
    db,
    {
      analyze: analyzeJob({
        db,
        analyzeRoots: config.graphs.analyzeRoots,
        retention: config.graphs.retention,
        summaries: config.summaries,
        log: app.log,
        nodeVectors: { embedder, queued: () => worker.kick(), log: app.log },
      }),
    },
    app.log,
  );
  // Every instance's changes (change-bus.ts): listening from ready to close.
  const changes = deps.db.openChangeBus(app.log);
  app.addHook('onReady', () => changes.start());
  app.addHook('onClose', () => changes.close());
  app.decorate('changes', { subscribe: (listener) => changes.subscribe(listener) } satisfies ChangeFeed);
  const accesses = new AccessTracker(deps.db.background, app.log);
  const compactor = new KeywordStatsCompactor(deps.db.background, app.log);
  // Postgres runs autovacuum; embedded PGlite has none.
  const maintenance = deps.db.kind === 'pglite' ? new TableMaintenance(deps.db.background, app.log) : undefined;
  app.addHook('onReady', async () => {
    compactor.start();
    maintenance?.start();
    await worker.start();
    jobs.start();
  });
  app.addHook('onClose', async () => {
    await jobs.stop();
    await worker.stop();
    await compactor.stop();
    await maintenance?.stop();
    await accesses.flush();
  });
  let mcpSessions: McpSessions | undefined;
  const services: Services = {
    db,
    keys: { revoked: (name) => void mcpSessions?.closeSessionsOf(name) },
    changes,
    defaultProject: config.defaultProject,
    jobs: {
      analyzeRoots: config.graphs.analyzeRoots,
      summaryModel: config.summaries.model,
      queued: () => jobs.kick(),
    },
    memory: {
      embedder,
      indexes,
      accesses,
      queued: (kind) => (kind === 'vector' ? worker.vectorStaged() : worker.memoryQueued()),
      weights: config.searchWeights,
      // PGlite computes the staged vectors' distances in WASM: it scans fewer of them.
      ...(deps.db.kind === 'pglite' ? { stagedScanned: PGLITE_STAGED_SCANNED } : {}),
    },
    graphs: { indexes: new SearchIndexCache() },
    packet: config.packet,
  };

  registerHealth(app, { db, schemaVersion: deps.schemaVersion, embedder });
  registerOperationRoutes(app, {
    services,
    operations,
    tools,
    callerOf,
  });
  await registerHookRoutes(app, { services, settings: config.hooks, metrics, callerOf });
  const uploads = await registerGraphUpload(app, {
    services,
    callerOf,
    uploadLimit: config.graphs.uploadLimit,
    retention: config.graphs.retention,
    uploadsMax: config.graphUploads.max,
    uploadsPerKey: config.graphUploads.perKey,
    minRate: config.graphUploads.minRate,
    rateWindowMs: config.graphUploads.rateWindowMs,
    drain,
  });
  registerGauges(metrics, { db: deps.db, embedder, uploads });
  mcpSessions = await registerMcpRoutes(app, {
    services,
    log: app.log,
    version: VERSION,
    tools,
    stateless: config.mcpStateless,
    sessionPrefix: config.instanceName ? `${config.instanceName}.` : '',
    sessionIdleMs: config.sessionIdleMs,
    keyRecheckMs: deps.keyRecheckMs,
    maxSessions: config.limits.maxSessions,
    maxSessionsPerKey: config.limits.maxSessionsPerKey,
    callerOf,
    holderOf: clientKey,
    countMore,
    metrics,
    faults,
    challenge: oauth?.challenge,
  });
  // A key revoked anywhere (another instance, the CLI) ends its MCP sessions here at once, as a
  // local revocation does (which closes them before this event arrives; closing none is harmless).
  changes.subscribe((event) => {
    if (event.type === 'key-revoked') mcpSessions?.closeSessionsOf(event.name);
  });
  await registerDashboard(app, dashboard);
  return app;
}
