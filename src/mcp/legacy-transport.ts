import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type JSONRPCMessage,
  type RequestId,
  type TransportSendOptions,
  type WebStandardStreamableHTTPServerTransportOptions,
} from '@modelcontextprotocol/server';

/**
 * The JSON-RPC error code of a call whose connection closed before its answer: the SDK's clients
 * (`ConnectionClosed`) use it for the calls they were still waiting on when their transport closed.
 */
const CONNECTION_CLOSED = -32000;

/** A POST's answer while it may still become JSON: whether the call sent something before its result. */
interface PendingAnswer {
  streaming: boolean;
}

/**
 * The 2025 era's Streamable HTTP transport (one per session, or per request when stateless), served
 * from Node's request and response. The SDK's transport answers every POST that holds a request
 * with an SSE stream; its JSON mode (`enableJsonResponse`) drops whatever a call sends before its
 * result (the notices of create_task, store_memory and search_memory). Here a POST's answer is
 * decided by what the call sends, as the SDK's 2026-era handler does (its `auto` mode): one JSON body
 * when nothing comes before the result (most calls), an SSE stream as soon as something does (a
 * notice, a keep-alive, a request to the client), with everything in order. The 2025 specification
 * lets the server choose either, per POST; clients must accept both. Measured (SDK 1.32 client):
 * JSON costs the client ~20 % less CPU a call than SSE.
 */
export class LegacyTransport extends WebStandardStreamableHTTPServerTransport {
  /** The POSTs' answers, by the ids of the requests they hold that have no response yet. */
  private readonly pending = new Map<RequestId, PendingAnswer>();

  constructor(options: Omit<WebStandardStreamableHTTPServerTransportOptions, 'enableJsonResponse'> = {}) {
    super(options);
  }

  /** A message that is not a response, sent for a request of a lazy POST, makes its answer a stream. */
  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('method' in message) {
      const id = options?.relatedRequestId;
      const answer = id === undefined ? undefined : this.pending.get(id);
      if (answer) answer.streaming = true;
    } else if ('id' in message && message.id !== undefined) this.pending.delete(message.id);
    return super.send(message, options);
  }

  /**
   * Closes the transport: the session ends (`reason` says why: revoked key, idle, session limit,
   * shutdown). Each call still under way is answered first, with an error that says so and that the
   * call may have taken effect: the SDK's close alone ends their streams empty, and a client then
   * waits out its timeout (60 s by default) for an answer that cannot come.
   */
  override async close(reason = 'the session ended'): Promise<void> {
    const unanswered = [...this.pending.keys()];
    this.pending.clear();
    for (const id of unanswered) {
      const message = `Connection closed: ${reason} before this call was answered; it may have taken effect`;
      // Its stream may be gone already (the client went away): then there is nobody to tell.
      await super.send({ jsonrpc: '2.0', id, error: { code: CONNECTION_CLOSED, message } }).catch(() => {});
    }
    return super.close();
  }

  /** Serves one HTTP request (POST, GET or DELETE) of this transport's session. */
  async serve(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, parsedBody: unknown): Promise<void> {
    const post = req.method === 'POST';
    const ids = post ? requestIds(parsedBody) : [];
    const answer: PendingAnswer = { streaming: false };
    for (const id of ids) this.pending.set(id, answer);
    try {
      // The body was parsed by Fastify: the SDK reads it from `parsedBody`, the Request only carries
      // the method, the path and the headers (tool handlers read X-Repo and X-Request-Id there). Its
      // origin is a fixed one: the SDK reads the Host header itself, and a Host that passed the host
      // check may still be no URL's (`name:99999`).
      const request = new Request(new URL(req.url ?? '/', 'http://localhost'), {
        method: req.method ?? 'GET',
        headers: headersOf(req),
      });
      const response = await this.handleRequest(request, {
        authInfo: req.auth,
        parsedBody: post ? parsedBody : undefined,
      });
      const body = response.body;
      if (body && ids.length > 0 && response.headers.get('content-type') === 'text/event-stream')
        return await answerLazily(response, body, answer, ids.length, res);
      writeHead(res, response);
      // A GET's stream may say nothing for a while: its status and headers go out now.
      if (body) res.flushHeaders();
      await pipe(body, res);
    } catch (error) {
      // The request was handed over (hijacked): nothing else would answer it.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      } else if (!res.writableEnded) res.destroy();
    } finally {
      for (const id of ids) if (this.pending.get(id) === answer) this.pending.delete(id);
    }
  }
}

