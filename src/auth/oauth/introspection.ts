import type { OAuthConfig } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { hashToken } from '../tokens.js';
import { FETCH_TIMEOUT_MS } from './discovery.js';
import { LEEWAY_S, unchecked } from './jwt-verifier.js';
import type { Claims } from './claims.js';

/** An active token's answer is reused this long at most (and never past its `exp`). */
const ACTIVE_TTL_MS = 60_000;
/** An inactive (or refused) token's answer is reused this long: retrying it does not reach the authorization server. */
const REFUSED_TTL_MS = 10_000;
/** Answers kept at most; the oldest goes first. */
const MAX_CACHED = 10_000;

const refused = (message: string) => new AppError('UNAUTHORIZED', `The access token is refused: ${message}`);

/**
 * Opaque access tokens checked by RFC 7662 introspection: POST `token` to OAUTH_INTROSPECTION_URL
 * with the hub's client credentials (HTTP Basic). The token must be `active`, unexpired (LEEWAY_S),
 * of the issuer when the answer names one, and for this resource when it names an audience.
 * Answers are cached briefly, by the token's SHA-256 (never the token itself).
 */
export class Introspector {
  private readonly cache = new Map<string, { until: number; claims?: Claims; error?: AppError }>();

  constructor(
    private readonly config: Pick<OAuthConfig, 'issuer' | 'audiences'> & {
      introspection: NonNullable<OAuthConfig['introspection']>;
    },
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  async claims(token: string): Promise<Claims> {
    const key = hashToken(token);
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) {
      if (hit.error) throw hit.error;
      return hit.claims!;
    }
    // An unreachable endpoint is not remembered: the next request asks again.
    const answer = await this.introspect(token);
    let claims: Claims;
    try {
      claims = this.check(answer, now);
    } catch (error) {
      this.remember(key, { until: now + REFUSED_TTL_MS, error: error as AppError });
      throw error;
    }
    const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity;
    this.remember(key, { until: Math.min(now + ACTIVE_TTL_MS, exp), claims });
    return claims;
  }

  private remember(key: string, entry: { until: number; claims?: Claims; error?: AppError }): void {
    this.cache.delete(key);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, entry);
  }

  private async introspect(token: string): Promise<Claims> {
    const { url, clientId, clientSecret } = this.config.introspection;
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        redirect: 'error',
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body: unknown = await response.json();
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not a JSON object');
      return body as Claims;
    } catch (error) {
      this.log.warn({ err: error }, 'OAuth: token introspection failed');
      throw unchecked('the introspection endpoint did not answer');
    }
  }

  private check(claims: Claims, now: number): Claims {
    if (claims.active !== true) throw refused('it is not active (expired, revoked or unknown)');
    if (typeof claims.exp === 'number' && claims.exp * 1000 + LEEWAY_S * 1000 < now) throw refused('it has expired');
    if (typeof claims.nbf === 'number' && claims.nbf * 1000 - LEEWAY_S * 1000 > now)
      throw refused('it is not valid yet');
    if (claims.iss !== undefined && claims.iss !== this.config.issuer)
      throw refused(`it was not issued by ${this.config.issuer}`);
    if (claims.aud !== undefined) {
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.some((a) => typeof a === 'string' && this.config.audiences.includes(a)))
        throw refused(`it was not issued for this resource (aud must name ${this.config.audiences.join(' or ')})`);
    }
    return claims;
  }
}
