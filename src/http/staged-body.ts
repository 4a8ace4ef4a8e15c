import { randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors.js';

/** A request body received whole into a temporary file, to be read back as often as needed. */
export interface StagedBody {
  /** Bytes staged (as they were sent). */
  readonly size: number;
  /** The staged bytes from the first one (once). */
  read(): Readable;
  /** Closes the file (and removes it where it could not be removed at once). Idempotent. */
  dispose(): Promise<void>;
}

export interface StageOptions {
  /** The body must arrive at this many bytes per second at least, averaged over each window. */
  minRate: number;
  windowMs: number;
}

/**
 * Receives a body (`stages`: its source, then checks such as a byte limit) into a file of its own
 * under the OS temp folder, so that nothing scarcer than disk space — a database connection above
 * all — waits on the client while it sends. The file is created private (0600) and removed from the
 * folder at once where the system allows it (POSIX): it lives only as long as its open handle, so
 * nothing is left behind whatever happens, a killed process included. A body slower than
 * `minRate` over a window fails with a 408 VALIDATION_ERROR naming `(body)`.
 */
export async function stageBody(stages: Array<Readable | Duplex>, options: StageOptions): Promise<StagedBody> {
  const path = join(tmpdir(), `dsh-upload-${randomBytes(8).toString('hex')}`);
  // One handle to write, one to read back: a stream on a FileHandle closes it when it ends.
  const writer = await open(path, 'wx', 0o600);
  let reader: FileHandle | null = null;
  let linked = true;
  let reading: Readable | null = null;
  let disposed: Promise<void> | null = null;
  const dispose = () =>
    (disposed ??= (async () => {
      reading?.destroy();
      await writer.close().catch(() => {});
      await reader?.close().catch(() => {});
      if (linked) await unlink(path).catch(() => {});
    })());
  try {
    reader = await open(path, 'r');
    try {
      await unlink(path);
      linked = false;
    } catch {
      // Windows keeps an open file's name: removed by dispose().
    }
    const file = writer.createWriteStream({ start: 0 });
    const rate = minReceiveRate(options.minRate, options.windowMs, () => file.writableNeedDrain);
    const [source, ...checks] = stages;
    await pipeline([source!, rate, ...checks, file]);
    const size = file.bytesWritten;
    const handle = reader;
    return {
      size,
      read() {
        if (reading) throw new Error('a staged body is read once');
        reading = handle.createReadStream({ start: 0 });
        return reading;
      },
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * Passes bytes through, failing with a 408 VALIDATION_ERROR naming `(body)` when fewer than
 * `bytesPerSecond × windowMs` arrive in a window: a client that sends its headers and then a
 * trickle, or nothing, is cut after one window instead of holding its place until
 * REQUEST_TIMEOUT_S. A window in which the bytes waited on this side (`backedUp`: the disk behind)
 * is not held against the client.
 */
export function minReceiveRate(bytesPerSecond: number, windowMs: number, backedUp: () => boolean): Transform {
  const needed = Math.ceil((bytesPerSecond * windowMs) / 1000);
  let received = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      clearInterval(timer);
      callback();
    },
    destroy(error, callback) {
      clearInterval(timer);
      callback(error);
    },
  });
  const timer = setInterval(() => {
    const waitedOnUs = backedUp() || stream.readableLength > 0 || stream.writableLength > 0;
    if (!waitedOnUs && received < needed) {
      const seconds = Math.round(windowMs / 100) / 10;
      const message =
        `the body arrived too slowly: ${received} bytes in ${seconds} s, under the ${formatRate(bytesPerSecond)} ` +
        'an upload must keep up (GRAPH_UPLOAD_MIN_RATE); nothing was stored';
      stream.destroy(
        new AppError('VALIDATION_ERROR', `(body): ${message}`, {
          status: 408,
          details: { issues: [{ field: '(body)', message }] },
        }),
      );
    }
    received = 0;
  }, windowMs);
  timer.unref();
  return stream;
}

const formatRate = (bytesPerSecond: number) =>
  bytesPerSecond % 1024 === 0 ? `${bytesPerSecond / 1024} KiB/s` : `${bytesPerSecond} bytes/s`;
