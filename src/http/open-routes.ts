import type { FastifyRequest } from 'fastify';
import { pathOf } from './request-path.js';

/**
 * Which requests pass the Host check and the API-key auth (host-check.ts, auth.ts) without
 * credentials: the probes, answered to anyone (no Host check, no credentials, no rate limit; they
 * reveal nothing), and a scrape of /metrics with METRICS_TOKEN (metrics.ts).
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
export const isProbe = (request: FastifyRequest): boolean => PROBE_PATHS.has(pathOf(request));
/** Past the Host check and auth: the probes, and a scrape of /metrics with METRICS_TOKEN (metrics.ts). */
export const isOpen = (request: FastifyRequest): boolean => isProbe(request) || request.scraper;
