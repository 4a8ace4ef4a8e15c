/**
 * The hub as an OAuth 2.1 resource server (docs/oauth.md) against a real authorization server:
 * panva's oidc-provider on loopback, issuing JWT access tokens for the hub's PUBLIC_URL (resource
 * indicators). Discovery, the MCP SDK client's own OAuth flows (client credentials; authorization
 * code + PKCE with the sign-in answered over HTTP), every kind of bad token refused on every route
 * and tool, step-up on a missing scope, and API keys working beside it all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  auth,
  Client,
  ClientCredentialsProvider,
  InsufficientScopeError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthClientMetadata,
  type OAuthDiscoveryState,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { SignJWT, importJWK, type JWK } from 'jose';
import type { FastifyRequest } from 'fastify';
import type { Scope } from '../src/auth/scopes.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { DashboardFiles } from '../src/http/dashboard.js';
import { neededScope } from '../src/operations/invoke.js';
import { callerFromClaims, limitOf } from '../src/auth/oauth/claims.js';
import { operations, tools } from '../src/operations/index.js';
import { freePort } from '../support/free-port.js';
import { backends, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { createKey } from './helpers/keys.js';
import { taskInput } from './helpers/task-input.js';
import {
  DESKTOP_CLIENT,
  MACHINE_SECRET,
  oauthConfig,
  signInWithBrowser,
  signingKey,
  startIdp,
  type TestIdp,
} from './helpers/oidc-provider.js';
import { initializeBody, rawInitialize, rawMcp } from './helpers/mcp-raw.js';
import { connectMcp, MCP_HEADERS, rest, startServer, type TestServer } from './helpers/server.js';

const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghijklmnop';
const REDIRECT_URI = 'http://127.0.0.1:1/callback';
const PARAM = '0123456789ab';

/** A JWT signed with `key` (the provider's, or one never published), for claims the provider would not issue. */
async function signed(key: JWK, claims: Record<string, unknown>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 300, scope: 'devstream:read devstream:write', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid!, typ: 'at+jwt' })
    .sign(await importJWK(key, 'RS256'));
}

/** The OAuth client of a desktop app (Claude Code, VS Code): its browser is the test. */
class DesktopClient implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'desktop',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return { client_id: DESKTOP_CLIENT };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** A route of the app's table (AppDeps.onRoute). */
type Route = { method: string; url: string };

/**
 * The routes answered without credentials, on purpose: the probes, the protected resource metadata
 * (read before a client has a token) and the dashboard's own static files (no data; the same
 * check the auth hook makes). Any other route of the table must refuse every bad token.
 */
const OPEN_PATHS = new Set([
  '/healthz',
  '/readyz',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
]);
const dashboardFiles = new DashboardFiles();
const isOpenRoute = ({ method, url }: Route) =>
  OPEN_PATHS.has(url) || dashboardFiles.has({ method, url } as FastifyRequest);

/** A request of `route`: its path parameters filled in, a JSON body `{}` where it takes one. */
const requestOf = ({ method, url }: Route) => ({
  method,
  path: url.replace(/:\w+/g, PARAM),
  body: method === 'POST' || method === 'PATCH' || method === 'PUT' ? {} : undefined,
});

/**
 * The scope each route needs beyond `read`, for the read-only token of the hostile test: an
 * operation's routes and its tool mirror take the operation's; the others are named here. A route
 * neither an operation's nor named here fails the test (a new route must say what it needs).
 */
function scopeOfRoute({ method, url }: Route): Scope | undefined {
  for (const op of operations) {
    if (op.routes.some((r) => r.method === method && `/api/v1${r.path}` === url)) return op.scope;
    if (method === 'POST' && url === `/api/v1/tools/${op.name}`) return op.scope;
  }
  const others: Record<string, Scope> = {
    'POST /api/v1/graphs': 'write',
    'POST /api/v1/hooks/claude-code': 'read',
    'POST /api/v1/tools/:name': 'read',
    'GET /metrics': 'admin',
    'HEAD /metrics': 'admin',
    'GET /openapi.json': 'read',
    'HEAD /openapi.json': 'read',
    // Per message: tools/call of a write tool needs write (checked over MCP below).
    'POST /mcp': 'read',
    'GET /mcp': 'read',
    'HEAD /mcp': 'read',
    'DELETE /mcp': 'read',
  };
  return others[`${method} ${url}`] ?? (method === 'HEAD' ? scopeOfRoute({ method: 'GET', url }) : undefined);
}

/** One JSON-RPC request of every kind the MCP endpoint serves (a tools/call per tool), as the hostile test sends them. */
const MCP_REQUESTS: Array<{ method: string; params?: Record<string, unknown> }> = [
  { method: 'initialize', params: initializeBody.params },
  { method: 'ping' },
  { method: 'server/discover' },
  { method: 'tools/list' },
  ...tools.map((op) => ({ method: 'tools/call', params: { name: op.name, arguments: {} } })),
  { method: 'resources/list' },
  { method: 'resources/templates/list' },
  { method: 'resources/read', params: { uri: 'devlens://repos' } },
  { method: 'resources/subscribe', params: { uri: `devstream://task/${PARAM}` } },
  { method: 'prompts/list' },
  { method: 'prompts/get', params: { name: 'resume', arguments: { project: 'oauth' } } },
  {
    method: 'completion/complete',
    params: { ref: { type: 'ref/prompt', name: 'resume' }, argument: { name: 'project', value: '' } },
  },
  { method: 'logging/setLevel', params: { level: 'info' } },
  { method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: [] } } },
];

