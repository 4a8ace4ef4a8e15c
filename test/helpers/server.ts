import type { FastifyInstance } from 'fastify';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { buildApp, type AppDeps } from '../../src/app.js';
import { after, before } from 'node:test';
import { testConfig, type ServerConfig } from '../../support/test-config.js';
import type { Backend, TestDb } from './backends.js';

/** The headers a raw Streamable HTTP POST to /mcp needs. */
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export interface TestServer {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/**
 * The service listening on a free loopback port (or `port`, when its PUBLIC_URL must name it), over
 * the given database; `deps` adds what buildApp takes besides the database (a log stream, a shorter
 * key recheck interval).
 */
export async function startServer(
  test: TestDb,
  overrides: Partial<ServerConfig> = {},
  deps: Omit<AppDeps, 'db' | 'schemaVersion'> = {},
  port = 0,
): Promise<TestServer> {
  const app = await buildApp(testConfig(overrides), { ...deps, db: test.db, schemaVersion: test.schemaVersion });
  await app.listen({ port, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return { app, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/**
 * A real MCP SDK client (v2) connected over Streamable HTTP: in the 2025 era (the `initialize`
 * handshake and a session, the default) or pinned to the 2026-07-28 one (`era: 'modern'`).
 */
export async function connectMcp(
  url: string,
  path = '/mcp',
  headers: Record<string, string> = {},
  options: { era?: 'legacy' | 'modern'; name?: string } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client(
    { name: options.name ?? 'devstream-hub-tests', version: '1.0.0' },
    options.era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(path, url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

/** JSON over HTTP to the REST mirror. */
export async function rest(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(new URL(path, url), init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

export interface Served {
  database: TestDb;
  server: TestServer;
  client: Client;
}

/**
 * Registers before/after hooks for the current suite: a fresh database of `backend`, the service
 * listening over it and a connected MCP client, handed to `set` once ready; all closed afterwards.
 */
export function withServer(backend: Backend, set: (served: Served) => void): void {
  const parts: Partial<Served> = {};
  before(async () => {
    parts.database = await backend.open();
    parts.server = await startServer(parts.database);
    parts.client = (await connectMcp(parts.server.url)).client;
    set(parts as Served);
  });
  after(async () => {
    await parts.client?.close();
    await parts.server?.close();
    await parts.database?.dispose();
  });
}
