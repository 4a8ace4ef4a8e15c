/** The bounds of the commit-file reader (readCommitFile) and the errors it throws. */

/**
 * What the reader assembles at most. Sizes are characters of JSON: the characters of strings,
 * keys and numbers as decoded, plus a few per value for the punctuation around it.
 */
export interface CommitFileLimits {
  /** Containers open at once within one value: a node, an edge, a nodeScores entry or a top-level field. */
  maxDepth: number;
  /** One node, edge or nodeScores entry, in characters… */
  maxElement: number;
  /** …and in values (each container, scalar and key counts one): what its memory grows with besides its text. */
  maxElementValues: number;
  /** The top-level fields other than the element arrays and nodeScores, together (keys included), in characters… */
  maxFields: number;
  /** …and in values. */
  maxFieldValues: number;
  /** A batch is handed on once it holds this many elements, */
  batchSize: number;
  /** this many characters */
  batchChars: number;
  /** or this many values. */
  batchValues: number;
}

export class CommitFileFormatError extends Error {
  override readonly name = 'CommitFileFormatError';
}

/** A bound of CommitFileLimits passed; `field` names where (`nodes[3].metadata`, `stats`, `nodeScores.a::b`). */
export class CommitFileLimitError extends Error {
  override readonly name = 'CommitFileLimitError';
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** `16 MiB`, `64 KiB`, or a number of characters. */
export function sizeText(chars: number): string {
  if (chars >= 2 ** 20 && chars % 2 ** 20 === 0) return `${chars / 2 ** 20} MiB`;
  if (chars >= 2 ** 10 && chars % 2 ** 10 === 0) return `${chars / 2 ** 10} KiB`;
  return `${chars} characters`;
}
