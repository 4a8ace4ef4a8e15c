import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { OAuthConfig } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { discover, FETCH_TIMEOUT_MS, type IssuerMetadata } from './discovery.js';

/** Clock skew allowed on `exp`, `nbf` and `iat`, seconds. */
export const LEEWAY_S = 30;
/** After a failed discovery, how long requests are refused at once before it is tried again. */
const RETRY_DISCOVERY_MS = 10_000;
/** The issuer's keys are refetched at least this often (a rotation is also picked up on an unknown `kid`). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** Public-key algorithms only: a symmetric or `none` token is never accepted. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

const refused = (message: string) => new AppError('UNAUTHORIZED', `The access token is refused: ${message}`);

/**
 * The token could not be checked (the IdP is down or slow): not the token's fault, so not a 401,
 * which would send a client through sign-in again; a 503 to retry (http/auth.ts adds Retry-After).
 */
export const unchecked = (what: string) =>
  new AppError('AUTH_UNAVAILABLE', `The access token cannot be checked now: ${what}; retry shortly`);

/**
 * Checks JWT access tokens of the issuer (RFC 9068 profile): found by discovery (RFC 8414, else
 * OpenID Connect), its JWKS fetched with jose's `createRemoteJWKSet` (cached; refetched on an
 * unknown `kid`, at most once per `jwksCooldownMs`), then the signature, `iss`, `exp`/`nbf` with
 * LEEWAY_S, and `aud` holding one of the audiences (RFC 8707).
 */
export class JwtVerifier {
  private keys: Promise<{ metadata: IssuerMetadata; jwks: ReturnType<typeof createRemoteJWKSet> }> | undefined;

  constructor(
    private readonly config: Pick<OAuthConfig, 'issuer' | 'audiences' | 'jwksCooldownMs'>,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  /** The issuer's metadata and key set, discovered once (a failure is retried after RETRY_DISCOVERY_MS). */
  private issuerKeys() {
    this.keys ??= discover(this.config.issuer).then(
      (metadata) => ({
        metadata,
        jwks: createRemoteJWKSet(new URL(metadata.jwks_uri), {
          cooldownDuration: this.config.jwksCooldownMs,
          cacheMaxAge: JWKS_MAX_AGE_MS,
          timeoutDuration: FETCH_TIMEOUT_MS,
        }),
      }),
      (error: unknown) => {
        this.log.warn({ err: error }, 'OAuth: could not discover the authorization server');
        setTimeout(() => (this.keys = undefined), RETRY_DISCOVERY_MS).unref();
        throw error;
      },
    );
    return this.keys;
  }

  /**
   * The token's verified claims, or an UNAUTHORIZED AppError naming what was wrong (never the token);
   * AUTH_UNAVAILABLE when the issuer's metadata or keys cannot be fetched.
   */
  async verify(token: string): Promise<JWTPayload> {
    let keys;
    try {
      keys = await this.issuerKeys();
    } catch {
      throw unchecked("the authorization server's metadata is unreachable");
    }
    try {
      const { payload } = await jwtVerify(token, keys.jwks, {
        issuer: keys.metadata.issuer,
        audience: [...this.config.audiences],
        clockTolerance: LEEWAY_S,
        requiredClaims: ['exp'],
        algorithms: ALGORITHMS,
      });
      return payload;
    } catch (error) {
      throw this.reason(error);
    }
  }

  private reason(error: unknown): AppError {
    if (error instanceof errors.JWTExpired) return refused('it has expired');
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'aud')
        return refused(`it was not issued for this resource (aud must name ${this.config.audiences.join(' or ')})`);
      if (error.claim === 'iss') return refused(`it was not issued by ${this.config.issuer}`);
      if (error.claim === 'nbf') return refused('it is not valid yet');
      return refused(`its "${error.claim}" claim is invalid (${error.reason})`);
    }
    if (error instanceof errors.JWSSignatureVerificationFailed) return refused('its signature is invalid');
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
      return refused('it is signed with a key the authorization server does not publish');
    if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
      return refused('its signing algorithm is not accepted');
    if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
      return refused('it is not a well-formed JWT');
    // The key set could not be fetched (timeout, an error status, not JSON): the token is unchecked, not bad.
    this.log.warn({ err: error }, "OAuth: could not fetch the authorization server's keys");
    return unchecked("the authorization server's keys are unreachable");
  }
}