/** The ids of the requests in a POST's body (one message or a batch). */
function requestIds(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/** Request headers as the Fetch API holds them (the SDK validates Accept, Content-Type, the session and protocol). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}

function writeHead(res: ServerResponse, response: Response): void {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
}

/** SSE fields the stream's own headers set, dropped from a JSON answer. */
const SSE_ONLY_HEADERS = new Set(['content-type', 'cache-control', 'connection', 'x-accel-buffering']);
/** How the SDK writes a message without an event id (no event store here): one event a chunk. */
const EVENT_START = Buffer.from('event: message\ndata: ');
const EVENT_END = Buffer.from('\n\n');

/**
 * The JSON of a chunk that is one whole message event (as the SDK writes it: `data:` is one line,
 * JSON.stringify's), else undefined (a keep-alive comment, an event with an id, anything else).
 */
function eventData(chunk: Uint8Array): Buffer | undefined {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (bytes.length < EVENT_START.length + EVENT_END.length) return undefined;
  if (!bytes.subarray(0, EVENT_START.length).equals(EVENT_START)) return undefined;
  if (bytes.indexOf(EVENT_END) !== bytes.length - EVENT_END.length) return undefined;
  return bytes.subarray(EVENT_START.length, bytes.length - EVENT_END.length);
}

/**
 * A POST's SSE answer, sent as JSON when the stream holds nothing but the responses to its
 * requests (one object, or an array for a batch), else as the stream it is: events are held until
 * one that is not a response (the transport's `send` marked the answer streaming before it was
 * written) or anything else (a keep-alive): then those held go first, and the rest follows as it
 * comes. The SDK ends the stream once every request of the POST has its response.
 */
async function answerLazily(
  response: Response,
  body: ReadableStream<Uint8Array>,
  answer: PendingAnswer,
  requests: number,
  res: ServerResponse,
): Promise<void> {
  const reader = body.getReader();
  // The client went away while the call ran: the SDK's stream is cancelled (its cleanup runs).
  const cancel = () => void reader.cancel().catch(() => {});
  res.once('close', cancel);
  const held: Uint8Array[] = [];
  const responses: Buffer[] = [];
  for (;;) {
    const chunk = await reader.read().then(
      (read) => read.value,
      () => undefined, // a failed stream ends like a finished one: what it held is answered
    );
    if (chunk === undefined) break;
    held.push(chunk);
    const data = answer.streaming ? undefined : eventData(chunk);
    if (data === undefined) {
      res.off('close', cancel);
      if (res.destroyed) return cancel();
      writeHead(res, response);
      for (const c of held) res.write(c);
      return pipe(reader, res);
    }
    responses.push(data);
  }
  res.off('close', cancel);
  if (res.destroyed) return;
  if (responses.length !== requests) {
    // Not one event per request (the SDK wrote something that did not pass through send()): the
    // stream as it was.
    writeHead(res, response);
    for (const c of held) res.write(c);
    res.end();
    return;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of response.headers) if (!SSE_ONLY_HEADERS.has(name)) headers[name] = value;
  res.writeHead(response.status, headers);
  res.end(
    responses.length === 1
      ? responses[0]
      : Buffer.concat([
          Buffer.from('['),
          ...responses.flatMap((r, i) => (i ? [Buffer.from(','), r] : [r])),
          Buffer.from(']'),
        ]),
  );
}

/** Writes a response body to the client as it comes, waiting out back-pressure; stops when the client goes away. */
async function pipe(
  body: ReadableStream<Uint8Array> | ReadableStreamDefaultReader<Uint8Array> | null,
  res: ServerResponse,
): Promise<void> {
  if (body === null) {
    res.end();
    return;
  }
  const reader = body instanceof ReadableStream ? body.getReader() : body;
  if (res.destroyed) {
    // The client went away before the answer began (e.g. during the auth hooks): a write would
    // neither fail nor ever drain; the SDK's stream is let go now.
    await reader.cancel().catch(() => {});
    return;
  }
  let closed = false;
  const onClose = () => {
    closed = true;
    // Ends the SDK's stream (its cancel cleans up: the keep-alive, the stream's mapping).
    void reader.cancel().catch(() => {});
  };
  res.once('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || closed) break;
      if (!res.write(value) && !res.destroyed)
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
    }
  } catch {
    // The stream failed or was cancelled: end the response as it is.
  } finally {
    res.off('close', onClose);
  }
  if (!res.destroyed) res.end();
}
