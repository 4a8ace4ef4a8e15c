import { execFileSync } from 'node:child_process';

/**
 * The commit a benchmark ran on, and whether the working tree differed from it (only `paths`, when
 * given: e.g. `src`, so that fresh results files do not count). Nulls outside a git checkout.
 */
export function gitInfo(
  root: string,
  options: { short?: boolean; paths?: string[] } = {},
): { commit: string | null; dirty: boolean | null } {
  try {
    const commit = execFileSync('git', ['rev-parse', ...(options.short ? ['--short'] : []), 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain', ...(options.paths ? ['--', ...options.paths] : [])], {
      cwd: root,
      encoding: 'utf8',
    });
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return { commit: null, dirty: null };
  }
}
