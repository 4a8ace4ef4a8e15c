import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';

export const UPLOAD_USAGE = `devstream-hub upload <file | graph folder> --url <server> [--repo <name>] [--commit <hash>] [--branch <name>] [--token <key>]

Uploads a DevLens commit file (JSON, or .json.gz) to POST <server>/api/v1/graphs, gzip-compressed;
<server> is an http(s) URL such as http://127.0.0.1:7000. A graph folder (~/.devlens/graphs/<graphId>,
or just its graphId) uploads its newest commit file. --repo defaults to the folder name of the
repoPath in the graph folder's meta.json (for a commit file in a graph folder too), else to the name
of the folder the commit file is in (analyze names a repository after its folder the same way).
The API key: --token, or the DEVSTREAM_TOKEN environment variable (kept out of the command line).`;

interface UploadArgs {
  target: string | undefined;
  url: string | undefined;
  repo?: string | undefined;
  commit?: string | undefined;
  branch?: string | undefined;
  token?: string | undefined;
}

/** The API key to send: `--token`, else DEVSTREAM_TOKEN (which keeps it out of the command line and shell history). */
export function tokenFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return option || env.DEVSTREAM_TOKEN || undefined;
}

/**
 * Why `value` cannot be the server's URL (for the option `flag`), or null when it can: an http(s)
 * URL. `127.0.0.1:7000` parses as a URL of the scheme `127.0.0.1:`, so the scheme is checked too.
 */
export function serverUrlProblem(value: string, flag: string): string | null {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    /* not a URL */
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname) return null;
  const schemeless = !/^[a-z][a-z\d+.-]*:\/\//i.test(value);
  const example = schemeless && /^[\w.-]+(:\d+)?(\/.*)?$/.test(value) ? `http://${value}` : 'http://127.0.0.1:7000';
  const why = schemeless
    ? 'has no scheme'
    : url && url.protocol !== 'http:' && url.protocol !== 'https:'
      ? `is ${url.protocol.slice(0, -1)}, not http(s)`
      : 'is not a valid URL';
  return `${flag} must be an http(s) URL, such as ${example} (${JSON.stringify(value)} ${why})`;
}

/** The last segment of a path written on any system (`/home/dev/ky`, `C:\\src\\ky`, `ky/`). */
const lastSegment = (path: string) => path.split(/[\\/]/).filter(Boolean).pop();

/** The repo name a DevLens graph folder's meta.json gives: its repoPath's folder name. */
async function metaRepo(folder: string): Promise<string | undefined> {
  const meta = await readFile(join(folder, 'meta.json'), 'utf8').then(JSON.parse, () => null);
  return meta && typeof meta.repoPath === 'string' ? lastSegment(meta.repoPath) : undefined;
}

/** Where the default repo name came from, said when it is used. */
type RepoSource = 'meta.json' | 'folder';

/**
 * The commit file to send and the repo name its location suggests: a DevLens graph folder's
 * meta.json (the folder given, or the graph folder a commit file lies in: beside it, or above its
 * `commits/` folder), else the name of the folder the commit file is in.
 */
async function locate(target: string): Promise<{ file: string; repo: { name: string; from: RepoSource } | undefined }> {
  let path = resolve(target);
  const isDir = async (p: string) => (await stat(p).catch(() => null))?.isDirectory() ?? false;
  if (!(await stat(path).catch(() => null)) && /^[\w.-]+$/.test(target)) {
    const graph = join(homedir(), '.devlens', 'graphs', target);
    if (await isDir(graph)) path = graph;
  }
  const fromMeta = async (folder: string) => {
    const name = await metaRepo(folder);
    return name ? { name, from: 'meta.json' as const } : undefined;
  };
  if (!(await isDir(path))) {
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) throw new UploadInputError(`${target}: no such file or folder`);
    const folder = dirname(path);
    const folderName = basename(folder);
    const repo =
      (await fromMeta(folder)) ??
      (folderName === 'commits' ? await fromMeta(dirname(folder)) : undefined) ??
      // A DevLens graph folder's commits/ names no repository.
      (folderName && folderName !== 'commits' ? { name: folderName, from: 'folder' as const } : undefined);
    return { file: path, repo };
  }
  const dir = (await isDir(join(path, 'commits'))) ? join(path, 'commits') : path;
  const files = (await readdir(dir)).filter(
    (f) => /\.json(\.gz)?$/.test(f) && !f.includes('.search.') && f !== 'meta.json',
  );
  if (files.length === 0) throw new UploadInputError(`no commit file in ${dir}`);
  const dated = await Promise.all(files.map(async (f) => ({ f, at: (await stat(join(dir, f))).mtimeMs })));
  dated.sort((a, b) => b.at - a.at);
  return { file: join(dir, dated[0]!.f), repo: await fromMeta(path) };
}

/** A file or folder to upload that is not there: the user's mistake (exit code 2). */
class UploadInputError extends Error {}

async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

export interface PostGraphOptions {
  /** The server's base URL. */
  url: string;
  repo: string;
  commit?: string;
  branch?: string;
  /** API key, sent as `Authorization: Bearer …`. */
  token?: string;
  /** The commit file's bytes: gzip-compressed when `gzipped`, else JSON (compressed on the way). */
  body: Readable;
  gzipped: boolean;
}

/** The server's answer to an upload: the stored graph, or why it refused. */
export type PostGraphResult =
  | { ok: true; repo: string; graphId: string; commitHash: string; nodes: number; edges: number }
  | { ok: false; status: number; message: string };

/** The server could not be reached, or the connection broke off before it answered. */
export class UploadConnectionError extends Error {
  override readonly name = 'UploadConnectionError';
}

