import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every token starts with this, so a leaked one is easy to recognise (and to scan for). */
export const TOKEN_PREFIX = 'dsh_';

/** A new token: the prefix and 32 random bytes in base64url (256 bits). */
export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** What the database stores and looks up: SHA-256 of the token, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares two hex hashes in constant time (false when the lengths differ). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The bearer token of an `Authorization` header value, or null when there is none. */
export function bearerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return m ? m[1]! : null;
}

/** Whether a bearer token is one of the hub's API keys by its shape (it starts with TOKEN_PREFIX), not an IdP's token. */
export const looksLikeApiKey = (token: string): boolean => token.startsWith(TOKEN_PREFIX);
