import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip, gunzipSync } from 'node:zlib';
import { AnalyzeError, analyzeRepository } from '../analyzer/analyze-repository.js';
import { commitFileStream } from '../analyzer/commit-file-json.js';
import type { AnalysisProgress } from '../analyzer/progress.js';
import { knownSummaries, summarizeCommit, type KnownSummary } from '../analyzer/summarize.js';
import type { AnalysisStats } from '../commit-file.js';
import { serverSummaries } from './server-summaries.js';
import { describeUpload, postGraphReportingFailure, serverUrlProblem, tokenFrom } from './upload.js';

/** The chat model --summarize asks when OLLAMA_SUMMARY_MODEL is not set. */
export const DEFAULT_SUMMARY_MODEL = 'qwen2.5-coder:7b';

export const ANALYZE_USAGE = `devstream-hub analyze <path> [--out <file>] [--upload <server>] [--repo <name>] [--token <key>]
                      [--branch <name>] [--include <glob>]… [--exclude <glob>]… [--quiet]
                      [--summarize [--previous <commit file>] [--summary-concurrency <n>] [--summary-timeout <s>]]

Builds the DevLens code graph of the repository at <path> (TypeScript, JavaScript, Python, Go, Rust, Java) and
writes it to --out (a .json file, .json.gz, or /dev/stdout or -) and/or uploads it to
POST <server>/api/v1/graphs (<server>: an http(s) URL such as http://127.0.0.1:7000). Honours
.gitignore; node_modules, build output (a tsconfig's outDir, .js compiled beside its .ts) and
vendored folders are skipped. --include / --exclude take gitignore-style globs (repeatable). The
repo name defaults to the folder's name. The API key: --token, or the DEVSTREAM_TOKEN environment
variable (kept out of the command line). Progress goes to stderr unless --quiet.

--summarize asks a chat model (Ollama at OLLAMA_HOST, default http://127.0.0.1:11434; the model
OLLAMA_SUMMARY_MODEL, default ${DEFAULT_SUMMARY_MODEL}) for each symbol's technical and business summary and
security note. A node whose code is unchanged keeps the summaries it had without asking the model:
those of --previous (an earlier commit file of this repository, .json or .json.gz) and, with
--upload, those the server stores for the repo's latest commit. A node the model fails keeps its
doc comment; a model that is down is given up on after a few failures.`;

/** Ollama's URL from OLLAMA_HOST as Ollama itself takes it (the scheme may be left out); default local. */
function ollamaHost(env: NodeJS.ProcessEnv): string {
  const value = env.OLLAMA_HOST?.trim() || 'http://127.0.0.1:11434';
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
}

/** A positive whole number from a flag, or an error line naming it. */
function positive(value: string | undefined, flag: string, fallback: number, max: number): number | string {
  if (value === undefined) return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : `${flag} must be a whole number from 1 to ${max}`;
}

/** The LLM summaries of an earlier commit file (.json or .json.gz), by code hash; or an error line. */
async function previousSummaries(file: string): Promise<Map<string, KnownSummary> | string> {
  try {
    const bytes = await readFile(file);
    const text = (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
    const parsed = JSON.parse(text) as { nodes?: unknown; allNodes?: unknown };
    const nodes = Array.isArray(parsed.nodes) ? parsed.nodes : Array.isArray(parsed.allNodes) ? parsed.allNodes : null;
    if (!nodes) return `--previous ${file}: not a commit file (no nodes array)`;
    return knownSummaries(nodes.filter((n): n is Record<string, unknown> => typeof n === 'object' && n !== null));
  } catch (error) {
    return `--previous ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`;
  }
}

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

/** `devstream-hub analyze`: returns the exit code (0 done, 1 analysis or upload failed, 2 bad arguments). */
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
        summarize: { type: 'boolean' },
        previous: { type: 'string' },
        'summary-concurrency': { type: 'string' },
        'summary-timeout': { type: 'string' },
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
  const concurrency = positive(values['summary-concurrency'], '--summary-concurrency', 4, 64);
  const timeoutS = positive(values['summary-timeout'], '--summary-timeout', 120, 3600);
  for (const problem of [concurrency, timeoutS])
    if (typeof problem === 'string') {
      console.error(problem);
      return 2;
    }
  if (!values.summarize && values.previous !== undefined) {
    console.error('--previous is read by --summarize only: add --summarize');
    return 2;
  }
  const known = values.previous === undefined ? undefined : await previousSummaries(values.previous);
  if (typeof known === 'string') {
    console.error(known);
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
  const repo = values.repo ?? basename(root);
  const token = tokenFrom(values.token);
  if (values.summarize) {
    const model = process.env.OLLAMA_SUMMARY_MODEL?.trim() || DEFAULT_SUMMARY_MODEL;
    const host = ollamaHost(process.env);
    const reused = new Map(known ?? []);
    const sources = known ? ['--previous'] : [];
    if (values.upload) {
      // What the server already has for unchanged code: a push that changed 20 functions asks about 20.
      const stored = await serverSummaries({ url: values.upload, repo, token, nodes: commit.nodes });
      if ('problem' in stored)
        say(
          `Could not read the summaries ${values.upload} stores (${stored.problem}): the model is asked about every node`,
        );
      else {
        for (const [hash, summary] of stored.known) if (!reused.has(hash)) reused.set(hash, summary);
        sources.push(`${values.upload}${stored.commitHash ? ` (commit ${stored.commitHash.slice(0, 12)})` : ''}`);
      }
    }
    let last = 0;
    const result = await summarizeCommit(commit, {
      host,
      model,
      concurrency: concurrency as number,
      timeoutMs: (timeoutS as number) * 1000,
      known: reused,
      onProgress: (p) => {
        const now = performance.now();
        if (values.quiet || (now - last < 1000 && p.done !== p.total)) return;
        last = now;
        process.stderr.write(
          `analyze: summarizing ${p.done}/${p.total} nodes (${p.reused} reused, ${p.failed} failed)\n`,
        );
      },
    });
    say(
      `Summarized ${result.total} nodes with ${model}: ${result.answered} by the model, ${result.reused} reused${sources.length ? ` from ${sources.join(' and ')}` : ''}, ${result.failed} kept their doc comment` +
        (result.gaveUp ? ` (gave up on the model: ${result.gaveUp})` : ''),
    );
  }

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
      repo,
      branch: values.branch,
      token,
      body: commitFileStream(commit),
      gzipped: false,
    });
    if (!result) return 1;
    say(`Uploaded to ${values.upload}: ${describeUpload(result)}`);
  }
  return 0;
}
