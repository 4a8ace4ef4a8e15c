import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/**
 * Scratch folders for the current suite: each call makes a new one under the OS's temp folder
 * (`dsh-<prefix>-…`); all are removed after the suite.
 */
export function tempDirs(prefix: string): () => Promise<string> {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), `dsh-${prefix}-`));
    dirs.push(dir);
    return dir;
  };
}
