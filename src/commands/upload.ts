import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';

export const UPLOAD_USAGE = `devstream-hub upload <file | graph folder> --url <server> [--repo <name>] [--commit <hash>] [--branch <name>] [--token <key>]

Uploads a DevLens commit file (JSON, or .json.gz) to POST <server>/api/v1/graphs, gzip-compressed.
A graph folder (~/.devlens/graphs/<graphId>, or just its graphId) uploads its newest commit file;
the repo name then defaults to the folder name of the repoPath in its meta.json.`;

interface UploadArgs {
  target: string | undefined;
  url: string | undefined;
  repo?: string;
  commit?: string;
  branch?: string;
  token?: string;
}

/** The commit file to send and the repo name a DevLens graph folder suggests. */
async function locate(target: string): Promise<{ file: string; repo: string | undefined }> {
  let path = resolve(target);
  const isDir = async (p: string) => (await stat(p).catch(() => null))?.isDirectory() ?? false;
  if (!(await stat(path).catch(() => null)) && /^[\w.-]+$/.test(target)) path = join(homedir(), '.devlens', 'graphs', target);
  if (!(await isDir(path))) return { file: path, repo: undefined };
  let repo: string | undefined;
  const meta = await readFile(join(path, 'meta.json'), 'utf8').then(JSON.parse, () => null);
  if (meta && typeof meta.repoPath === 'string') repo = basename(meta.repoPath);
  const dir = (await isDir(join(path, 'commits'))) ? join(path, 'commits') : path;
  const files = (await readdir(dir)).filter((f) => /\.json(\.gz)?$/.test(f) && !f.includes('.search.') && f !== 'meta.json');
  if (files.length === 0) throw new Error(`no commit file in ${dir}`);
  const dated = await Promise.all(files.map(async (f) => ({ f, at: (await stat(join(dir, f))).mtimeMs })));
  dated.sort((a, b) => b.at - a.at);
  return { file: join(dir, dated[0]!.f), repo };
}

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

/**
 * Sends a DevLens commit file to `POST <url>/api/v1/graphs` (gzip, streamed). Resolves with the
 * server's answer; rejects only when the server cannot be reached.
 */
export async function postGraph(options: PostGraphOptions): Promise<PostGraphResult> {
  const query = new URLSearchParams({ repo: options.repo });
  if (options.commit) query.set('commit', options.commit);
  if (options.branch) query.set('branch', options.branch);
  const endpoint = new URL(`/api/v1/graphs?${query}`, options.url);
  const body = options.gzipped ? options.body : options.body.pipe(createGzip());
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(endpoint, {
    method: 'POST',
    headers,
    body: Readable.toWeb(body) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const text = await response.text();
  let answer: any = null;
  try {
    answer = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (!response.ok) {
    return { ok: false, status: response.status, message: answer?.error ? `${answer.error.code}: ${answer.error.message}` : text.slice(0, 500) };
  }
  return { ok: true, repo: answer.repo, graphId: answer.graphId, commitHash: answer.commitHash, nodes: answer.nodes, edges: answer.edges };
}

/** `repo ky (graph 096f…), commit 3419…, 192 nodes, 230 edges` */
export function describeUpload(result: Extract<PostGraphResult, { ok: true }>): string {
  return `repo ${result.repo} (graph ${result.graphId}), commit ${result.commitHash}, ${result.nodes} nodes, ${result.edges} edges`;
}

/** `devstream-hub upload`: returns the exit code (0 uploaded, 1 refused by the server, 2 bad arguments). */
export async function upload(args: UploadArgs): Promise<number> {
  if (!args.target || !args.url) {
    console.error(UPLOAD_USAGE);
    return 2;
  }
  const { file, repo: suggested } = await locate(args.target);
  const repo = args.repo ?? suggested;
  if (!repo) {
    console.error('--repo is required (the repository name the graph is found by)');
    return 2;
  }
  const result = await postGraph({
    url: args.url,
    repo,
    commit: args.commit,
    branch: args.branch,
    token: args.token,
    body: createReadStream(file),
    gzipped: await isGzip(file),
  });
  if (!result.ok) {
    console.error(`upload failed: ${result.status} ${result.message}`);
    return 1;
  }
  console.log(`Uploaded ${basename(file)} to ${args.url}: ${describeUpload(result)}`);
  return 0;
}
