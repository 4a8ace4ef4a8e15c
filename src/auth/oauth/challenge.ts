import type { OAuthConfig } from '../../config.js';
import { SCOPES, type Scope } from '../scopes.js';

/** Where the protected resource metadata is served (RFC 9728 §3), and its form for the MCP endpoint. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';
export const MCP_METADATA_PATH = `${METADATA_PATH}/mcp`;

/** A quoted-string's content: no quote or backslash can break out of it. */
const quoted = (text: string) => `"${text.replace(/["\\]/g, '')}"`;

/**
 * What the hub tells OAuth clients: its protected resource metadata (RFC 9728) and the
 * `WWW-Authenticate: Bearer` challenges of its 401s and 403s (RFC 6750 §3, MCP authorization), in
 * the IdP's scope names (OAUTH_SCOPE_MAP read backwards).
 */
export class BearerChallenge {
  /** The metadata's URL, named by every challenge. */
  readonly metadataUrl: string;

  constructor(private readonly config: Pick<OAuthConfig, 'issuer' | 'resource' | 'scopeMap'>) {
    this.metadataUrl = `${config.resource}${METADATA_PATH}`;
  }

  /** The IdP scope names that grant `scope` (the first the map names for it; the hub's own name if none does). */
  scopeName(scope: Scope): string {
    for (const [name, granted] of this.config.scopeMap) if (granted === scope) return name;
    return scope;
  }

  /** What a client should ask for to use the hub's tools: read and write (admin only when needed). */
  get defaultScope(): string {
    return (['read', 'write'] as const).map((s) => this.scopeName(s)).join(' ');
  }

  /** A 401's challenge; `invalidToken`: a token was sent and refused (RFC 6750 `invalid_token`). */
  unauthorized(invalidToken: boolean): string {
    return [
      'Bearer realm="devstream-hub"',
      ...(invalidToken ? ['error="invalid_token"'] : []),
      `resource_metadata=${quoted(this.metadataUrl)}`,
      `scope=${quoted(this.defaultScope)}`,
    ].join(', ');
  }

  /** A 403's challenge for a token without `needed` (step-up: the client asks the IdP for that scope). */
  insufficientScope(needed: string): string {
    return [
      'Bearer realm="devstream-hub"',
      'error="insufficient_scope"',
      `scope=${quoted(needed)}`,
      `resource_metadata=${quoted(this.metadataUrl)}`,
    ].join(', ');
  }

  /** The protected resource metadata (RFC 9728 §2) of `resource` (PUBLIC_URL, or PUBLIC_URL/mcp for the path-suffixed form). */
  metadata(resource: string): Record<string, unknown> {
    return {
      resource,
      authorization_servers: [this.config.issuer],
      scopes_supported: SCOPES.map((s) => this.scopeName(s)),
      bearer_methods_supported: ['header'],
      resource_name: 'DevStream Hub',
    };
  }
}
