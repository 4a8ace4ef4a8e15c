import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `git rev-parse HEAD` of the work tree at `root`; null outside git or before the first commit. */
export async function gitHead(root: string): Promise<string | null> {
  try {
    const { stdout } = await run('git', ['-C', root, 'rev-parse', '--verify', '--quiet', 'HEAD']);
    const hash = stdout.trim();
    return /^[0-9a-f]{40,64}$/.test(hash) ? hash : null;
  } catch {
    return null;
  }
}

/**
 * A commit hash for a folder without git: SHA-256 over the analyzed files' paths and contents
 * (40 hex digits, like a git hash), so the same sources always get the same hash.
 */
export async function contentHash(root: string, files: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of [...files].sort()) {
    const content = await readFile(join(root, file));
    hash.update(file).update('\0').update(createHash('sha256').update(content).digest()).update('\n');
  }
  return hash.digest('hex').slice(0, 40);
}
