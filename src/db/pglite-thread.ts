import { Worker } from 'node:worker_threads';

/** What the service uses of PGlite: PGlite itself has it, and so does PGliteThread. */
export interface PGliteHandle {
  query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
  exec(sql: string): Promise<Array<{ rows: unknown[]; affectedRows?: number }>>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  readonly closed: boolean;
}

type Reply =
  | { type: 'ready' }
  | { type: 'failed'; error: SerializedError }
  | { type: 'result'; id: number; result?: unknown; error?: SerializedError }
  | { type: 'notify'; listenId: number; payload: string };

interface SerializedError {
  message: string;
  name?: string;
  stack?: string;
  [field: string]: unknown;
}

/** The thread's error as an Error of this one, with its fields (`code`: the SQLSTATE the error mapping reads). */
function revive(serialized: SerializedError): Error {
  const { message, name, stack: _stack, ...fields } = serialized;
  const error = new Error(message);
  if (name) error.name = name;
  return Object.assign(error, fields);
}

/**
 * Embedded PGlite in a thread of its own. PGlite runs Postgres as WebAssembly, and a statement runs
 * to its end without yielding: on the main thread, the embedding worker's vector inserts (~3–25 ms
 * each) and every search held up every other request, an MCP `ping` included (measured: ping p50
 * 24 ms while the worker indexed a burst of stores). Here the statements still run one at a time,
 * but the event loop serves HTTP, MCP and the embedder's replies meanwhile. Requests are messages;
 * rows come back by structured clone (Dates, bigints and byte arrays as PGlite parsed them); an
 * error keeps its SQLSTATE `code` and the other fields the error mapping reads. The thread keeps
 * the process alive only while a request is in flight, as a socket with a query in flight would.
 */
export class PGliteThread implements PGliteHandle {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly listeners = new Map<number, (payload: string) => void>();
  private ended: Error | null = null;
  private closing = false;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => this.receive(reply));
    worker.on('error', (error) => this.end(error));
    worker.on('exit', (code) => this.end(new Error(`the PGlite thread exited (code ${code})`)));
  }

  /** Starts PGlite on `dataDir` (a folder, or `memory://`) with pgvector, in a new thread. */
  static open(dataDir: string, startParams: readonly string[]): Promise<PGliteThread> {
    const worker = new Worker(new URL('./pglite-thread.worker.mjs', import.meta.url), {
      workerData: { dataDir, startParams: [...startParams] },
      // Plain JavaScript: no TypeScript loader (tsx) in the thread.
      execArgv: [],
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the PGlite thread exited while starting (code ${code})`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (reply: Reply) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if (reply.type === 'ready') {
          worker.unref();
          resolve(new PGliteThread(worker));
        } else {
          void worker.terminate();
          reject(reply.type === 'failed' ? revive(reply.error) : new Error(`unexpected reply ${reply.type}`));
        }
      });
    });
  }

  get closed(): boolean {
    return this.ended !== null || this.closing;
  }

  query<R>(sql: string, params: unknown[] = []): Promise<{ rows: R[]; affectedRows?: number }> {
    return this.request({ kind: 'query', sql, params });
  }

  exec(sql: string): Promise<Array<{ rows: unknown[]; affectedRows?: number }>> {
    return this.request({ kind: 'exec', sql });
  }

  async listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>> {
    const listenId = this.nextId++;
    this.listeners.set(listenId, callback);
    try {
      await this.request({ kind: 'listen', channel, listenId });
    } catch (error) {
      this.listeners.delete(listenId);
      throw error;
    }
    return async () => {
      this.listeners.delete(listenId);
      if (!this.closed) await this.request({ kind: 'unlisten', listenId });
    };
  }

  /** Closes the database (a clean shutdown of its files), then the thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.request({ kind: 'close' });
    } finally {
      this.closing = true;
    }
  }

  private request<T>(message: Record<string, unknown>): Promise<T> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.closing) return Promise.reject(new Error('PGlite is closed'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ ...message, id });
    });
  }

  private receive(reply: Reply): void {
    if (reply.type === 'notify') {
      this.listeners.get(reply.listenId)?.(reply.payload);
      return;
    }
    if (reply.type !== 'result') return;
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.error) waiter.reject(revive(reply.error));
    else waiter.resolve(reply.result);
  }

  /** The thread is gone (closed, or it failed): what waits for it fails with `error`. */
  private end(error: Error): void {
    if (this.ended) return;
    this.ended = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
