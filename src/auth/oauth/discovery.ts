/** What the hub reads of an authorization server's metadata (RFC 8414 / OpenID Connect Discovery). */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
  introspection_endpoint?: string;
}

/** Longest wait for the authorization server's metadata or keys. */
export const FETCH_TIMEOUT_MS = 5_000;

/** `url` without its trailing slashes (a loop: /\/+$/ backtracks on a long run of them). */
function noSlash(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}

/**
 * The metadata URLs of `issuer`, in the order tried: RFC 8414 (the well-known name inserted before
 * the issuer's path), then OpenID Connect Discovery (appended to the issuer, as Keycloak, Auth0,
 * Okta, Entra ID and Google serve it).
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = noSlash(url.pathname);
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${noSlash(issuer)}/.well-known/openid-configuration`,
  ];
}

/**
 * Fetches the issuer's metadata: the first of metadataUrls that answers 200 with JSON whose
 * `issuer` is `issuer` (RFC 8414 §3.3: anything else is refused, so another server's keys are
 * never trusted) and which names a `jwks_uri`. Throws naming each URL's failure.
 */
export async function discover(issuer: string, fetchFn: typeof fetch = fetch): Promise<IssuerMetadata> {
  const failures: string[] = [];
  for (const url of metadataUrls(issuer)) {
    try {
      const response = await fetchFn(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        redirect: 'error',
      });
      if (!response.ok) {
        failures.push(`${url}: HTTP ${response.status}`);
        continue;
      }
      const body = (await response.json()) as Partial<IssuerMetadata> | null;
      if (typeof body?.issuer !== 'string' || noSlash(body.issuer) !== noSlash(issuer)) {
        failures.push(`${url}: its issuer ${JSON.stringify(body?.issuer)} is not ${issuer}`);
        continue;
      }
      if (typeof body.jwks_uri !== 'string') {
        failures.push(`${url}: no jwks_uri`);
        continue;
      }
      return {
        issuer: body.issuer,
        jwks_uri: body.jwks_uri,
        ...(typeof body.introspection_endpoint === 'string'
          ? { introspection_endpoint: body.introspection_endpoint }
          : {}),
      };
    } catch (error) {
      failures.push(`${url}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`no usable authorization server metadata for ${issuer}: ${failures.join('; ')}`);
}
