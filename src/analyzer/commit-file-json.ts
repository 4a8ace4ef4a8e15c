import { Readable } from 'node:stream';
import { ELEMENT_ARRAYS, type CommitFile } from '../commit-file.js';

/** Elements per chunk: big enough to keep the chunk count low, small enough never to build one huge string. */
const BATCH = 200;

function* chunks(commit: CommitFile): Generator<string> {
  // commitHash and analyzedAt first: the server needs the hash before the first node.
  yield `{"commitHash":${JSON.stringify(commit.commitHash)},"analyzedAt":${JSON.stringify(commit.analyzedAt)}`;
  for (const key of ELEMENT_ARRAYS) {
    const items: unknown[] = commit[key];
    yield `,"${key}":[`;
    for (let i = 0; i < items.length; i += BATCH) {
      yield (
        (i > 0 ? ',' : '') +
        items
          .slice(i, i + BATCH)
          .map((item) => JSON.stringify(item))
          .join(',')
      );
    }
    yield ']';
  }
  yield `,"nodeScores":${JSON.stringify(commit.nodeScores)},"stats":${JSON.stringify(commit.stats)}}`;
}

/**
 * The commit file as JSON text, streamed element by element: a large graph is never one string
 * (the `nodes` and `allNodes` arrays alone repeat every rawCode twice).
 */
export function commitFileStream(commit: CommitFile): Readable {
  return Readable.from(chunks(commit), { objectMode: false });
}
