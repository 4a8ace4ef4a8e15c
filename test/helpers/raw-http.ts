import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as received. */
  text: string;
  /** The body parsed as JSON, or the text when it is not JSON (undefined when empty). */
  body: any;
}

export interface RawRequest {
  /** Default GET. */
  method?: string;
  /** Path and query, default `/`. */
  path?: string;
  /** Sent as given, Host included (fetch refuses to set Host). */
  headers?: Record<string, string>;
  body?: string;
  /** The loopback source address to send from (fetch cannot choose one). */
  localAddress?: string;
}

/**
 * One HTTP request by `node:http` to the server at `url`, for what fetch will not send: a Host
 * header of the test's choosing, a chosen source address, a body without a content type.
 *
 * @example rawRequest(server.url, { path: '/api/v1/tasks', headers: { host: 'evil.example' } })
 */
export function rawRequest(url: string, options: RawRequest = {}): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  const { method = 'GET', path = '/', headers = {}, body, localAddress } = options;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method, path, headers, ...(localAddress ? { localAddress } : {}) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON: keep the text */
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