describe('OAuth configuration', () => {
  test('OAUTH_ISSUER without PUBLIC_URL is a ConfigError naming PUBLIC_URL', () => {
    assert.throws(
      () => loadConfig({ OAUTH_ISSUER: 'https://idp.example.org/realms/team' }),
      (error: unknown) =>
        error instanceof ConfigError && /PUBLIC_URL: is required when OAUTH_ISSUER is set/.test(error.message),
    );
  });

  test('defaults, the scope map, an insecure issuer, AUTH=off and introspection without credentials', () => {
    const config = loadConfig({ OAUTH_ISSUER: 'https://tenant.auth0.com/', PUBLIC_URL: 'https://hub.example.org/' });
    assert.equal(config.auth.mode, 'required');
    assert.deepEqual(config.auth.oauth?.issuer, 'https://tenant.auth0.com/');
    assert.deepEqual(config.auth.oauth?.audiences, ['https://hub.example.org', 'https://hub.example.org/mcp']);
    assert.deepEqual(config.auth.oauth?.subjectClaims, ['email', 'sub']);
    assert.deepEqual(
      [...config.auth.oauth!.scopeMap],
      [
        ['devstream:read', 'read'],
        ['devstream:write', 'write'],
        ['devstream:admin', 'admin'],
      ],
    );
    assert.equal(loadConfig({}).auth.oauth, undefined);
    const base = { OAUTH_ISSUER: 'https://idp.example.org', PUBLIC_URL: 'https://hub.example.org' };
    for (const [env, pattern] of [
      [
        { OAUTH_ISSUER: 'http://idp.example.org', PUBLIC_URL: 'https://hub.example.org' },
        /OAUTH_ISSUER: must be an https URL/,
      ],
      [{ ...base, AUTH: 'off' }, /AUTH: off contradicts OAUTH_ISSUER/],
      [{ ...base, OAUTH_SCOPE_MAP: 'devstream:read=everything' }, /OAUTH_SCOPE_MAP: must be comma-separated/],
      [{ ...base, OAUTH_INTROSPECTION_URL: 'https://idp.example.org/introspect' }, /OAUTH_INTROSPECTION_URL: needs/],
    ] as const) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
      );
    }
    const secret = 'introspection-secret-value';
    assert.throws(
      () => loadConfig({ ...base, OAUTH_INTROSPECTION_URL: 'ftp://x', OAUTH_INTROSPECTION_CLIENT_SECRET: secret }),
      (error: unknown) => error instanceof ConfigError && !error.message.includes(secret),
    );
  });

  test('a token\'s projects (and repos) claim: an array or a list, lower-cased; "*" is every project; absent is none', () => {
    const config = oauthConfig('https://idp.example.org', 'https://hub.example.org');
    const caller = callerFromClaims({ sub: 's', scope: 'devstream:read', projects: ['Alpha', 'beta'] }, config);
    assert.deepEqual([...caller.projects!], ['alpha', 'beta']);
    assert.deepEqual([...limitOf({ p: 'One, two three' }, 'p')!], ['one', 'two', 'three']);
    assert.equal(limitOf({ p: ['a', '*'] }, 'p'), undefined);
    assert.deepEqual([...limitOf({}, 'p')!], []);
    assert.equal(limitOf({ p: ['a'] }, undefined), undefined);
    // OAUTH_REPOS_CLAIM limits the code graphs the same way; unset, every graph.
    assert.equal(caller.repos, undefined);
    const withRepos = callerFromClaims(
      { sub: 's', scope: 'devstream:read', projects: '*', repos: 'Wren kestrel' },
      { ...config, reposClaim: 'repos' },
    );
    assert.deepEqual([withRepos.projects, [...withRepos.repos!]], [undefined, ['wren', 'kestrel']]);
    // Scopes from `scp` (an array, as Okta) map too; an unverified email is not the name.
    const okta = callerFromClaims({ sub: 'u1', email: 'x@y', email_verified: false, scp: ['devstream:write'] }, config);
    assert.equal(okta.name, 'u1');
    assert.deepEqual([...okta.scopes], ['write']);
  });
});

