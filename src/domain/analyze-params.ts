import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { AppError, validationError } from '../errors.js';

/** What an `analyze` job is given (stored as the job's params). */
export const AnalyzeParamsSchema = z.object({
  path: z.string(),
  repo: z.string(),
  branch: z.string().optional(),
  /** Also write each symbol's summaries with the server's chat model (OLLAMA_SUMMARY_MODEL). */
  summarize: z.boolean().optional(),
});
export type AnalyzeParams = z.output<typeof AnalyzeParamsSchema>;

const within = (path: string, root: string) => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/**
 * The folder `path` names, if the server may analyze it: an absolute path inside one of `roots`
 * (ANALYZE_ROOTS), before and after symbolic links are followed. Nothing outside the roots is
 * looked at, so a refusal tells nothing about what exists there.
 */
export async function analyzablePath(path: string, roots: readonly string[]): Promise<string> {
  if (roots.length === 0) {
    throw new AppError(
      'FORBIDDEN',
      'path: this server analyzes no folders (ANALYZE_ROOTS is unset). Run `devstream-hub analyze <folder> --upload <server>` where the code is.',
    );
  }
  if (!isAbsolute(path)) throw validationError([{ field: 'path', message: 'must be an absolute path on the server' }]);
  const outside = () =>
    new AppError('FORBIDDEN', `path: ${path} is outside the folders this server may analyze (ANALYZE_ROOTS)`);
  const lexical = resolve(path);
  const root = roots.find((r) => within(lexical, resolve(r)));
  if (root === undefined) throw outside();
  const real = await realpath(lexical).catch(() => null);
  if (real === null || !(await stat(real)).isDirectory())
    throw validationError([{ field: 'path', message: `${path} is not a folder on the server` }]);
  const realRoot = await realpath(root).catch(() => resolve(root));
  if (!within(real, realRoot)) throw outside();
  return real;
}
