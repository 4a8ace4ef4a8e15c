import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Words the fake model treats as meaning the same thing, so vector search can find what keywords cannot. */
const SYNONYMS: Record<string, string> = {
  automobile: 'car',
  vehicle: 'car',
  cars: 'car',
  postgresql: 'postgres',
  database: 'postgres',
  db: 'postgres',
  crash: 'failure',
  outage: 'failure',
  failures: 'failure',
};

/** One /api/chat request: the model and its user message. */
export interface ChatCall {
  model: string;
  prompt: string;
}

export interface EmbedCall {
  model: string;
  input: string[];
}

/**
 * Ollama's `/api/embed` on loopback, for tests and benchmarks: the real `ollama` client talks to
 * it over HTTP. Vectors are deterministic bags of hashed words (with a few synonyms folded), L2
 * normalised, so texts sharing words are near. It can be stopped and restarted on the same port,
 * slowed down, or made to fail.
 */
export class FakeOllama {
  /** Every /api/embed request, in order. */
  readonly calls: EmbedCall[] = [];
  /** Milliseconds to wait before answering. */
  delayMs = 0;
  /** Multiplies every vector (a model whose values are not normalised). */
  scale = 1;
  /** Answer every embed request with this HTTP status (e.g. 500) instead of vectors. */
  failWith: number | null = null;
  /**
   * Dense vectors like a real model's (every component non-zero, so they do not compress): the bag
   * of words plus a small deterministic per-text component. For benchmarks; tests use the sparse form.
   */
  dense = false;
  /** Model name → dimension. Unknown models get 404 like Ollama's "model not found". */
  readonly models = new Map<string, number>([
    ['nomic-embed-text', 768],
    ['mini-embed', 384],
  ]);

  /** Every /api/chat request, in order. */
  readonly chatCalls: ChatCall[] = [];
  /** Chat models it knows (others get 404 like Ollama's "model not found"). */
  readonly chatModels = new Set(['qwen2.5-coder:7b', 'fake-coder']);
  /** Milliseconds to wait before answering a chat request. */
  chatDelayMs = 0;
  /** Answer chat requests with this HTTP status instead. */
  chatFailWith: number | null = null;
  /** Set: every chat request waits for it before answering (a test holds the model, then lets it go). */
  chatGate: Promise<void> | null = null;
  /**
   * The chat answer's content for a prompt (default: summaries naming the prompt's first
   * backticked name, as JSON); return a non-JSON string to act as a model that ignores the format.
   */
  chatAnswer: (prompt: string) => string = (prompt) => {
    const name = /`([^`\n]{1,200})`/.exec(prompt)?.[1] ?? 'it';
    return JSON.stringify({
      technicalSummary: `${name} does its work (fake model).`,
      businessSummary: `${name} matters to users (fake model).`,
      security: { severity: 'none', summary: `${name} touches nothing sensitive.` },
    });
  };

  private server: Server | null = null;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (again) on loopback; after a stop, on the same port. */
  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops answering: connections are refused until start() (like a stopped Ollama). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The vector the fake model gives `text` (after any task prefix) with `dims` dimensions. */
  static vector(text: string, dims = 768, dense = false): number[] {
    const v = new Array<number>(dims).fill(0);
    // A real model reads the task prefix; here it must not make every text alike.
    const words =
      text
        .replace(/^search_(document|query): /, '')
        .toLowerCase()
        .match(/[a-z0-9]+/g) ?? [];
    for (const raw of words) {
      const word = Object.hasOwn(SYNONYMS, raw) ? SYNONYMS[raw]! : raw; // not `constructor` of Object.prototype
      const h = createHash('sha256').update(word).digest();
      for (let i = 0; i < 4; i++) {
        const index = h.readUInt32BE(i * 4) % dims;
        v[index]! += h[16 + i]! & 1 ? 1 : -1;
      }
    }
    if (words.length === 0) v[0] = 1;
    if (dense) {
      // Small next to one word's ±1 (its norm is about 0.3), so it barely moves distances.
      let state = createHash('sha256').update(text).digest().readUInt32BE(0);
      for (let i = 0; i < dims; i++) {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0; // an LCG: no repeating pattern to compress
        v[i]! += (state / 2 ** 32 - 0.5) / 50;
      }
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && (req.url === '/' || req.url === '/api/version'))
      return send(200, { version: '0.0.0-fake' });
    if (req.method === 'POST' && req.url === '/api/chat') return this.chat(chunks, res, send);
    if (req.method !== 'POST' || req.url !== '/api/embed') return send(404, { error: 'not found' });
    let body: { model?: string; input?: string | string[] };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'invalid JSON' });
    }
    const input = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    const model = body.model ?? '';
    this.calls.push({ model, input });
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (res.destroyed) return;
    if (this.failWith !== null) return send(this.failWith, { error: 'fake failure' });
    const dims = this.models.get(model.replace(/:latest$/, ''));
    if (dims === undefined) return send(404, { error: `model "${model}" not found, try pulling it first` });
    send(200, {
      model,
      embeddings: input.map((t) => FakeOllama.vector(t, dims, this.dense).map((x) => x * this.scale)),
      total_duration: 1,
      load_duration: 0,
      prompt_eval_count: input.length,
    });
  }

  /** Ollama's `/api/chat` (stream: false): one message of chatAnswer's content. */
  private async chat(chunks: Buffer[], res: ServerResponse, send: (status: number, body: unknown) => void) {
    let body: { model?: string; messages?: Array<{ content?: string }> };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'invalid JSON' });
    }
    const model = body.model ?? '';
    const prompt = body.messages?.at(-1)?.content ?? '';
    this.chatCalls.push({ model, prompt });
    if (this.chatDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.chatDelayMs));
    if (this.chatGate) await this.chatGate;
    if (res.destroyed) return;
    if (this.chatFailWith !== null) return send(this.chatFailWith, { error: 'fake failure' });
    if (!this.chatModels.has(model)) return send(404, { error: `model "${model}" not found, try pulling it first` });
    send(200, {
      model,
      created_at: new Date().toISOString(),
      message: { role: 'assistant', content: this.chatAnswer(prompt) },
      done: true,
      done_reason: 'stop',
      total_duration: 1,
    });
  }
}
