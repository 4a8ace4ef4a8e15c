import type { FastifyInstance } from 'fastify';
import type { BearerChallenge } from '../auth/oauth/challenge.js';
import { MCP_METADATA_PATH, METADATA_PATH } from '../auth/oauth/challenge.js';

/**
 * RFC 9728 protected resource metadata, with OAuth on: at `/.well-known/oauth-protected-resource`
 * (the resource PUBLIC_URL, which every 401 names) and at its path-suffixed form for the MCP
 * endpoint, `/.well-known/oauth-protected-resource/mcp` (where MCP clients look first). Open: no
 * credentials (open-routes.ts). Not in the OpenAPI document (a discovery document, not an API route).
 */
export function registerResourceMetadata(
  app: FastifyInstance,
  options: { challenge: BearerChallenge; resource: string },
): void {
  const route = { schema: { hide: true } };
  const send = (resource: string) => async () => options.challenge.metadata(resource);
  app.get(METADATA_PATH, route, send(options.resource));
  app.get(MCP_METADATA_PATH, route, send(`${options.resource}/mcp`));
}
