import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { errors, type Configuration } from 'oidc-provider';
import { parseScopeMap, type OAuthConfig } from '../../src/config.js';

const DEFAULT_SCOPE_MAP = parseScopeMap('devstream:read=read,devstream:write=write,devstream:admin=admin')!;

/** The hub's OAuth settings for a test IdP: its issuer, the hub's URL as the resource, the default scope map, claim `projects`. */
export const oauthConfig = (issuer: string, resource: string): OAuthConfig => ({
  issuer,
  resource,
  audiences: [resource, `${resource}/mcp`],
  scopeMap: DEFAULT_SCOPE_MAP,
  subjectClaims: ['email', 'sub'],
  projectsClaim: 'projects',
  introspection: undefined,
  // Refetch at once on an unknown kid (the service waits 30 s between fetches).
  jwksCooldownMs: 0,
});

/** The hub scopes the test IdP knows, and one that maps to none (`other`). */
export const IDP_SCOPES = 'devstream:read devstream:write devstream:admin other';

/** Confidential machine clients (client_credentials), each allowed these scopes. */
export const MACHINE_CLIENTS: Record<string, string> = {
  'ci-bot': 'devstream:read devstream:write',
  'reader-bot': 'devstream:read',
  'other-bot': 'other',
};
export const MACHINE_SECRET = 'machine-secret-0123456789abcdefghijkl';
/** A public client (authorization code + PKCE), as Claude Code or VS Code registers. */
export const DESKTOP_CLIENT = 'desktop';

/** A private RS256 signing key in JWK form, with its `kid`. */
export async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

export interface TestIdp {
  issuer: string;
  /** The key the provider signs with now (its first). */
  currentKey(): JWK;
  /** Replaces the provider by one with `keys` (the first signs): its JWKS rotated, the same issuer and clients. */
  rotate(keys: JWK[]): void;
  /** An access token for a machine client by the client_credentials grant, for `resource`. */
  clientCredentials(clientId: string, scope: string, resource: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * panva's oidc-provider on a free loopback port: static clients, resource indicators (RFC 8707)
 * for `resources` (each gets JWT access tokens whose `aud` is that resource), client credentials,
 * and the development login and consent pages (answered by the tests over HTTP). Accounts are
 * named by their login; their tokens carry `email` = `<login>@example.org`.
 */
export async function startIdp(
  resources: () => string[],
  redirectUri: string,
  options: {
    /** More machine clients: each one's scopes and the claims its tokens carry (default: `projects: ['*']`). */
    machineClients?: Record<string, { scope: string; claims: Record<string, unknown> }>;
  } = {},
): Promise<TestIdp> {
  const machines: Record<string, { scope: string; claims: Record<string, unknown> }> = {
    ...Object.fromEntries(
      Object.entries(MACHINE_CLIENTS).map(([id, scope]) => [id, { scope, claims: { projects: ['*'] } }]),
    ),
    ...options.machineClients,
  };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let keys: JWK[] = [await signingKey('k1')];
  let handler: (req: IncomingMessage, res: ServerResponse) => unknown;

  const configuration = (): Configuration => ({
    clients: [
      ...Object.entries(machines).map(([client_id, { scope }]) => ({
        client_id,
        client_secret: MACHINE_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        scope,
      })),
      {
        client_id: DESKTOP_CLIENT,
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [redirectUri],
        scope: `openid email offline_access ${IDP_SCOPES}`,
      },
    ],
    jwks: { keys: keys as Array<JWK & { kty: 'RSA' }> },
    scopes: ['openid', 'email', 'offline_access', ...IDP_SCOPES.split(' ')],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.org`, email_verified: true }),
    }),
    // Access tokens name the account's email too (the hub's default subject claim) and its projects;
    // machine clients' tokens carry their client's claims (by default every project: `*`).
    extraTokenClaims: (_ctx, token) =>
      'accountId' in token && typeof token.accountId === 'string'
        ? { email: `${token.accountId}@example.org`, projects: ['Alpha', 'beta'] }
        : (machines[(token as { clientId?: string }).clientId ?? '']?.claims ?? {}),
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resources()[0]!,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!resources().includes(resource)) throw new errors.InvalidTarget();
          return { scope: IDP_SCOPES, audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600 };
        },
      },
    },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    pkce: { required: () => true },
  });
  const build = () => {
    const provider = new Provider(issuer, configuration());
    handler = provider.callback();
  };
  build();
  server.on('request', (req, res) => void handler(req, res));

  return {
    issuer,
    currentKey: () => keys[0]!,
    rotate(next) {
      keys = next;
      build();
    },
    async clientCredentials(clientId, scope, resource) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${MACHINE_SECRET}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await response.json()) as { access_token?: string };
      assert.equal(response.status, 200, JSON.stringify(body));
      return body.access_token!;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A cookie jar of one browser: every cookie set, sent back on every request (the paths are not told apart). */
class Cookies {
  private readonly jar = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
  }
  get header(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * What a browser does with an authorization URL: follows the redirects, signs in as `login` on the
 * development login page, consents, and stops at the redirect to `redirectUri`; its query
 * (`code`, `state`, `iss`).
 */
export async function signInWithBrowser(authorizationUrl: URL, login: string, redirectUri: string) {
  const cookies = new Cookies();
  let url = authorizationUrl.href;
  let form: Record<string, string> | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(redirectUri)) return new URL(url).searchParams;
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: cookies.header,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form) } : {}),
    });
    cookies.take(response);
    form = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url).href;
      continue;
    }
    const page = await response.text();
    assert.equal(response.status, 200, page.slice(0, 500));
    // The development interaction pages: a login form, then a consent form, both posting to the page's URL.
    form = page.includes('name="login"') ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' };
    url = new URL(/action="([^"]+)"/.exec(page)?.[1] ?? url, url).href;
  }
  throw new Error('the sign-in did not reach the redirect URI');
}
