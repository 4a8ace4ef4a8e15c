import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { isServerFault, toAppError } from '../operations/invoke.js';

const isMcp = (request: FastifyRequest) => request.url === '/mcp' || request.url.startsWith('/mcp?');

/** A body that is not valid JSON (Fastify's parser codes, or the SyntaxError it passes on). */
const isJsonParseFailure = (error: FastifyError) =>
  error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.name === 'SyntaxError';

/** Fastify's own request faults (bad JSON, wrong content type, body too large) as catalogue errors. */
function fromFastifyError(error: FastifyError): AppError | undefined {
  if (isJsonParseFailure(error)) {
    return new AppError('VALIDATION_ERROR', `Malformed JSON body: ${error.message}`, { details: { issues: [{ field: '(body)', message: error.message }] } });
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
 * One error handler for the whole service: REST gets `{error: {code, message, details}}`, /mcp a
 * JSON-RPC error; 5xx internals stay in the log, never in the response.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const error = fromFastifyError(thrown) ?? toAppError(thrown, `${request.method} ${request.routeOptions.url ?? request.url}`);
    if (isServerFault(error)) request.log.error({ err: thrown }, 'request failed');
    if (isMcp(request)) {
      const rpcCode = isJsonParseFailure(thrown) ? -32700 : error.status < 500 ? -32600 : -32603;
      return reply.code(error.status).send({ jsonrpc: '2.0', error: { code: rpcCode, message: error.message }, id: null });
    }
    return sendError(reply, error);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  return reply.code(error.status).send(error.toJSON());
}
