import { Ollama } from 'ollama';
import { checkVectors, EmbeddingError, taskPrefix, type EmbeddingProvider } from './provider.js';

export interface OllamaOptions {
  /** e.g. http://127.0.0.1:11434 */
  host: string;
  model: string;
  /** Per request, from sending to the last byte of the answer. */
  timeoutMs: number;
}

/** Embeddings from Ollama's `/api/embed`, one batched request per call, through the `ollama` client. */
export function ollamaProvider(options: OllamaOptions): EmbeddingProvider {
  const { host, model, timeoutMs } = options;
  const client = new Ollama({
    host,
    // The client has no timeout of its own: every request carries one.
    fetch: (input, init) => {
      const timeout = AbortSignal.timeout(timeoutMs);
      return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout });
    },
  });
  return {
    name: 'ollama',
    model,
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      const prefix = taskPrefix(model, kind);
      try {
        const response = await client.embed({ model, input: texts.map((t) => prefix + t), truncate: true });
        return checkVectors(response.embeddings, texts.length);
      } catch (error) {
        throw new EmbeddingError(describe(error, host, model, timeoutMs), { cause: error });
      }
    },
  };
}

function describe(error: unknown, host: string, model: string, timeoutMs: number): string {
  if (error instanceof EmbeddingError) return error.message;
  const err = error as { name?: string; message?: string; status_code?: number; cause?: { code?: string } };
  if (err.name === 'TimeoutError') return `Ollama at ${host} did not answer within ${timeoutMs} ms`;
  if (err.name === 'ResponseError')
    return `Ollama answered ${err.status_code ?? 'an error'} for model "${model}": ${err.message}`;
  const code = err.cause?.code;
  if (code) return `Ollama is unreachable at ${host} (${code})`;
  return `Ollama request failed: ${err.message ?? String(error)}`;
}
