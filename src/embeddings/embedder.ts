import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { EmbeddingError, type EmbedKind, type EmbeddingProvider } from './provider.js';

export type EmbedAttempt =
  { ok: true; vectors: number[][]; model: string; dims: number } | { ok: false; reason: string };

export interface EmbedderStatus {
  provider: 'ollama' | 'none';
  model: string | null;
  /** `down`: the last call failed and calls from requests are skipped until `retry_at`. */
  state: 'disabled' | 'unknown' | 'up' | 'down';
  last_error: string | null;
  retry_at: string | null;
}

const MIN_COOLDOWN_MS = 1_000;
const MAX_COOLDOWN_MS = 60_000;

/**
 * The provider as requests and the worker use it, with a circuit breaker: after a failure, calls
 * made for requests are skipped (the memory is stored text-only and queued; the search runs
 * keyword-only) until a cooldown passes, doubling up to a minute while the embedder stays down.
 * When it has passed, one request's call probes the embedder (half-open) while the others keep
 * skipping, so a hanging Ollama holds up one request per cooldown, not all of them. A store or
 * search never waits on an embedder already known to be down.
 */
export class Embedder {
  private state: EmbedderStatus['state'];
  private lastError: string | null = null;
  private skipUntil = 0;
  private cooldownMs = MIN_COOLDOWN_MS;
  /** A request's call is probing the embedder that was down. */
  private probing = false;
  private readonly recoveredListeners: Array<() => void> = [];

  constructor(
    readonly provider: EmbeddingProvider,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    private readonly metrics?: Metrics,
  ) {
    this.state = provider.name === 'none' ? 'disabled' : 'unknown';
  }

  /** The model new vectors come from; null when embeddings are off. */
  get model(): string | null {
    return this.provider.model;
  }

  get enabled(): boolean {
    return this.state !== 'disabled';
  }

  status(): EmbedderStatus {
    return {
      provider: this.provider.name,
      model: this.provider.model,
      state: this.state,
      last_error: this.lastError,
      retry_at: this.state === 'down' ? new Date(this.skipUntil).toISOString() : null,
    };
  }

  /** Called whenever the embedder answers again after failing (the worker then retries at once). */
  onRecovered(listener: () => void): void {
    this.recoveredListeners.push(listener);
  }

  /**
   * Embeds for a request. Never throws: a failure (or an embedder known to be down) is a reason the
   * caller reports while it carries on without vectors. `background` calls (the worker) ignore
   * the cooldown, so they are what probes a dead embedder.
   */
  async tryEmbed(texts: string[], kind: EmbedKind, options: { background?: boolean } = {}): Promise<EmbedAttempt> {
    const model = this.provider.model;
    if (this.state === 'disabled' || model === null)
      return { ok: false, reason: 'embeddings are disabled (EMBEDDING_PROVIDER=none)' };
    const probe = !options.background && this.state === 'down';
    if (probe && (this.probing || Date.now() < this.skipUntil)) {
      this.metrics?.embeddingSkipped.inc();
      return { ok: false, reason: `${this.lastError ?? 'embedder unavailable'} (retrying in the background)` };
    }
    if (probe) this.probing = true;
    const caller = options.background ? 'worker' : 'request';
    const timer = this.metrics?.embeddings.startTimer({ kind, caller });
    try {
      const vectors = await this.provider.embed(texts, kind);
      timer?.({ outcome: 'ok' });
      this.succeeded();
      return { ok: true, vectors, model, dims: vectors[0]?.length ?? 0 };
    } catch (error) {
      timer?.({ outcome: 'failed' });
      this.metrics?.embeddingFailures.inc({ caller });
      const reason = error instanceof EmbeddingError ? error.message : `embedding failed: ${String(error)}`;
      this.failed(reason);
      return { ok: false, reason };
    } finally {
      if (probe) this.probing = false;
    }
  }

  private succeeded(): void {
    const wasDown = this.state === 'down';
    this.state = 'up';
    this.lastError = null;
    this.cooldownMs = MIN_COOLDOWN_MS;
    this.skipUntil = 0;
    if (wasDown) {
      this.log.info({ model: this.provider.model }, 'embedder is answering again');
      for (const listener of this.recoveredListeners) listener();
    }
  }

  private failed(reason: string): void {
    if (this.state !== 'down') {
      this.log.warn(
        { model: this.provider.model, reason },
        'embedder failed: storing text-only and searching by keyword until it answers',
      );
    } else {
      this.cooldownMs = Math.min(this.cooldownMs * 2, MAX_COOLDOWN_MS);
    }
    this.state = 'down';
    this.lastError = reason;
    this.skipUntil = Date.now() + this.cooldownMs;
  }
}