/** What went wrong on the way, in words, from the cause's code (`connection refused, ECONNREFUSED`). */
function networkReason(error: unknown): { reason: string; connecting: boolean } {
  const cause = (error as { cause?: unknown }).cause ?? error;
  const c = cause as { code?: string; message?: string; errors?: Array<{ code?: string }> };
  // Both addresses of `localhost` refused: an AggregateError whose errors carry the code.
  const code = c.code ?? c.errors?.find((e) => e.code)?.code;
  const words: Record<string, [string, boolean]> = {
    ECONNREFUSED: ['connection refused', true],
    ENOTFOUND: ['host not found', true],
    EAI_AGAIN: ['name lookup failed', true],
    ETIMEDOUT: ['timed out', true],
    UND_ERR_CONNECT_TIMEOUT: ['timed out connecting', true],
    EHOSTUNREACH: ['host unreachable', true],
    ENETUNREACH: ['network unreachable', true],
    ECONNRESET: ['connection reset', false],
    EPIPE: ['the server closed the connection', false],
    UND_ERR_SOCKET: ['the server closed the connection', false],
  };
  const known = code ? words[code] : undefined;
  if (known) return { reason: `${known[0]}, ${code}`, connecting: known[1] };
  const message = c.message ?? String(cause);
  // Certificate problems (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ERR_TLS_CERT_ALTNAME_INVALID…).
  if (code && /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO/.test(code))
    return { reason: `TLS: ${message}, ${code}`, connecting: true };
  return { reason: code ? `${message}, ${code}` : message, connecting: false };
}

/**
 * Sends a DevLens commit file to `POST <url>/api/v1/graphs` (gzip, streamed). Resolves with the
 * server's answer; rejects with an UploadConnectionError naming the URL and the cause when the
 * server cannot be reached (or the connection breaks off before it answers).
 */
export async function postGraph(options: PostGraphOptions): Promise<PostGraphResult> {
  const query = new URLSearchParams({ repo: options.repo });
  if (options.commit) query.set('commit', options.commit);
  if (options.branch) query.set('branch', options.branch);
  // Relative to the server URL's own path: a hub behind a proxy at https://host/hub gets /hub/api/v1/graphs.
  const base = new URL(options.url);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const endpoint = new URL(`api/v1/graphs?${query}`, base);
  const body = options.gzipped ? options.body : options.body.pipe(createGzip());
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: Readable.toWeb(body) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    text = await response.text();
  } catch (error) {
    const { reason, connecting } = networkReason(error);
    throw new UploadConnectionError(
      connecting
        ? `could not reach ${options.url} (${reason})`
        : `the connection to ${options.url} broke off (${reason})`,
    );
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the server's JSON answer, read as the upload API documents it
  let answer: any = null;
  try {
    answer = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (!response.ok) {
    return {
      ok: false,
      status: response.status,
      message: answer?.error ? `${answer.error.code}: ${answer.error.message}` : text.slice(0, 500),
    };
  }
  return {
    ok: true,
    repo: answer.repo,
    graphId: answer.graphId,
    commitHash: answer.commitHash,
    nodes: answer.nodes,
    edges: answer.edges,
  };
}

/**
 * postGraph for the CLI: an upload the server refused or that did not reach it is printed to
 * stderr as `upload failed: …` and resolves null (the command exits 1); other errors propagate.
 */
export async function postGraphReportingFailure(
  options: PostGraphOptions,
): Promise<Extract<PostGraphResult, { ok: true }> | null> {
  let result;
  try {
    result = await postGraph(options);
  } catch (error) {
    if (error instanceof UploadConnectionError) {
      console.error(`upload failed: ${error.message}`);
      return null;
    }
    throw error;
  }
  if (!result.ok) {
    console.error(`upload failed: ${result.status} ${result.message}`);
    return null;
  }
  return result;
}

/** `repo ky (graph 096f…), commit 3419…, 192 nodes, 230 edges` */
export function describeUpload(result: Extract<PostGraphResult, { ok: true }>): string {
  return `repo ${result.repo} (graph ${result.graphId}), commit ${result.commitHash}, ${result.nodes} nodes, ${result.edges} edges`;
}

/** `devstream-hub upload`: returns the exit code (0 uploaded, 1 refused by the server or not reached, 2 bad arguments). */
export async function upload(args: UploadArgs): Promise<number> {
  if (!args.target || !args.url) {
    console.error(UPLOAD_USAGE);
    return 2;
  }
  const badUrl = serverUrlProblem(args.url, '--url');
  if (badUrl) {
    console.error(badUrl);
    return 2;
  }
  let located;
  try {
    located = await locate(args.target);
  } catch (error) {
    if (error instanceof UploadInputError) {
      console.error(`upload: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const { file, repo: suggested } = located;
  const repo = args.repo ?? suggested?.name;
  if (!repo) {
    console.error(
      `--repo is required: ${args.target} has no meta.json naming the repository (the name the graph is found by)`,
    );
    return 2;
  }
  if (!args.repo && suggested?.from === 'folder') {
    console.error(`upload: no --repo given: naming the repository "${repo}", after the folder ${basename(file)} is in`);
  }
  const result = await postGraphReportingFailure({
    url: args.url,
    repo,
    commit: args.commit,
    branch: args.branch,
    token: tokenFrom(args.token),
    body: createReadStream(file),
    gzipped: await isGzip(file),
  });
  if (!result) return 1;
  console.log(`Uploaded ${basename(file)} to ${args.url}: ${describeUpload(result)}`);
  return 0;
}