for (const backend of backends) {
  describe(`OAuth resource server (${backend.name})`, () => {
    let database: TestDb;
    let idp: TestIdp;
    let server: TestServer;
    let hub: string;
    let keyToken: string;
    /** The app's whole route table, as it was registered. */
    const routeTable: Route[] = [];

    before(async () => {
      database = await backend.open();
      hub = `http://127.0.0.1:${await freePort()}`;
      idp = await startIdp(() => [hub, `${hub}/mcp`, 'https://other.example.org'], REDIRECT_URI);
      server = await startServer(
        database,
        { publicUrl: hub, auth: { mode: 'required', adminToken: ADMIN_TOKEN, oauth: oauthConfig(idp.issuer, hub) } },
        { onRoute: (route) => routeTable.push(route) },
        Number(new URL(hub).port),
      );
      keyToken = await createKey(hub, ADMIN_TOKEN, 'writer-key', ['read', 'write']);
    });
    after(async () => {
      await server?.close();
      await idp?.close();
      await database?.dispose();
    });

    test('discovery: the protected resource metadata, at the root and for /mcp, needs no credentials', async () => {
      const root = await rest(hub, 'GET', '/.well-known/oauth-protected-resource');
      assert.equal(root.status, 200, JSON.stringify(root.body));
      assert.deepEqual(root.body, {
        resource: hub,
        authorization_servers: [idp.issuer],
        scopes_supported: ['devstream:read', 'devstream:write', 'devstream:admin'],
        bearer_methods_supported: ['header'],
        resource_name: 'DevStream Hub',
      });
      const mcp = await rest(hub, 'GET', '/.well-known/oauth-protected-resource/mcp');
      assert.equal(mcp.status, 200);
      assert.equal(mcp.body.resource, `${hub}/mcp`);
      // A 401 points there, with the scopes to ask for.
      const refused = await rest(hub, 'GET', '/api/v1/me');
      assert.equal(refused.status, 401);
      assert.match(refused.body.error.message, /^An API key or the identity provider's access token is required/);
      assert.equal(
        refused.headers.get('www-authenticate'),
        `Bearer realm="devstream-hub", resource_metadata="${hub}/.well-known/oauth-protected-resource", scope="devstream:read devstream:write"`,
      );
      const mcpRefused = await fetch(`${hub}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: '{}' });
      assert.equal(mcpRefused.status, 401);
      assert.match(
        mcpRefused.headers.get('www-authenticate')!,
        /resource_metadata="[^"]+\/.well-known\/oauth-protected-resource"/,
      );
    });

    test('a client-credentials token over REST: its subject is the caller, recorded as created_by', async () => {
      const token = await idp.clientCredentials('ci-bot', 'devstream:read devstream:write', hub);
      const me = await rest(hub, 'GET', '/api/v1/me', undefined, bearer(token));
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.deepEqual(me.body, { name: 'ci-bot', scopes: ['read', 'write'], projects: null, repos: null });
      const stored = await rest(
        hub,
        'POST',
        '/api/v1/memories',
        { content: 'stored with an IdP token', content_type: 'decision', project: 'oauth' },
        bearer(token),
      );
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      const got = await rest(hub, 'GET', `/api/v1/memories/${stored.body.memory_id}`, undefined, bearer(keyToken));
      assert.equal(got.body.memory.created_by, 'ci-bot');
    });

    test("MCP: the SDK client's client-credentials flow (401, metadata, token, retry) then tool calls", async () => {
      const authProvider = new ClientCredentialsProvider({
        clientId: 'ci-bot',
        clientSecret: MACHINE_SECRET,
        scope: 'devstream:read devstream:write',
        expectedIssuer: idp.issuer,
      });
      const client = new Client({ name: 'ci', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', hub), { authProvider }));
      try {
        assert.ok(authProvider.tokens()?.access_token, 'the client got a token from the IdP');
        const created = await client.callTool({
          name: 'devstream_create_task',
          arguments: {
            title: 'Task by a machine client',
            description: 'over MCP with an access token',
            task_type: 'coding',
            priority: 3,
            phase_name: 'P',
            project: 'oauth',
          },
        });
        assert.ok(!created.isError, JSON.stringify(created.content));
        const tasks = await rest(hub, 'GET', '/api/v1/tasks?project=oauth', undefined, bearer(keyToken));
        assert.deepEqual(
          tasks.body.tasks.map((t: { created_by: string }) => t.created_by),
          ['ci-bot'],
        );
      } finally {
        await client.close();
      }
    });

    test("MCP: the SDK client's authorization code + PKCE flow, the sign-in answered over HTTP", async () => {
      const authProvider = new DesktopClient();
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', hub), { authProvider });
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      await assert.rejects(client.connect(transport), UnauthorizedError);
      const authorization = authProvider.authorizationUrl!;
      assert.equal(authorization.origin, idp.issuer);
      assert.equal(authorization.searchParams.get('resource'), hub);
      assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
      const callback = await signInWithBrowser(authorization, 'alice', REDIRECT_URI);
      await transport.finishAuth(callback);
      const again = new Client({ name: 'desktop', version: '1.0.0' });
      await again.connect(new StreamableHTTPClientTransport(new URL('/mcp', hub), { authProvider }));
      try {
        const stored = await again.callTool({
          name: 'devstream_store_memory',
          arguments: { content: 'stored by alice, signed in', content_type: 'decision', project: 'Alpha' },
        });
        assert.ok(!stored.isError, JSON.stringify(stored.content));
        // Her token's projects claim (Alpha, beta) limits her as a limited key is.
        const outside = await again.callTool({
          name: 'devstream_store_memory',
          arguments: { content: 'not hers to write', content_type: 'decision', project: 'oauth' },
        });
        assert.ok(outside.isError);
        assert.match((outside.content as Array<{ text: string }>)[0]!.text, /FORBIDDEN: project: .*"alpha", "beta"/);
        const me = await rest(hub, 'GET', '/api/v1/me', undefined, bearer(authProvider.tokens()!.access_token));
        assert.deepEqual(me.body, {
          name: 'alice@example.org',
          scopes: ['read', 'write'],
          projects: ['alpha', 'beta'],
          repos: null,
        });
      } finally {
        await again.close();
      }
    });

    test('refused tokens: wrong audience, wrong issuer, expired, not yet valid, bad signature, unknown key → 401 invalid_token', async () => {
      const key = idp.currentKey();
      const good = { iss: idp.issuer, aud: hub, sub: 'mallory', client_id: 'ci-bot' };
      const now = Math.floor(Date.now() / 1000);
      const valid = await idp.clientCredentials('ci-bot', 'devstream:read', hub);
      const cases: Array<[string, string, RegExp]> = [
        [
          'another resource',
          await idp.clientCredentials('ci-bot', 'devstream:read', 'https://other.example.org'),
          /not issued for this resource/,
        ],
        ['wrong issuer', await signed(key, { ...good, iss: 'http://127.0.0.1:1' }), /not issued by/],
        ['expired', await signed(key, { ...good, exp: now - 120 }), /expired/],
        ['not yet valid', await signed(key, { ...good, nbf: now + 600 }), /not valid yet/],
        ['bad signature', `${valid.slice(0, valid.lastIndexOf('.'))}.${'A'.repeat(342)}`, /signature is invalid/],
        ['never published key', await signed(await signingKey('k1'), good), /signature is invalid/],
        ['unknown kid', await signed(await signingKey('never'), good), /key the authorization server does not publish/],
        ['no exp', await signed(key, { ...good, exp: undefined }), /"exp" claim/],
        ['not a JWT', 'eyJhbGciOiJub25lIn0.e30.', /not a well-formed JWT|signing algorithm/],
        ['opaque', 'opaque-token-without-introspection', /neither an API key nor a JWT/],
      ];
      for (const [label, token, message] of cases) {
        const answer = await rest(hub, 'GET', '/api/v1/me', undefined, bearer(token));
        assert.equal(answer.status, 401, `${label}: ${JSON.stringify(answer.body)}`);
        assert.match(answer.body.error.message, message, label);
        assert.match(
          answer.headers.get('www-authenticate')!,
          /^Bearer realm="devstream-hub", error="invalid_token", resource_metadata=/,
        );
      }
      // Within the leeway (30 s) an expired token still passes.
      const lately = await rest(
        hub,
        'GET',
        '/api/v1/me',
        undefined,
        bearer(await signed(key, { ...good, exp: now - 5 })),
      );
      assert.equal(lately.status, 200, JSON.stringify(lately.body));
    });

    test('key rotation: a token of the new key is accepted (its kid fetched), one of a key never published refused', async () => {
      const old = await idp.clientCredentials('ci-bot', 'devstream:read', hub);
      assert.equal((await rest(hub, 'GET', '/api/v1/me', undefined, bearer(old))).status, 200);
      const next = await signingKey('k2');
      idp.rotate([next, idp.currentKey()]);
      const rotated = await idp.clientCredentials('ci-bot', 'devstream:read', hub);
      assert.equal(JSON.parse(Buffer.from(rotated.split('.')[0]!, 'base64url').toString()).kid, 'k2');
      const me = await rest(hub, 'GET', '/api/v1/me', undefined, bearer(rotated));
      assert.equal(me.status, 200, JSON.stringify(me.body));
      // The old key is still published, so its tokens stay valid until they expire.
      assert.equal((await rest(hub, 'GET', '/api/v1/me', undefined, bearer(old))).status, 200);
      const forged = await signed(await signingKey('k3'), { iss: idp.issuer, aud: hub, sub: 'mallory' });
      assert.equal((await rest(hub, 'GET', '/api/v1/me', undefined, bearer(forged))).status, 401);
    });

    test('step-up: a missing scope is 403 insufficient_scope naming the scope needed, on REST and /mcp', async () => {
      const reader = await idp.clientCredentials('reader-bot', 'devstream:read', hub);
      const write = await rest(
        hub,
        'POST',
        '/api/v1/memories',
        { content: 'a reader may not', content_type: 'decision', project: 'oauth' },
        bearer(reader),
      );
      assert.equal(write.status, 403, JSON.stringify(write.body));
      assert.equal(write.body.error.code, 'FORBIDDEN');
      assert.equal(
        write.headers.get('www-authenticate'),
        `Bearer realm="devstream-hub", error="insufficient_scope", scope="devstream:write", resource_metadata="${hub}/.well-known/oauth-protected-resource"`,
      );
      const keys = await rest(hub, 'GET', '/api/v1/keys', undefined, bearer(reader));
      assert.equal(keys.status, 403);
      assert.match(keys.headers.get('www-authenticate')!, /error="insufficient_scope", scope="devstream:admin"/);
      // A token granting none of the hub's scopes is refused at the HTTP level, on REST and /mcp alike.
      const other = await idp.clientCredentials('other-bot', 'other', hub);
      for (const answer of [
        await fetch(`${hub}/api/v1/me`, { headers: bearer(other) }),
        await fetch(`${hub}/mcp`, {
          method: 'POST',
          headers: { ...MCP_HEADERS, ...bearer(other) },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        }),
      ]) {
        assert.equal(answer.status, 403);
        assert.match(
          answer.headers.get('www-authenticate')!,
          /error="insufficient_scope", scope="devstream:read devstream:write"/,
        );
        assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'FORBIDDEN');
      }
      // Over MCP, in both eras: a call needing a scope the token lacks is an HTTP 403 insufficient_scope
      // naming it (the SDK client raises InsufficientScopeError when it cannot sign in again itself);
      // what the token may do still works. `repo` analyze with a path needs write, from its arguments.
      for (const era of ['legacy', 'modern'] as const) {
        const { client } = await connectMcp(hub, '/mcp', bearer(reader), { era });
        try {
          const listed = await client.callTool({ name: 'devstream_list_tasks', arguments: {} });
          assert.ok(!listed.isError, `${era}: ${JSON.stringify(listed.content)}`);
          for (const [name, args] of [
            ['devstream_store_memory', { content: 'no', content_type: 'decision', project: 'oauth' }],
            ['repo', { action: 'analyze', path: '/tmp' }],
          ] as const) {
            await assert.rejects(
              client.callTool({ name, arguments: args }),
              (error: unknown) => error instanceof InsufficientScopeError && error.requiredScope === 'devstream:write',
              `${era} ${name}`,
            );
          }
        } finally {
          await client.close();
        }
      }
      // The answer itself, as a client without the SDK sees it.
      const sessionId = await rawInitialize(hub, { headers: bearer(reader) });
      const raw = await rawMcp(
        hub,
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'devstream_create_task', arguments: taskInput({ title: 'no' }) },
        },
        { sessionId, headers: bearer(reader) },
      );
      assert.equal(raw.status, 403, raw.text);
      assert.equal(
        raw.headers.get('www-authenticate'),
        `Bearer realm="devstream-hub", error="insufficient_scope", scope="devstream:write", resource_metadata="${hub}/.well-known/oauth-protected-resource"`,
      );
      assert.equal(raw.json.id, 7);
      assert.match(
        raw.json.error.message,
        /^FORBIDDEN: devstream_create_task needs the "write" scope \(devstream:write\); this access token has: read$/,
      );
      // An API key cannot step up: its call is the tool's FORBIDDEN result, as before.
      const readerKey = await createKey(hub, ADMIN_TOKEN, 'reader-key', ['read']);
      const { client: keyClient } = await connectMcp(hub, '/mcp', bearer(readerKey));
      try {
        const refused = await keyClient.callTool({
          name: 'devstream_store_memory',
          arguments: { content: 'no', content_type: 'decision', project: 'oauth' },
        });
        assert.equal(refused.isError, true);
        assert.match(
          JSON.stringify(refused.content),
          /FORBIDDEN: .*needs the \\"write\\" scope; this API key has: read/,
        );
      } finally {
        await keyClient.close();
      }
    });

    test('step-up with the SDK client: a user signed in for read is sent back to sign in for write, then the call succeeds', async () => {
      const authProvider = new DesktopClient();
      const mcpUrl = new URL('/mcp', hub);
      // Signed in with the read scope only (as a client asking for less than the hub suggests would be).
      assert.equal(await auth(authProvider, { serverUrl: mcpUrl, scope: 'devstream:read' }), 'REDIRECT');
      const first = await signInWithBrowser(authProvider.authorizationUrl!, 'bob', REDIRECT_URI);
      assert.equal(
        await auth(authProvider, { serverUrl: mcpUrl, authorizationCode: first.get('code')!, iss: first.get('iss')! }),
        'AUTHORIZED',
      );
      assert.equal(authProvider.tokens()!.scope, 'devstream:read');
      const store = {
        name: 'devstream_store_memory',
        arguments: { content: 'stored by bob after step-up', content_type: 'decision', project: 'Alpha' },
      };
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider });
      const client = new Client({ name: 'desktop', version: '1.0.0' });
      await client.connect(transport);
      authProvider.authorizationUrl = undefined;
      // The 403 insufficient_scope sends the client to the IdP again, for the union of its scopes and the one needed.
      await assert.rejects(client.callTool(store), UnauthorizedError);
      await client.close();
      const stepUp = authProvider.authorizationUrl!;
      assert.ok(stepUp, 'the client was sent to sign in again');
      const asked = stepUp.searchParams.get('scope')!.split(' ');
      assert.ok(asked.includes('devstream:read') && asked.includes('devstream:write'), asked.join(' '));
      const second = await signInWithBrowser(stepUp, 'bob', REDIRECT_URI);
      await transport.finishAuth(second);
      const again = new Client({ name: 'desktop', version: '1.0.0' });
      await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider }));
      try {
        const stored = await again.callTool(store);
        assert.ok(!stored.isError, JSON.stringify(stored.content));
        assert.match(authProvider.tokens()!.scope!, /devstream:write/);
      } finally {
        await again.close();
      }
    });

    test("a token's projects claim limits it as a key's projects do: lists, searches and ids of other projects are not its own", async () => {
      const post = (path: string, body: unknown) => rest(hub, 'POST', path, body, bearer(keyToken));
      for (const project of ['Alpha', 'Gamma']) {
        assert.equal((await post('/api/v1/tasks', taskInput({ title: `${project} task`, project }))).status, 201);
        assert.equal(
          (
            await post('/api/v1/memories', {
              content: `${project} retries back off`,
              content_type: 'decision',
              project,
            })
          ).status,
          201,
        );
      }
      const all = await rest(hub, 'GET', '/api/v1/tasks?limit=100', undefined, bearer(keyToken));
      const gamma = all.body.tasks.find((t: { project: string }) => t.project === 'Gamma');
      const token = await signed(idp.currentKey(), { iss: idp.issuer, aud: hub, sub: 'limited', projects: ['alpha'] });
      const tasks = await rest(hub, 'GET', '/api/v1/tasks?limit=100', undefined, bearer(token));
      assert.equal(tasks.status, 200, JSON.stringify(tasks.body));
      assert.deepEqual([...new Set(tasks.body.tasks.map((t: { project: string }) => t.project))], ['Alpha']);
      const found = await rest(hub, 'POST', '/api/v1/memories/search', { query: 'retries back off' }, bearer(token));
      assert.deepEqual([...new Set(found.body.results.map((m: { project: string }) => m.project))], ['Alpha']);
      const hidden = await rest(hub, 'PATCH', `/api/v1/tasks/${gamma.id}`, { status: 'active' }, bearer(token));
      assert.equal(hidden.status, 404, JSON.stringify(hidden.body));
      const outside = await rest(
        hub,
        'POST',
        '/api/v1/tasks',
        taskInput({ title: 'x', project: 'Gamma' }),
        bearer(token),
      );
      assert.equal(outside.status, 403, JSON.stringify(outside.body));
    });

    test("a 2025-era session serves each request with that request's token, not the one that opened it", async () => {
      for (const project of ['Delta', 'Epsilon'])
        assert.equal(
          (await rest(hub, 'POST', '/api/v1/tasks', taskInput({ title: `${project} task`, project }), bearer(keyToken)))
            .status,
          201,
        );
      const carol = { iss: idp.issuer, aud: hub, sub: 'carol' };
      const broad = await signed(idp.currentKey(), {
        ...carol,
        scope: 'devstream:read devstream:write',
        projects: ['*'],
      });
      // The same subject later signs in with less: read only, project Delta only.
      const narrow = await signed(idp.currentKey(), { ...carol, scope: 'devstream:read', projects: ['delta'] });
      const sessionId = await rawInitialize(hub, { headers: bearer(broad) });
      let id = 10;
      const send = async (token: string, method: string, params: Record<string, unknown>) => {
        const answer = await rawMcp(
          hub,
          { jsonrpc: '2.0', id: ++id, method, params },
          { sessionId, headers: bearer(token) },
        );
        assert.equal(answer.status, 200, answer.text);
        return answer.json;
      };
      const projects = async (token: string) => {
        const answer = await send(token, 'tools/call', { name: 'devstream_list_tasks', arguments: { limit: 100 } });
        assert.ok(!answer.result.isError, JSON.stringify(answer.result));
        const seen = new Set(answer.result.structuredContent.tasks.map((t: { project: string }) => t.project));
        return ['Delta', 'Epsilon'].filter((p) => seen.has(p));
      };
      assert.deepEqual(await projects(broad), ['Delta', 'Epsilon']);
      assert.deepEqual(await projects(narrow), ['Delta'], 'the narrower token sees only its project');
      const tools = (await send(narrow, 'tools/list', {})).result.tools.map((t: { name: string }) => t.name);
      assert.ok(!tools.includes('devstream_create_task'), 'a read-only token is not shown the write tools');
      const epsilon = (await rest(hub, 'GET', '/api/v1/tasks?project=Epsilon', undefined, bearer(keyToken))).body
        .tasks[0].id;
      const read = await send(narrow, 'resources/read', { uri: `devstream://task/${epsilon}` });
      assert.ok(read.error, `another project's task is not found: ${JSON.stringify(read)}`);
      const completion = await send(narrow, 'completion/complete', {
        ref: { type: 'ref/prompt', name: 'resume' },
        argument: { name: 'project', value: '' },
      });
      assert.deepEqual(completion.result.completion.values, ['Delta']);
      // The broader token, still valid, is served as what it grants.
      assert.deepEqual(await projects(broad), ['Delta', 'Epsilon']);
    });

    test('step-up inside a 2025-era session: the SDK client gets the write scope and its retried call is served with it', async () => {
      for (const era of ['legacy', 'modern'] as const) {
        const authProvider = new ClientCredentialsProvider({
          clientId: 'ci-bot',
          clientSecret: MACHINE_SECRET,
          scope: 'devstream:read',
          expectedIssuer: idp.issuer,
        });
        // Its token so far grants read only (a client that asked for less than the hub suggests).
        authProvider.saveTokens({
          access_token: await idp.clientCredentials('ci-bot', 'devstream:read', hub),
          token_type: 'Bearer',
          scope: 'devstream:read',
        });
        const transport = new StreamableHTTPClientTransport(new URL('/mcp', hub), { authProvider });
        const client = new Client(
          { name: 'ci', version: '1.0.0' },
          era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
        );
        await client.connect(transport);
        try {
          assert.equal(authProvider.tokens()!.scope, 'devstream:read', era);
          const session = transport.sessionId;
          assert.equal(session === undefined, era === 'modern', `${era}: a session only in the 2025 era`);
          const stored = await client.callTool({
            name: 'devstream_store_memory',
            arguments: { content: `stored by ci-bot after an in-place step-up (${era})`, content_type: 'decision' },
          });
          assert.ok(!stored.isError, `${era}: ${JSON.stringify(stored.content)}`);
          assert.match(authProvider.tokens()!.scope!, /devstream:write/, era);
          assert.equal(transport.sessionId, session, `${era}: the same session`);
        } finally {
          await client.close();
        }
      }
    });

    test("Claude Code hooks: a token's subject and a key of the same name keep apart what a session was given", async () => {
      const stored = await rest(
        hub,
        'POST',
        '/api/v1/memories',
        { content: 'Hooked: the retry budget is five attempts', content_type: 'decision', project: 'Hooked' },
        bearer(keyToken),
      );
      assert.equal(stored.status, 201, JSON.stringify(stored.body));
      const namesake = await createKey(hub, ADMIN_TOKEN, 'ci-bot', ['read', 'write']);
      const token = await idp.clientCredentials('ci-bot', 'devstream:read devstream:write', hub);
      const prompt = (credential: string) =>
        rest(
          hub,
          'POST',
          '/api/v1/hooks/claude-code?project=Hooked',
          { session_id: 'shared-session', hook_event_name: 'UserPromptSubmit', prompt: 'what is the retry budget' },
          bearer(credential),
        );
      const context = (answer: { body: any }) => answer.body.hookSpecificOutput?.additionalContext ?? '';
      assert.match(context(await prompt(namesake)), /five attempts/);
      // The key's session was given the memory; the token's, with the same session id, was not.
      assert.match(context(await prompt(token)), /five attempts/);
      assert.equal(context(await prompt(token)), '', 'given once per session');
    });

    test('API keys keep working beside OAuth; a revoked key is refused', async () => {
      assert.deepEqual((await rest(hub, 'GET', '/api/v1/me', undefined, bearer(keyToken))).body, {
        name: 'writer-key',
        scopes: ['read', 'write'],
        projects: null,
        repos: null,
      });
      const doomed = await createKey(hub, ADMIN_TOKEN, 'doomed-key', ['read']);
      assert.equal((await rest(hub, 'GET', '/api/v1/me', undefined, bearer(doomed))).status, 200);
      assert.equal((await rest(hub, 'DELETE', '/api/v1/keys/doomed-key', undefined, bearer(ADMIN_TOKEN))).status, 200);
      const refused = await rest(hub, 'GET', '/api/v1/me', undefined, bearer(doomed));
      assert.equal(refused.status, 401);
      assert.match(refused.body.error.message, /unknown or revoked/);
      assert.match(refused.headers.get('www-authenticate')!, /error="invalid_token", resource_metadata=/);
      // A token's subject that is also a key's name is another caller.
      const bot = await idp.clientCredentials('ci-bot', 'devstream:read', hub);
      assert.equal((await rest(hub, 'GET', '/api/v1/me', undefined, bearer(bot))).body.name, 'ci-bot');
    });

    test('hostile: every route of the route table and every MCP request, with each kind of bad token, is refused', async () => {
      const served = routeTable.filter((r) => !isOpenRoute(r));
      // What answers without credentials is exactly the probes, the metadata and the dashboard's files.
      assert.deepEqual(
        [...new Set(routeTable.filter(isOpenRoute).map((r) => r.url))]
          .filter((url) => !dashboardFiles.has({ method: 'GET', url } as FastifyRequest))
          .sort(),
        [...OPEN_PATHS].sort(),
      );
      for (const path of ['/api/v1/tasks', '/mcp', '/metrics', '/openapi.json', '/api/v1/hooks/claude-code'])
        assert.ok(
          served.some((r) => r.url === path),
          `the route table holds ${path}`,
        );
      const key = idp.currentKey();
      const good = {
        iss: idp.issuer,
        aud: hub,
        sub: 'mallory',
        scope: 'devstream:read devstream:write devstream:admin',
        projects: ['*'],
      };
      const now = Math.floor(Date.now() / 1000);
      const revoked = await createKey(hub, ADMIN_TOKEN, 'hostile-revoked', ['read', 'write', 'admin']);
      assert.equal(
        (await rest(hub, 'DELETE', '/api/v1/keys/hostile-revoked', undefined, bearer(ADMIN_TOKEN))).status,
        200,
      );
      const unauthorized: Record<string, string> = {
        audience: await idp.clientCredentials('ci-bot', 'devstream:read devstream:write', 'https://other.example.org'),
        issuer: await signed(key, { ...good, iss: 'https://evil.example.org' }),
        expired: await signed(key, { ...good, exp: now - 3600 }),
        notYetValid: await signed(key, { ...good, nbf: now + 3600 }),
        signature: `${(await signed(key, good)).slice(0, -8)}AAAAAAAA`,
        unknownKid: await signed(await signingKey('rogue'), good),
        alg: `${Buffer.from('{"alg":"HS256","kid":"k1"}').toString('base64url')}.${Buffer.from(JSON.stringify({ ...good, exp: now + 60 })).toString('base64url')}.c2ln`,
        none: `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(good)).toString('base64url')}.`,
        garbage: 'a.b.c',
        opaque: 'an-opaque-token-and-no-introspection',
        revokedKey: revoked,
        unknownKey: 'dsh_' + 'x'.repeat(43),
      };
      // Two tokens the IdP issued for this hub, lacking scopes: none of the hub's, and read only.
      const noScope = await idp.clientCredentials('other-bot', 'other', hub);
      const readOnly = await idp.clientCredentials('reader-bot', 'devstream:read', hub);
      const failures: string[] = [];
      const expect = (what: string, status: number, challenge: string | null, want: number, wantChallenge: RegExp) => {
        if (status !== want || !wantChallenge.test(challenge ?? ''))
          failures.push(`${what}: ${status} ${challenge ?? '(no challenge)'}`);
      };
      const insufficient = (scope: string) => new RegExp(`error="insufficient_scope", scope="${scope}"`);
      for (const route of served) {
        const { method, path, body } = requestOf(route);
        for (const [kind, token] of Object.entries(unauthorized)) {
          const answer = await rest(hub, method, path, body, bearer(token));
          expect(
            `${kind} ${method} ${path}`,
            answer.status,
            answer.headers.get('www-authenticate'),
            401,
            /error="invalid_token"/,
          );
        }
        const none = await rest(hub, method, path, body, bearer(noScope));
        expect(
          `noScope ${method} ${path}`,
          none.status,
          none.headers.get('www-authenticate'),
          403,
          insufficient('devstream:read devstream:write'),
        );
        const needed = scopeOfRoute(route);
        if (needed === undefined) failures.push(`${method} ${route.url}: no scope known for it (scopeOfRoute)`);
        else if (needed !== 'read') {
          const answer = await rest(hub, method, path, body, bearer(readOnly));
          expect(
            `readOnly ${method} ${path}`,
            answer.status,
            answer.headers.get('www-authenticate'),
            403,
            insufficient(`devstream:${needed}`),
          );
        }
      }
      let id = 0;
      const mcp = (token: string, message: { method: string; params?: Record<string, unknown> }) =>
        fetch(`${hub}/mcp`, {
          method: 'POST',
          headers: { ...MCP_HEADERS, ...bearer(token) },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, ...message }),
        });
      for (const message of MCP_REQUESTS) {
        const what = `${message.method}${message.method === 'tools/call' ? ` ${String(message.params!.name)}` : ''}`;
        for (const [kind, token] of Object.entries(unauthorized)) {
          const answer = await mcp(token, message);
          expect(
            `${kind} MCP ${what}`,
            answer.status,
            answer.headers.get('www-authenticate'),
            401,
            /error="invalid_token"/,
          );
        }
        const none = await mcp(noScope, message);
        expect(
          `noScope MCP ${what}`,
          none.status,
          none.headers.get('www-authenticate'),
          403,
          insufficient('devstream:read devstream:write'),
        );
      }
      // Over MCP a read-only token is refused (step-up) every tool call needing more, `repo` analyze included.
      const sessionId = await rawInitialize(hub, { headers: bearer(readOnly) });
      for (const op of tools) {
        for (const args of op.name === 'repo' ? [{}, { action: 'analyze', path: '/tmp' }] : [{}]) {
          const needed = neededScope(op, args);
          if (needed === 'read') continue;
          const answer = await rawMcp(
            hub,
            { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: op.name, arguments: args } },
            { sessionId, headers: bearer(readOnly) },
          );
          expect(
            `readOnly MCP ${op.name}`,
            answer.status,
            answer.headers.get('www-authenticate'),
            403,
            insufficient(`devstream:${needed}`),
          );
        }
      }
      assert.deepEqual(failures, [], 'every bad token refused');
    });
  });
}

