import type { IncomingHttpHeaders } from 'node:http';

/**
 * The `X-Repo` header: the code graph DevLens tools default to (trimmed; absent when empty). A leaf
 * beside both adapters (REST and MCP read it alike), so neither imports the other.
 */
export function repoHeader(request: { headers: IncomingHttpHeaders }): string | undefined {
  const value = request.headers['x-repo'];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text ? text.slice(0, 500) : undefined;
}
