import type { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

/** The configuration `buildApp` takes. */
export type ServerConfig = Parameters<typeof buildApp>[0];

/**
 * A configuration for a service under test or benchmark: quiet logs, auth off, no embedder (unless a
 * test runs its fake Ollama, see fake-ollama.ts), limits out of the way; `overrides` replace whole keys.
 */
export const testConfig = (overrides: Partial<ServerConfig> = {}): ServerConfig => ({
  logLevel: 'silent',
  mcpStateless: false,
  instanceName: undefined,
  allowedHosts: undefined,
  allowedOrigins: undefined,
  sessionIdleMs: 30 * 60_000,
  defaultProject: 'default',
  // No embedder unless a test runs its fake Ollama (see fake-ollama.ts).
  embedding: { provider: 'none', ollamaHost: 'http://127.0.0.1:9', model: 'nomic-embed-text', timeoutMs: 2_000 },
  // No summary model: `repo {action: "analyze", summarize: true}` is refused unless a test sets one.
  summaries: { model: undefined, ollamaHost: 'http://127.0.0.1:9', concurrency: 4, timeoutMs: 2_000 },
  // The service's defaults (SEARCH_VECTOR_WEIGHT & co., src/config.ts).
  searchWeights: loadConfig({}).searchWeights,
  graphs: { retention: 20, uploadLimit: 256 * 1024 * 1024, analyzeRoots: [] },
  packet: { meta: true, code: false, answer: true, ranker: 'rrf' },
  hooks: { contextTokens: 1_500, capture: false, sessionTtlMs: 86_400_000 },
  graphUploads: { max: 4, perKey: 2, minRate: 10 * 1024, rateWindowMs: 10_000 },
  auth: { mode: 'off', adminToken: undefined },
  metricsToken: undefined,
  limits: {
    rateLimitMax: 1_000_000,
    rateLimitWindowMs: 60_000,
    bodyLimit: 2 * 1024 * 1024,
    requestTimeoutMs: 300_000,
    maxSessions: 1000,
    maxSessionsPerKey: 100,
  },
  ...overrides,
});
