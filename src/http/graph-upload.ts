import { PassThrough, Transform, type Duplex, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { analyzeGraphTables } from '../db/queries/graphs/ingest.js';
import type { Services } from '../domain/context.js';
import type { Caller } from '../auth/scopes.js';
import { COMMIT_FILE_SHAPE, CommitFileSchema } from '../commit-file.js';
import { UploadQuerySchema, UploadResultSchema, uploadGraph } from '../domain/graphs/upload-graph.js';
import { requireScope } from '../auth/scopes.js';
import { AppError, validationError } from '../errors.js';
import { toFieldIssues } from '../domain/field-issues.js';
import type { Drain } from './drain.js';
import { lingerAfterAnswer } from './lingering-close.js';
import { ErrorBodySchema } from './operation-routes.js';
import { stageBody, type StagedBody } from './staged-body.js';
import { UPLOAD_RETRY_AFTER_S, UploadSlots, type UploadSlot } from './upload-slots.js';

export interface GraphUploadOptions {
  services: Services;
  callerOf(request: FastifyRequest): Caller;
  /** Bytes, before and after decompression. */
  uploadLimit: number;
  retention: number;
  /** Uploads in flight at once (receiving or storing), in all and per key (per client address when AUTH=off). */
  uploadsMax: number;
  uploadsPerKey: number;
  /** A body must arrive at this many bytes per second at least, averaged over each window of `rateWindowMs`. */
  minRate: number;
  rateWindowMs: number;
  /** The shutdown's drain: an upload still running at its deadline is rolled back and answered 503. */
  drain?: Drain;
}

/** What the upload route reports (for /metrics). */
export interface GraphUploads {
  /** Uploads in flight: receiving their body, or storing it. */
  inFlight(): { receiving: number; storing: number };
}

/** Passes bytes through, failing with 413 once more than `limit` have gone by. */
function byteLimit(limit: number, what: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit)
        callback(
          new AppError(
            'PAYLOAD_TOO_LARGE',
            `The graph upload is larger than ${limit} bytes ${what} (GRAPH_UPLOAD_LIMIT)`,
          ),
        );
      else callback(null, chunk);
    },
  });
}

/**
 * Passes bytes through, failing with a VALIDATION_ERROR naming `(body)` when they begin as gzip does
 * (1f 8b): a compressed file sent without `Content-Encoding: gzip` (`curl --data-binary @graph.json.gz`),
 * which would otherwise fail as "not valid JSON". No JSON text begins with the byte 1f.
 */
function gzipWithoutHeader(): Transform {
  let head = Buffer.alloc(0);
  let checked = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (checked) return callback(null, chunk);
      head = Buffer.concat([head, chunk]);
      if (head.length < 2) return callback();
      checked = true;
      if (head[0] === 0x1f && head[1] === 0x8b) {
        const message =
          'looks gzip-compressed (it begins with the bytes 1f 8b): send it with the header Content-Encoding: gzip';
        return callback(validationError([{ field: '(body)', message }]));
      }
      callback(null, head);
    },
    flush(callback) {
      callback(null, checked ? undefined : head);
    },
  });
}

/**
 * `POST /api/v1/graphs`: a DevLens commit file as the body (JSON, or gzip with `Content-Encoding:
 * gzip`), up to GRAPH_UPLOAD_LIMIT. The body is first received whole into a temporary file, as sent
 * (still compressed), and only then read — streamed, never held whole — into the database in one
 * transaction: a client that sends slowly, or stops, holds a file and an upload place, never a
 * database connection (with PGlite's one connection, a stalled upload used to stop every request).
 * Uploads in flight are capped (GRAPH_UPLOADS_MAX, GRAPH_UPLOADS_PER_KEY: 429 beyond) and a body
 * must keep up GRAPH_UPLOAD_MIN_RATE (408 otherwise). Any answer given before the body has arrived
 * whole says `Connection: close`, and the connection is closed after it (lingerAfterAnswer): with
 * the rest of a body unread in it, a next request on it (a proxy's) would wait behind that.
 */
