import { createWriteStream } from 'node:fs';
import { basename, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { AnalyzeError, analyzeRepository } from '../analyzer/analyze-repository.js';
import { commitFileStream } from '../analyzer/commit-file-json.js';
import type { AnalysisProgress } from '../analyzer/progress.js';
import type { AnalysisStats } from '../commit-file.js';
import { describeUpload, postGraphReportingFailure, serverUrlProblem, tokenFrom } from './upload.js';

export const ANALYZE_USAGE = `devstream-hub analyze <path> [--out <file>] [--upload <server>] [--repo <name>] [--token <key>]
                      [--branch <name>] [--include <glob>]… [--exclude <glob>]… [--quiet]

Builds the DevLens code graph of the repository at <path> (TypeScript, JavaScript, Python) and
writes it to --out (a .json file, .json.gz, or /dev/stdout or -) and/or uploads it to
POST <server>/api/v1/graphs (<server>: an http(s) URL such as http://127.0.0.1:7000). Honours
.gitignore; node_modules, build output (a tsconfig's outDir, .js compiled beside its .ts) and
vendored folders are skipped. --include / --exclude take gitignore-style globs (repeatable). The
repo name defaults to the folder's name. The API key: --token, or the DEVSTREAM_TOKEN environment
variable (kept out of the command line). Progress goes to stderr unless --quiet.`;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Progress lines on stderr: one per phase, and at most one a second within a phase. */
function progressPrinter(): (p: AnalysisProgress) => void {
  let phase = '';
  let last = 0;
  return (p) => {
    if (p.phase === 'listing' || p.phase === 'done') return;
    const now = performance.now();
    if (p.phase === phase && now - last < 1000 && p.filesDone !== p.filesTotal) return;
    phase = p.phase;
    last = now;
    process.stderr.write(`analyze: ${p.phase} ${p.filesDone}/${p.filesTotal} files, ${seconds(p.elapsedMs)}\n`);
  };
}

/** `devstream-hub analyze`: returns the exit code (0 done, 1 analysis or upload failed, 2 bad arguments). */
/** "3 TypeScript, 0 JavaScript, 1 Python", then Go, Rust and Java when there are any. */
function languageCounts(files: AnalysisStats['files']): string {
  const always = [`${files.typescript} TypeScript`, `${files.javascript} JavaScript`, `${files.python} Python`];
  const more = (
    [
      [files.go, 'Go'],
      [files.rust, 'Rust'],
      [files.java, 'Java'],
    ] as const
  )
    .filter(([n]) => n > 0)
    .map(([n, name]) => `${n} ${name}`);
  return [...always, ...more].join(', ');
}

export async function analyzeCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        out: { type: 'string' },
        upload: { type: 'string' },
        repo: { type: 'string' },
        token: { type: 'string' },
        branch: { type: 'string' },
        include: { type: 'string', multiple: true },
        exclude: { type: 'string', multiple: true },
        quiet: { type: 'boolean', short: 'q' },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${ANALYZE_USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1 || (!values.out && !values.upload)) {
    console.error(
      `${positionals.length !== 1 ? 'Give one repository folder.' : 'Give --out, --upload or both.'}\n\n${ANALYZE_USAGE}`,
    );
    return 2;
  }
  const badUrl = values.upload === undefined ? null : serverUrlProblem(values.upload, '--upload');
  if (badUrl) {
    console.error(badUrl);
    return 2;
  }
  const root = resolve(positionals[0]!);
  const say = (line: string) => values.quiet || process.stderr.write(`${line}\n`);

  let commit;
  try {
    commit = await analyzeRepository(root, {
      include: values.include,
      exclude: values.exclude,
      onProgress: values.quiet ? undefined : progressPrinter(),
    });
  } catch (error) {
    if (error instanceof AnalyzeError) {
      console.error(`analyze failed: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const { files } = commit.stats;
  say(
    `Analyzed ${files.total} files (${languageCounts(files)}) in ${seconds(commit.stats.durationMs)}: ` +
      `${commit.nodes.length} nodes, ${commit.edges.length} edges, commit ${commit.commitHash}`,
  );

  if (values.out) {
    // Standard output as itself: opening /dev/stdout fails when it is a socket (a child's pipe).
    const toStdout = values.out === '-' || values.out === '/dev/stdout';
    const target = toStdout ? process.stdout : createWriteStream(values.out);
    const stages = values.out.endsWith('.gz')
      ? [commitFileStream(commit), createGzip(), target]
      : [commitFileStream(commit), target];
    await pipeline(stages);
    if (!toStdout) say(`Wrote ${values.out}`);
  }
  if (values.upload) {
    const result = await postGraphReportingFailure({
      url: values.upload,
      repo: values.repo ?? basename(root),
      branch: values.branch,
      token: tokenFrom(values.token),
      body: commitFileStream(commit),
      gzipped: false,
    });
    if (!result) return 1;
    say(`Uploaded to ${values.upload}: ${describeUpload(result)}`);
  }
  return 0;
}
