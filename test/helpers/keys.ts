import assert from 'node:assert/strict';
import type { Scope } from '../../src/auth/scopes.js';
import { bearer } from './bearer.js';
import { rest } from './server.js';

/**
 * Makes an API key `name` with `scopes` over POST /api/v1/keys, as the admin (`adminToken`), on the
 * service at `url`; its token. Fails the test unless the key was created (201).
 */
export async function createKey(
  url: string,
  adminToken: string,
  name: string,
  scopes: readonly Scope[] = ['read'],
): Promise<string> {
  const created = await rest(url, 'POST', '/api/v1/keys', { name, scopes }, bearer(adminToken));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.token as string;
}