describe('OAuth: opaque tokens by RFC 7662 introspection', () => {
  let database: TestDb;
  let idp: TestIdp;
  let server: TestServer;
  let introspection: import('node:http').Server;
  let hub: string;
  const asked: Array<{ authorization: string | undefined; token: string | null }> = [];
  const now = () => Math.floor(Date.now() / 1000);
  /** What the introspection endpoint answers for each opaque token. */
  const answers: Record<string, () => Record<string, unknown>> = {
    'opaque-good': () => ({
      active: true,
      scope: 'devstream:read devstream:write',
      sub: 'opaque-user',
      exp: now() + 300,
    }),
    'opaque-inactive': () => ({ active: false }),
    'opaque-expired': () => ({ active: true, scope: 'devstream:read', sub: 'late', exp: now() - 600 }),
    'opaque-other-aud': () => ({ active: true, scope: 'devstream:read', sub: 'x', aud: 'https://other.example.org' }),
  };

  before(async () => {
    database = await backends[0]!.open();
    hub = `http://127.0.0.1:${await freePort()}`;
    idp = await startIdp(() => [hub], REDIRECT_URI);
    const { createServer: createHttpServer } = await import('node:http');
    introspection = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const token = new URLSearchParams(body).get('token');
        asked.push({ authorization: req.headers.authorization, token });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(answers[token ?? '']?.() ?? { active: false }));
      });
    });
    await new Promise<void>((resolve) => introspection.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(introspection.address() as { port: number }).port}/introspect`;
    server = await startServer(
      database,
      {
        publicUrl: hub,
        auth: {
          mode: 'required',
          adminToken: ADMIN_TOKEN,
          oauth: {
            ...oauthConfig(idp.issuer, hub),
            introspection: { url, clientId: 'hub', clientSecret: 'hub-secret-0123456789' },
          },
        },
      },
      {},
      Number(new URL(hub).port),
    );
  });
  after(async () => {
    await server?.close();
    await idp?.close();
    await new Promise((resolve) => introspection?.close(resolve));
    await database?.dispose();
  });

  test('an active opaque token is the introspected subject with its scopes; inactive, expired or foreign ones are 401', async () => {
    const me = await rest(hub, 'GET', '/api/v1/me', undefined, bearer('opaque-good'));
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.name, 'opaque-user');
    assert.deepEqual(me.body.scopes, ['read', 'write']);
    const last = asked.at(-1)!;
    assert.equal(last.token, 'opaque-good');
    assert.equal(last.authorization, `Basic ${Buffer.from('hub:hub-secret-0123456789').toString('base64')}`);
    // Cached: a second request does not ask again.
    const count = asked.length;
    assert.equal((await rest(hub, 'GET', '/api/v1/me', undefined, bearer('opaque-good'))).status, 200);
    assert.equal(asked.length, count);
    for (const token of ['opaque-inactive', 'opaque-expired', 'opaque-other-aud', 'opaque-unknown']) {
      const refused = await rest(hub, 'GET', '/api/v1/tasks', undefined, bearer(token));
      assert.equal(refused.status, 401, `${token}: ${JSON.stringify(refused.body)}`);
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/, token);
    }
  });
});

describe('OAuth: an identity provider that does not answer', () => {
  let database: TestDb;
  let server: TestServer;
  let hub: string;

  before(async () => {
    database = await backends[0]!.open();
    hub = `http://127.0.0.1:${await freePort()}`;
    // Nothing listens on these ports: discovery, the key set and introspection all fail to connect.
    const down = `http://127.0.0.1:${await freePort()}`;
    server = await startServer(
      database,
      {
        publicUrl: hub,
        auth: {
          mode: 'required',
          adminToken: ADMIN_TOKEN,
          oauth: {
            ...oauthConfig(down, hub),
            introspection: { url: `${down}/introspect`, clientId: 'hub', clientSecret: 'hub-secret-0123456789' },
          },
        },
      },
      {},
      Number(new URL(hub).port),
    );
  });
  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  test('a token that cannot be checked is 503 AUTH_UNAVAILABLE with Retry-After, not a 401; API keys still work', async () => {
    const jwt = await signed(await signingKey('k1'), { iss: 'http://127.0.0.1:1', aud: hub, sub: 'someone' });
    for (const [label, token] of [
      ['JWT', jwt],
      ['opaque', 'opaque-token-while-the-idp-is-down'],
    ] as const) {
      const answer = await rest(hub, 'GET', '/api/v1/tasks', undefined, bearer(token));
      assert.equal(answer.status, 503, `${label}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'AUTH_UNAVAILABLE', label);
      assert.match(answer.body.error.message, /cannot be checked now/, label);
      assert.equal(answer.headers.get('retry-after'), '5', label);
      assert.equal(answer.headers.get('www-authenticate'), null, `${label}: no challenge, the token is not known bad`);
      const mcp = await fetch(`${hub}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...bearer(token) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(mcp.status, 503, `${label} over /mcp`);
    }
    const key = await createKey(hub, ADMIN_TOKEN, 'still-works', ['read']);
    assert.equal((await rest(hub, 'GET', '/api/v1/tasks', undefined, bearer(key))).status, 200);
  });
});
