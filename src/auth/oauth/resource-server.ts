import type { OAuthConfig } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Caller } from '../scopes.js';
import { BearerChallenge } from './challenge.js';
import { callerFromClaims, type Claims } from './claims.js';
import { Introspector } from './introspection.js';
import { JwtVerifier } from './jwt-verifier.js';

/** Three base64url segments: a JWS in compact form (a JWT access token). */
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * The hub as an OAuth 2.1 resource server (docs/oauth.md): access tokens of OAUTH_ISSUER made into
 * callers. A JWT is verified locally (JwtVerifier); any other token is introspected (RFC 7662) when
 * OAUTH_INTROSPECTION_URL is set, else refused. API keys never come here (authenticator.ts).
 */
export class OAuthResourceServer {
  readonly challenge: BearerChallenge;
  private readonly jwt: JwtVerifier;
  private readonly introspector: Introspector | undefined;

  constructor(
    readonly config: OAuthConfig,
    log: Pick<Logger, 'warn'>,
  ) {
    this.challenge = new BearerChallenge(config);
    this.jwt = new JwtVerifier(config, log);
    this.introspector = config.introspection
      ? new Introspector({ ...config, introspection: config.introspection }, log)
      : undefined;
  }

  /** The token's caller, or an AppError: UNAUTHORIZED for a bad token, FORBIDDEN for one granting no hub scope. */
  async authenticate(token: string): Promise<Caller> {
    let claims: Claims;
    if (JWS.test(token)) claims = await this.jwt.verify(token);
    else if (this.introspector) claims = await this.introspector.claims(token);
    else
      throw new AppError(
        'UNAUTHORIZED',
        'The bearer token is neither an API key nor a JWT access token (opaque tokens need OAUTH_INTROSPECTION_URL)',
      );
    return callerFromClaims(claims, this.config);
  }
}
