import type { FastifyRequest } from 'fastify';
import { pathOf } from './request-path.js';

/** The probes: answered to anyone (no Host check, no credentials, no rate limit); they reveal nothing. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
export const isProbe = (request: FastifyRequest): boolean => PROBE_PATHS.has(pathOf(request));
/**
 * Past the Host check and auth (host-check.ts, auth.ts): the probes, and a scrape of /metrics with
 * METRICS_TOKEN (metrics.ts).
 */
export const isOpen = (request: FastifyRequest): boolean => isProbe(request) || request.scraper;

/**
 * The OAuth protected resource metadata (RFC 9728; registered only with OAUTH_ISSUER): past auth,
 * since a client reads it before it has a token (the Host check still applies).
 */
export const METADATA_PATHS: ReadonlySet<string> = new Set([
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
]);
export const isResourceMetadata = (request: FastifyRequest): boolean => METADATA_PATHS.has(pathOf(request));
