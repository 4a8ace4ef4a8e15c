import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { FaultLog } from '../operations/fault-log.js';
import { toAppError } from '../operations/invoke.js';

/** Seconds a client is told to wait after a 503 (a database restart takes a few). */
const RETRY_AFTER_S = 5;

export const isMcp = (request: FastifyRequest) => request.url === '/mcp' || request.url.startsWith('/mcp?');

/** A body that is not valid JSON (Fastify's parser codes, or the SyntaxError it passes on). */
const isJsonParseFailure = (error: FastifyError) =>
  error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
  error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
  error.name === 'SyntaxError';

/** Fastify's own request faults (bad JSON, wrong content type, body too large) as catalogue errors. */
function fromFastifyError(error: FastifyError): AppError | undefined {
  if (isJsonParseFailure(error)) {
    // Fastify's parser says the same when the JSON is well formed but holds a `__proto__` or
    // `constructor.prototype` key (refused: prototype poisoning).
    const message =
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
        ? 'not valid JSON, or it holds a __proto__ or constructor.prototype key (refused)'
        : error.message;
    return new AppError('VALIDATION_ERROR', `(body): malformed JSON: ${message}`, {
      details: { issues: [{ field: '(body)', message: `malformed JSON: ${message}` }] },
    });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', error.message);
    default:
      if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        return new AppError('VALIDATION_ERROR', error.message, { status: error.statusCode });
      }
      return undefined;
  }
}

/**
 * Fastify's router faults as catalogue errors: a path that is not valid percent-encoded UTF-8
 * (FST_ERR_BAD_URL, e.g. an encoded lone surrogate) and a path parameter longer than the router's
 * `maxParamLength` (FST_ERR_MAX_PARAM_LENGTH, 414). Fastify answers these itself, in its own body
 * shape, unless this is given as its `frameworkErrors` option (app.ts).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const message = tooLong
    ? 'a path segment is longer than the service accepts'
    : 'the path is not valid percent-encoded UTF-8';
  // Answered before the onRequest hooks: the request id header is set here.
  reply.header('x-request-id', request.id);
  void sendError(
    reply,
    new AppError('VALIDATION_ERROR', `(path): ${message}`, { details: { issues: [{ field: '(path)', message }] } }),
  );
}

/**
 * Faults Node's HTTP parser answers before Fastify sees a request: headers over Node's 16 KB (a
 * huge URL) → 431, anything else malformed → 400, in the service's error body. Given to Fastify
 * as `clientErrorHandler` (app.ts).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify(
    tooLarge
      ? new AppError('PAYLOAD_TOO_LARGE', 'The request line and headers are larger than the service accepts (16 KB)', {
          status,
        }).toJSON()
      : new AppError('VALIDATION_ERROR', '(request): not a well-formed HTTP request', {
          details: { issues: [{ field: '(request)', message: 'not a well-formed HTTP request' }] },
        }).toJSON(),
  );
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * One error handler for the whole service: REST gets `{error: {code, message, details}}`, /mcp a
 * JSON-RPC error; 5xx internals stay in the log (through the app's `faults`), never in the response.
 */
export function registerErrorHandling(app: FastifyInstance, faults: FaultLog): void {
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const error =
      fromFastifyError(thrown) ?? toAppError(thrown, `${request.method} ${request.routeOptions.url ?? request.url}`);
    faults.log(request.log, error, thrown);
    if (isMcp(request)) {
      const rpcCode = isJsonParseFailure(thrown) ? -32700 : error.status < 500 ? -32600 : -32603;
      return withStatus(reply, error).send({
        jsonrpc: '2.0',
        error: { code: rpcCode, message: error.message },
        id: null,
      });
    }
    return sendError(reply, error);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  return withStatus(reply, error).send(error.toJSON());
}

/** The error's status; a 503 is temporary (the database restarting): clients are told when to retry. */
function withStatus(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.status === 503) reply.header('retry-after', String(RETRY_AFTER_S));
  return reply.code(error.status);
}