export async function registerGraphUpload(app: FastifyInstance, options: GraphUploadOptions): Promise<GraphUploads> {
  const slots = new UploadSlots(options.uploadsMax, options.uploadsPerKey);
  await app.register(async (scope) => {
    // This route reads its body itself, as a stream; everywhere else JSON bodies stay parsed and small.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    // Every answer of this route, the hooks' included (401, 403, 429 of the rate limit): when the
    // body has not all arrived, the connection is not reused. Node would otherwise keep it open
    // with the rest of the body unread (the next request on it waits behind that), or read the
    // rest, however large, first. The rest is read and dropped for a bounded time after the
    // answer, so that a client still sending does not lose the answer to a reset connection.
    scope.addHook('onSend', async (request, reply, payload) => {
      if (!request.raw.complete) {
        reply.header('connection', 'close');
        lingerAfterAnswer(request.raw);
      }
      return payload;
    });

    scope.post(
      '/api/v1/graphs',
      {
        schema: {
          operationId: 'post_graph',
          summary: 'Upload a code graph commit',
          description:
            `Body: a DevLens commit file \`${COMMIT_FILE_SHAPE}\` ` +
            'as JSON, or gzip-compressed with `Content-Encoding: gzip`, up to GRAPH_UPLOAD_LIMIT. Received whole first (at ' +
            'GRAPH_UPLOAD_MIN_RATE at least: 408 otherwise), then stored in one transaction, replacing an earlier upload ' +
            'of the same commit. At most GRAPH_UPLOADS_PER_KEY uploads per key and GRAPH_UPLOADS_MAX in all at once (429 beyond).',
          tags: ['graphs'],
          querystring: UploadQuerySchema,
          body: CommitFileSchema, // documentation only (see its comment)
          response: { 201: UploadResultSchema, '4XX': ErrorBodySchema, '5XX': ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const caller = options.callerOf(request);
        requireScope(caller, 'write', 'uploading a code graph');
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > options.uploadLimit) {
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            `The graph upload is larger than ${options.uploadLimit} bytes (GRAPH_UPLOAD_LIMIT)`,
          );
        }
        const encoding = String(request.headers['content-encoding'] ?? 'identity')
          .toLowerCase()
          .trim();
        if (!['identity', 'gzip', 'x-gzip'].includes(encoding)) {
          throw new AppError(
            'UNSUPPORTED_MEDIA_TYPE',
            `Content-Encoding "${encoding}" is not supported: send JSON, or gzip`,
          );
        }
        // A bad query string is answered before the body is received (uploadGraph checks it again).
        const query = UploadQuerySchema.safeParse(request.query ?? {});
        if (!query.success) throw validationError(toFieldIssues(query.error));
        const slot = slots.take(
          caller.name !== null ? `key:${caller.name}` : `ip:${request.ip}`,
          caller.name !== null ? `The key "${caller.name}"` : `The address ${request.ip}`,
        );
        if (slot instanceof AppError) {
          reply.header('retry-after', String(UPLOAD_RETRY_AFTER_S));
          throw slot;
        }
        try {
          return await receiveAndStore(request, reply, caller, encoding, slot);
        } finally {
          slot.release();
        }
      },
    );
  });

  async function receiveAndStore(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: Caller,
    encoding: string,
    slot: UploadSlot,
  ): Promise<FastifyReply> {
    // The content parser hands the request itself on (IncomingMessage) as the body stream.
    const raw = request.raw;
    // The body goes through a stage of its own, so that the upload can be stopped (a shutdown's
    // deadline) while the connection stays up to carry the answer, and so that a client that
    // hangs up is told apart from a database failure.
    const body = new PassThrough();
    // A hang-up can come before stageBody's pipeline listens on the body (while the staging file
    // opens): the pipeline then finds the body destroyed with ClientAbort and fails with it. Until
    // then the error must not be an unhandled 'error' event, which would end the process.
    body.on('error', () => {});
    let clientGone = false;
    const hungUp = () => {
      if (raw.complete) return;
      clientGone = true;
      body.destroy(new ClientAbort());
    };
    raw.once('aborted', hungUp);
    raw.once('error', hungUp);
    raw.once('close', hungUp);
    raw.pipe(body);
    // What a shutdown's deadline stops: the body while it arrives, then the staged file being read.
    let reading: Readable = body;
    let cancelled: AppError | null = null;
    options.drain?.onCancel(request, (error) => {
      cancelled = error;
      raw.unpipe(body);
      raw.resume(); // read and drop the rest, so the answer is not lost to a reset connection
      // The staged file's stream may not be in uploadGraph's pipeline yet (it looks the graph up
      // first): as for the body above, the pipeline meets the error when it attaches.
      reading.on('error', () => {});
      reading.destroy(error);
    });
    const checks: Duplex[] = [byteLimit(options.uploadLimit, 'as sent')];
    if (encoding === 'identity') checks.push(gzipWithoutHeader());
    let staged: StagedBody | null = null;
    try {
      staged = await stageBody([body, ...checks], { minRate: options.minRate, windowMs: options.rateWindowMs });
      if (cancelled) throw cancelled;
      slot.storing();
      reading = staged.read();
      const stages: Array<Readable | Duplex> = [reading];
      if (encoding !== 'identity') stages.push(createGunzip(), byteLimit(options.uploadLimit, 'unpacked'));
      const result = await uploadGraph(
        {
          db: options.services.db,
          caller,
          retention: options.retention,
          nodeVectors: {
            embedder: options.services.memory.embedder,
            queued: () => options.services.memory.queued('embedding'),
            log: request.log,
          },
        },
        request.query,
        stages,
      );
      // Before answering, so the next search is planned on the new statistics. The upload is committed either way.
      await analyzeGraphTables(options.services.db).catch((error: unknown) => {
        request.log.warn({ err: error }, 'analyze after graph upload failed');
      });
      // The commit's search index, built now rather than by its first search (a second or two at 25k nodes).
      options.services.graphs.indexes.get(options.services.db, result).catch((error: unknown) => {
        request.log.warn({ err: error }, 'building the search index after a graph upload failed');
      });
      return await reply.code(201).send(result);
    } catch (error) {
      if (clientGone) {
        // Nobody to answer; nothing was stored.
        request.log.info(
          { query: request.query },
          'graph upload: the client closed the connection before the body ended; nothing stored',
        );
        return reply.hijack();
      }
      throw asBadGzip(error as Error);
    } finally {
      raw.off('aborted', hungUp);
      raw.off('error', hungUp);
      raw.off('close', hungUp);
      await staged?.dispose();
    }
  }

  return { inFlight: () => slots.stats() };
}

/** The request body ended early because the client hung up. */
class ClientAbort extends Error {
  override readonly name = 'ClientAbort';
  constructor() {
    super('the client closed the connection before the body ended');
  }
}

/** zlib's errors (bad header, truncated data) as the client's fault. */
function asBadGzip(error: Error & { code?: string }): Error {
  if (error instanceof AppError) return error;
  if (error.code?.startsWith('Z_')) {
    return new AppError('VALIDATION_ERROR', `(body): not valid gzip: ${error.message}`, {
      details: { issues: [{ field: '(body)', message: `not valid gzip: ${error.message}` }] },
    });
  }
  return error;
}
