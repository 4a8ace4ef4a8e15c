import assert from 'node:assert/strict';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/server';
import { MCP_HEADERS } from './server.js';

/**
 * MCP over raw HTTP, for what the SDK client will not send (batches, hostile bodies, a session
 * left without a stream): POSTs to /mcp with the headers the Streamable HTTP transport wants.
 */

/** An `initialize` request (JSON-RPC id 1) at the SDK's latest protocol version. */
export const initializeBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** The headers of a request inside session `sessionId`. */
export const sessionHeaders = (sessionId: string) => ({
  'mcp-session-id': sessionId,
  'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
});

export interface McpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON-RPC messages of the answer: every SSE event's data, or the JSON body (a batch's elements). */
  messages: any[];
  /** The JSON body (an array for a batch), or the first SSE event's data; undefined when neither parses. */
  json: any;
}

const parse = (text: string | undefined): unknown => {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * A raw POST /mcp of `body` (a string is sent as is, anything else as JSON), in session
 * `sessionId` when given, with `headers` added (e.g. a bearer token).
 */
export async function rawMcp(
  url: string,
  body: unknown,
  options: { sessionId?: string; headers?: Record<string, string> } = {},
): Promise<McpAnswer> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      ...MCP_HEADERS,
      ...options.headers,
      ...(options.sessionId ? sessionHeaders(options.sessionId) : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  let messages: any[];
  if (text.startsWith('{') || text.startsWith('[')) {
    json = parse(text);
    messages = json === undefined ? [] : Array.isArray(json) ? json : [json];
  } else {
    messages = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => parse(line.slice(6)))
      .filter((m) => m !== undefined);
    json = messages[0];
  }
  return { status: response.status, headers: response.headers, text, messages, json };
}

/**
 * Opens a session with raw HTTP (no SSE stream left open) and returns its id: `initialize` (must
 * answer 200 with Mcp-Session-Id), then `notifications/initialized` (202) unless `initialized` is false.
 */
export async function rawInitialize(
  url: string,
  options: { headers?: Record<string, string>; initialized?: boolean } = {},
): Promise<string> {
  const init = await rawMcp(url, initializeBody, { headers: options.headers ?? {} });
  assert.equal(init.status, 200, `initialize: ${init.text}`);
  const id = init.headers.get('mcp-session-id');
  assert.ok(id, 'initialize answers with Mcp-Session-Id');
  if (options.initialized !== false) {
    const initialized = await rawMcp(
      url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { sessionId: id, headers: options.headers ?? {} },
    );
    assert.equal(initialized.status, 202);
  }
  return id;
}
