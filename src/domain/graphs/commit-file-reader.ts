import { Writable, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Assembler from 'stream-json/assembler.js';
import { parser } from 'stream-json';
import type { Token } from 'stream-json/parser.js';

/** The big arrays of a DevLens commit file, streamed element by element. */
export type ElementArray = 'nodes' | 'edges' | 'allNodes' | 'allEdges';
const ELEMENT_ARRAYS = new Set<string>(['nodes', 'edges', 'allNodes', 'allEdges']);

export interface CommitFileSink {
  /**
   * A batch of elements of one array, in file order; `start` is the first one's index in that
   * array. The reader waits for the returned promise before it reads on (backpressure).
   */
  elements(array: ElementArray, start: number, values: unknown[]): Promise<void>;
  /** Every other top-level field (commitHash, analyzedAt, nodeScores, stats…), assembled whole. */
  field(key: string, value: unknown): void;
}

export class CommitFileFormatError extends Error {
  override readonly name = 'CommitFileFormatError';
}

/**
 * Reads a DevLens commit file from a byte stream (the source, then any transforms such as gunzip)
 * without holding it whole: each element of the
 * node and edge arrays is assembled on its own and handed over in batches of `batchSize`; memory
 * stays at one batch however large the file. Throws CommitFileFormatError when the text is not
 * JSON or not an object at the top.
 */
export async function readCommitFile(stages: Array<Readable | Duplex>, sink: CommitFileSink, batchSize = 500): Promise<void> {
  let depth = 0; // nesting of the token being read: 1 = inside the top-level object
  let key: string | null = null; // the top-level key whose value is being read
  let array: ElementArray | null = null; // set while inside one of the big arrays
  let index = 0;
  let batch: unknown[] = [];
  let batchStart = 0;
  let field: Assembler | null = null; // assembling a top-level value, or one array element
  let sinkError: unknown = null;

  const flush = async () => {
    if (array && batch.length > 0) {
      const values = batch;
      batch = [];
      await sink.elements(array, batchStart, values);
      batchStart = index;
    }
  };

  /** Consumes one token; returns true when a batch is full and should be flushed. */
  const consume = (token: Token): boolean => {
    const opens = token.name === 'startObject' || token.name === 'startArray';
    const closes = token.name === 'endObject' || token.name === 'endArray';
    if (depth === 0) {
      if (token.name !== 'startObject') throw new CommitFileFormatError('a commit file is a JSON object');
      depth = 1;
      return false;
    }
    if (depth === 1 && field === null && array === null) {
      if (token.name === 'keyValue') {
        key = token.value;
        return false;
      }
      if (token.name === 'endObject') {
        depth = 0;
        return false;
      }
      if (token.name === 'startArray' && key !== null && ELEMENT_ARRAYS.has(key)) {
        array = key as ElementArray;
        index = 0;
        batchStart = 0;
        depth = 2;
        return false;
      }
      // Any other top-level value: assembled whole (scalars, stats, nodeScores).
      field = new Assembler();
    }
    if (array !== null && field === null) {
      if (depth === 2 && token.name === 'endArray') {
        depth = 1;
        return true; // the caller flushes the rest, then the array ends
      }
      field = new Assembler();
    }
    if (opens) depth++;
    if (closes) depth--;
    field!.consume(token);
    if (!field!.done) return false;
    const value = field!.current;
    field = null;
    if (array !== null) {
      batch.push(value);
      index++;
      return batch.length >= batchSize;
    }
    sink.field(key!, value);
    return false;
  };

  const sinkStream = new Writable({
    objectMode: true,
    write(token: Token, _encoding, callback) {
      let full: boolean;
      try {
        full = consume(token);
      } catch (error) {
        sinkError = error;
        callback(error as Error);
        return;
      }
      if (!full) {
        callback();
        return;
      }
      const ending = depth === 1 && array !== null;
      flush().then(
        () => {
          if (ending) array = null;
          callback();
        },
        (error: Error) => {
          sinkError = error;
          callback(error);
        },
      );
    },
    final(callback) {
      if (depth !== 0) callback(new CommitFileFormatError('the commit file ends before its closing brace'));
      else callback();
    },
  });

  const tokens = parser.asStream({ streamValues: false });
  // pipeline() hands one stage's error on to the others: remember which stage raised each first.
  const origin = new Map<unknown, unknown>();
  for (const stage of [...stages, tokens]) stage.on('error', (error) => origin.has(error) || origin.set(error, stage));
  try {
    await pipeline([...stages, tokens, sinkStream]);
  } catch (error) {
    // The parser's own errors mean the body is not JSON; the other stages' pass as they are.
    if (origin.get(error) === tokens && error !== sinkError) throw new CommitFileFormatError(`not valid JSON: ${(error as Error).message}`);
    throw error;
  }
}
