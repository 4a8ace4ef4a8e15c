import type { Kysely } from 'kysely';
import { findLiveKeyByHash, touchApiKey } from '../db/queries/api-keys.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { AppError } from '../errors.js';
import type { OAuthResourceServer } from './oauth/resource-server.js';
import { SCOPES, type Caller, type Scope } from './scopes.js';
import { bearerToken, hashToken, looksLikeApiKey, sameHash } from './tokens.js';

export type AuthMode = 'required' | 'off';

/** The name rows record for the bootstrap credential (reserved: no key may take it). */
export const ADMIN_TOKEN_CALLER = 'ADMIN_TOKEN';

/** Everyone, with every scope: the caller when AUTH=off. */
export const ANONYMOUS: Caller = { name: null, scopes: new Set(SCOPES) };

/** last_used_at is written at most this often per key: not a write per request. */
const TOUCH_INTERVAL_MS = 60_000;

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message);

/**
 * Turns an `Authorization` header into a caller: an API key looked up by the SHA-256 of its token
 * (the token itself is never stored), or ADMIN_TOKEN; with OAuth on (`oauth`), any other bearer token
 * is the identity provider's access token (oauth/resource-server.ts). With AUTH=off everyone is ANONYMOUS.
 * Looked up on every request, so a revoked key is refused at once on every instance.
 */
export class Authenticator {
  private readonly adminHash: string | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    readonly mode: AuthMode,
    adminToken: string | undefined,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly oauth?: OAuthResourceServer,
  ) {
    this.adminHash = adminToken === undefined ? undefined : hashToken(adminToken);
  }

  /** The caller, or an UNAUTHORIZED AppError (thrown) naming what was wrong. */
  async authenticate(authorization: string | string[] | undefined): Promise<Caller> {
    if (this.mode === 'off') return ANONYMOUS;
    const token = bearerToken(authorization);
    if (token === null) {
      throw unauthorized(
        authorization === undefined
          ? `${this.oauth ? "An API key or the identity provider's access token" : 'An API key'} is required: send Authorization: Bearer <token>`
          : 'The Authorization header must be "Bearer <token>"',
      );
    }
    const hash = hashToken(token);
    if (this.adminHash !== undefined && sameHash(hash, this.adminHash)) {
      return { name: ADMIN_TOKEN_CALLER, scopes: new Set(SCOPES) };
    }
    if (this.oauth && !looksLikeApiKey(token)) return this.oauth.authenticate(token);
    const key = await findLiveKeyByHash(this.db, hash);
    if (!key || !sameHash(hash, key.token_hash)) throw unauthorized('The API key is unknown or revoked');
    const now = Date.now();
    if (key.last_used_at === null || now - key.last_used_at.getTime() > TOUCH_INTERVAL_MS) {
      touchApiKey(this.db, key.id, new Date(now)).catch((error: unknown) =>
        this.log.warn({ err: error, key: key.name }, 'could not record last_used_at'),
      );
    }
    return {
      name: key.name,
      scopes: new Set(key.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s))),
      ...(key.tool_profile ? { toolProfile: key.tool_profile } : {}),
      ...(key.projects ? { projects: new Set(key.projects.map((p) => p.toLowerCase())) } : {}),
      ...(key.repos ? { repos: new Set(key.repos.map((r) => r.toLowerCase())) } : {}),
    };
  }
}
