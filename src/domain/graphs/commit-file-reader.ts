/*
 * One concept, hence the length: the streaming reader of a commit file, a token-level state
 * machine (top level, element arrays, entry objects) whose bounds are checked token by token.
 * Its bounds and errors are in commit-file-limits.ts, the string assembly in text-pieces.ts.
 */
import { StringDecoder } from 'node:string_decoder';
import { Writable, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Assembler from 'stream-json/assembler.js';
import { jsonParser, type Token } from 'stream-json/parser.js';
import { ELEMENT_ARRAYS, ENTRY_OBJECTS, holdsNodes, type ElementArray } from '../../commit-file.js';
import { CommitFileFormatError, CommitFileLimitError, sizeText, type CommitFileLimits } from './commit-file-limits.js';
import { TextPieces } from './text-pieces.js';

const ELEMENT_ARRAY_SET = new Set<string>(ELEMENT_ARRAYS);
const ENTRY_OBJECT_SET = new Set<string>(ENTRY_OBJECTS);
/** `nodes, edges, allNodes, allEdges and nodeScores`: what the top-level field bounds leave out. */
const STREAMED = `${ELEMENT_ARRAYS.join(', ')} and ${ENTRY_OBJECTS.join(', ')}`;

export interface CommitFileSink {
  /**
   * A batch of elements of one array, in file order; `start` is the first one's index in that
   * array. The reader waits for the returned promise before it reads on (backpressure).
   */
  elements(array: ElementArray, start: number, values: unknown[]): Promise<void>;
  /** One of the element arrays has ended (after its last batch); `count`: its elements. */
  arrayEnd(array: ElementArray, count: number): void;
  /** A batch of the `[key, value]` entries of `nodeScores` (when it is an object), in file order. */
  entries(field: string, start: number, entries: Array<[string, unknown]>): Promise<void>;
  /** Every other top-level field (commitHash, analyzedAt, stats, fields we do not model…), assembled whole. */
  field(key: string, value: unknown): void;
}

type UnitKind = 'element' | 'entry' | 'field';

/** One value being assembled: an element, an entry's value, or a top-level field. */
interface Unit {
  kind: UnitKind;
  /** `nodes[3]`, `nodeScores.a::b`, `stats`. */
  name: string;
  /** Characters and values it may still reach. */
  budget: number;
  valueBudget: number;
  chars: number;
  values: number;
  /** Containers open inside it; 0 before its first token and after its last. */
  depth: number;
  /** The step inside the root container now being read (`.metadata`, `[2]`), for naming it. */
  step: string;
  /** The root is an array: the index of its next element. */
  rootIndex: number;
  rootIsArray: boolean;
  assembler: Assembler | null;
  done: boolean;
  value: unknown;
}

/**
 * Reads a DevLens commit file from a byte stream (the source, then any transforms such as gunzip)
 * without holding it whole: each element of the node and edge arrays, and each entry of
 * `nodeScores`, is assembled on its own and handed over in batches; memory stays at one batch
 * however large the file. Every bound of `limits` is checked as the text is tokenised, so input
 * past one (nesting opened and never closed, a string of hundreds of MB, an unknown field of
 * millions of values) is refused at the token that passes it, before it is built: the tokeniser
 * holds at most one input chunk beyond a bound.
 *
 * Throws CommitFileFormatError when the text is not JSON or not an object at the top,
 * CommitFileLimitError when a bound passes; errors of the stages and of the sink pass as they are.
 */
export async function readCommitFile(
  stages: Array<Readable | Duplex>,
  sink: CommitFileSink,
  limits: CommitFileLimits,
): Promise<void> {
  // Strings and keys arrive as pieces (the tokeniser keeps none of them), so that their size is
  // checked before they are whole and their text is joined here, flat; numbers are packed by the
  // tokeniser too, their pieces counted.
  const tokenize = jsonParser({ packKeys: false, packStrings: false, packNumbers: true, streamNumbers: true });
  const text = new TextPieces();
  const decoder = new StringDecoder('utf8');
  let started = false;

  let top: 'start' | 'keys' | 'done' = 'start';
  let mode: 'top' | 'array' | 'entries' = 'top';
  let key = ''; // the top-level key whose value is read
  let array: ElementArray = 'nodes'; // in 'array' mode
  let index = 0; // elements (entries) read of the current array (object)
  let batch: unknown[] = [];
  let batchChars = 0;
  let batchStart = 0;
  let fieldsUsed = 0; // characters of the top-level fields (keys included)
  let fieldValuesUsed = 0;
  let batchValues = 0;
  let entryKey = ''; // in 'entries' mode: the key of the entry being read
  let entryKeyChars = 0;
  let unit: Unit | null = null;

  const newUnit = (kind: UnitKind, name: string, budget: number, valueBudget: number): Unit => ({
    kind,
    name,
    budget,
    valueBudget,
    chars: 0,
    values: 0,
    depth: 0,
    step: '',
    rootIndex: 0,
    rootIsArray: false,
    assembler: null,
    done: false,
    value: undefined,
  });

  const tooLarge = (u: Unit, inValues: boolean): CommitFileLimitError => {
    const field = u.name + u.step;
    if (u.kind === 'field') {
      const most = inValues
        ? `${limits.maxFieldValues.toLocaleString('en')} values (keys included)`
        : `${sizeText(limits.maxFields)} of JSON`;
      return new CommitFileLimitError(
        field,
        `the top-level fields other than ${STREAMED} may hold at most ${most} together`,
      );
    }
    const what = u.kind === 'entry' ? 'a nodeScores entry' : holdsNodes(array) ? 'a node' : 'an edge';
    if (inValues)
      return new CommitFileLimitError(
        field,
        `holds more than ${limits.maxElementValues.toLocaleString('en')} values (keys included), the most ${what} may hold`,
      );
    return new CommitFileLimitError(
      field,
      `larger than ${sizeText(limits.maxElement)} of JSON, the most ${what} may hold`,
    );
  };

  /** Counts `n` characters into the unit; refuses past its budget. */
  const grow = (u: Unit, n: number) => {
    u.chars += n;
    if (u.chars > u.budget) throw tooLarge(u, false);
  };

  /** A value (container or scalar) or a key begins inside the unit, with `chars` of punctuation. */
  const counted = (u: Unit, chars: number) => {
    if (++u.values > u.valueBudget) throw tooLarge(u, true);
    grow(u, chars);
  };

  /** A value (container or scalar) begins inside the unit. */
  const valueStarts = (u: Unit, chars: number) => {
    if (u.depth === 1 && u.rootIsArray) u.step = `[${u.rootIndex++}]`;
    counted(u, chars);
  };

  /** A scalar is complete: the unit's root, or a value inside a container. */
  const scalar = (u: Unit, value: unknown, token: Token) => {
    if (u.depth === 0) {
      u.value = value;
      u.done = true;
    } else u.assembler!.consume(token);
  };

  /** Feeds one token to the unit being assembled. */
  const feed = (u: Unit, token: Token) => {
    switch (token.name) {
      case 'stringChunk':
        grow(u, token.value.length);
        text.add(token.value);
        return;
      case 'startObject':
      case 'startArray':
        valueStarts(u, 3);
        if (u.depth === 0) {
          u.assembler = new Assembler();
          u.rootIsArray = token.name === 'startArray';
        }
        if (++u.depth > limits.maxDepth)
          throw new CommitFileLimitError(u.name + u.step, `must be nested at most ${limits.maxDepth} levels deep`);
        u.assembler!.consume(token);
        return;
      case 'endObject':
      case 'endArray':
        u.assembler!.consume(token);
        if (--u.depth === 0) {
          u.value = u.assembler!.current;
          u.done = true;
        }
        return;
      case 'startKey':
        if (u.depth === 1) u.step = '';
        counted(u, 3);
        text.start();
        return;
      case 'endKey': {
        const value = text.end();
        if (u.depth === 1) u.step = `.${value}`;
        u.assembler!.consume({ name: 'keyValue', value });
        return;
      }
      case 'startString':
        valueStarts(u, 3);
        text.start();
        return;
      case 'endString': {
        const value = text.end();
        scalar(u, value, { name: 'stringValue', value });
        return;
      }
      case 'startNumber':
        valueStarts(u, 1);
        return;
      case 'numberChunk':
        grow(u, token.value.length);
        return;
      case 'numberValue':
        scalar(u, parseFloat(token.value), token);
        return;
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        valueStarts(u, 5);
        scalar(u, token.value, token);
        return;
      default:
        return; // endNumber
    }
  };

  /** Hands the batch on (elements or entries); the reader waits for it. */
  const flush = async (into: 'array' | 'entries', arrayName: ElementArray, field: string) => {
    if (batch.length === 0) return;
    const values = batch;
    const start = batchStart;
    batch = [];
    batchChars = 0;
    batchValues = 0;
    batchStart = index;
    if (into === 'array') await sink.elements(arrayName, start, values);
    else await sink.entries(field, start, values as Array<[string, unknown]>);
  };

  /** A unit is complete: hand it on; returns the work to wait for before the next token, if any. */
  const complete = (done: Unit): (() => Promise<void>) | null => {
    unit = null;
    if (done.kind === 'field') {
      fieldsUsed += done.chars;
      fieldValuesUsed += done.values;
      sink.field(key, done.value);
      return null;
    }
    if (done.kind === 'entry') {
      batch.push([entryKey, done.value]);
      batchChars += done.chars + entryKeyChars;
      batchValues += done.values + 1;
    } else {
      batch.push(done.value);
      batchChars += done.chars;
      batchValues += done.values;
    }
    index++;
    if (batch.length < limits.batchSize && batchChars < limits.batchChars && batchValues < limits.batchValues)
      return null;
    const into = mode === 'array' ? 'array' : 'entries';
    const arrayName = array;
    const field = key;
    return () => flush(into, arrayName, field);
  };

  /**
   * A token outside any unit: the structure of the file. Starts a unit when a value begins that
   * is assembled (the caller then feeds it the token); returns the work to wait for, if any.
   */
  const route = (token: Token): (() => Promise<void>) | null => {
    if (top === 'start') {
      if (token.name !== 'startObject') throw new CommitFileFormatError('a commit file is a JSON object');
      top = 'keys';
      return null;
    }
    if (mode === 'array') {
      if (token.name === 'endArray') {
        mode = 'top';
        const arrayName = array;
        const count = index;
        return async () => {
          await flush('array', arrayName, arrayName);
          sink.arrayEnd(arrayName, count);
        };
      }
      unit = newUnit('element', `${array}[${index}]`, limits.maxElement, limits.maxElementValues);
      return null;
    }
    if (mode === 'entries') {
      switch (token.name) {
        case 'endObject': {
          mode = 'top';
          const field = key;
          return () => flush('entries', 'nodes', field);
        }
        case 'startKey':
          entryKeyChars = 3;
          text.start();
          return null;
        case 'stringChunk':
          entryKeyChars += token.value.length;
          if (entryKeyChars > limits.maxElement)
            throw new CommitFileLimitError(key, `has a key longer than ${sizeText(limits.maxElement)}`);
          text.add(token.value);
          return null;
        case 'endKey':
          entryKey = text.end();
          return null;
        default:
          unit = newUnit('entry', `${key}.${entryKey}`, limits.maxElement - entryKeyChars, limits.maxElementValues);
          return null;
      }
    }
    // The top-level object: its keys, and the values that begin after them.
    switch (token.name) {
      case 'startKey':
      case 'stringChunk':
        fieldsUsed += token.name === 'startKey' ? 3 : token.value.length;
        if (fieldsUsed > limits.maxFields) {
          throw new CommitFileLimitError(
            '(body)',
            `the top-level keys and the fields other than ${STREAMED} may hold at most ${sizeText(limits.maxFields)} of JSON together`,
          );
        }
        if (token.name === 'startKey') text.start();
        else text.add(token.value);
        return null;
      case 'endKey':
        key = text.end();
        return null;
      case 'endObject':
        top = 'done';
        return null;
      default:
        break;
    }
    if (token.name === 'startArray' && ELEMENT_ARRAY_SET.has(key)) {
      mode = 'array';
      array = key as ElementArray;
      index = 0;
      batchStart = 0;
      return null;
    }
    if (token.name === 'startObject' && ENTRY_OBJECT_SET.has(key)) {
      mode = 'entries';
      index = 0;
      batchStart = 0;
      return null;
    }
    unit = newUnit('field', key, limits.maxFields - fieldsUsed, limits.maxFieldValues - fieldValuesUsed);
    return null;
  };

  /** Consumes one token; returns the work to wait for before the next one, if any. */
  const consume = (token: Token): (() => Promise<void>) | null => {
    if (unit === null) {
      const wait = route(token);
      if (unit === null) return wait;
    }
    const current: Unit = unit;
    feed(current, token);
    return current.done ? complete(current) : null;
  };

  const run = async (text: string) => {
    if (!started && text !== '') {
      started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte-order mark (RFC 8259 §8.1 lets a parser drop it)
    }
    if (text === '') return;
    let out: ReturnType<typeof tokenize>;
    try {
      out = tokenize(text);
    } catch (error) {
      throw new CommitFileFormatError(`not valid JSON: ${(error as Error).message}`);
    }
    if (typeof out === 'symbol') return;
    for (const token of out.values) {
      const wait = consume(token);
      if (wait) await wait();
    }
  };

  const sinkStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      run(decoder.write(chunk)).then(() => callback(), callback);
    },
    final(callback) {
      const ended = () => {
        if (top === 'done') return null;
        return new CommitFileFormatError(
          top === 'start'
            ? 'the body is empty: a commit file is a JSON object'
            : 'the commit file ends before its closing brace',
        );
      };
      run(decoder.end()).then(() => callback(ended()), callback);
    },
  });

  await pipeline([...stages, sinkStream]);
}
