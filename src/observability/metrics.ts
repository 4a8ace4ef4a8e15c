import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a 1 ms lookup to a 30 s graph upload or a slow embedder. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A value read when Prometheus scrapes (a queue depth, the pool), not kept up to date by hand. */
type Reading = () => number | Promise<number>;

/** A reading gets this long; a database that does not answer leaves the gauge at its last value. */
const READING_TIMEOUT_MS = 1_000;

/**
 * The service's Prometheus metrics (GET /metrics), in a registry of their own per service instance
 * (tests run several in one process). Names are prefixed `devstream_`; process metrics (RSS, heap,
 * event-loop lag, GC) come from prom-client's defaults with the same prefix.
 */
export class Metrics {
  readonly registry = new Registry();

  /** Every HTTP request but MCP's SSE streams, by route pattern (not path: ids would explode it). */
  readonly httpRequests = latencyHistogram(
    this.registry,
    'devstream_http_request_duration_seconds',
    'HTTP requests by method, route pattern and status code',
    ['method', 'route', 'status'],
  );

  /** MCP tools/call by tool and outcome: `ok`, or the catalogue error code. */
  readonly toolCalls = latencyHistogram(
    this.registry,
    'devstream_mcp_tool_call_duration_seconds',
    'MCP tool calls by tool and outcome (ok or the error code)',
    ['tool', 'outcome'],
  );

  /**
   * MCP messages by protocol era (`2026-07-28`, `2025`) and method (from `Mcp-Method` in the modern
   * era, which the SDK checks against the body; from the body in the legacy one); methods this
   * server does not know count as `other`, so a client cannot grow the label set.
   */
  readonly mcpRequests = new Counter({
    name: 'devstream_mcp_requests_total',
    help: 'MCP messages by protocol era and method',
    labelNames: ['era', 'method'] as const,
    registers: [this.registry],
  });

  /** Embedder calls that were made, by what for (`document` stores, `query` searches) and outcome. */
  readonly embeddings = latencyHistogram(
    this.registry,
    'devstream_embedding_duration_seconds',
    'Embedder calls by kind (document, query), caller (request, worker) and outcome (ok, failed)',
    ['kind', 'caller', 'outcome'],
  );

  readonly embeddingFailures = new Counter({
    name: 'devstream_embedding_failures_total',
    help: 'Embedder calls that failed (unreachable, timed out, error, bad vectors)',
    labelNames: ['caller'] as const,
    registers: [this.registry],
  });

  /** Calls for requests not made because the embedder is known to be down (the breaker is open). */
  readonly embeddingSkipped = new Counter({
    name: 'devstream_embedding_skipped_total',
    help: 'Embedder calls skipped while it is known to be down (stored text-only or searched by keyword)',
    registers: [this.registry],
  });

  /** Claude Code hook calls by event (others: `other`) and outcome (injected, empty, skipped, failed, refused). */
  readonly hookCalls = latencyHistogram(
    this.registry,
    'devstream_hook_duration_seconds',
    'Claude Code hook calls by event and outcome (injected, empty, skipped, failed, refused)',
    ['event', 'outcome'],
  );

  /** Characters of context the hooks gave, by event. */
  readonly hookInjectedChars = new Counter({
    name: 'devstream_hook_injected_characters_total',
    help: 'Characters of additionalContext the Claude Code hooks answered with, by event',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });

  private readonly gauges = new Map<string, Gauge>();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'devstream_' });
  }

  /**
   * A gauge read at scrape time. A failed or slow reading (the database is down) keeps the last
   * value rather than failing the whole scrape. Registering the same name again replaces the reading.
   */
  gauge(name: string, help: string, read: Reading): void;
  gauge(
    name: string,
    help: string,
    read: () => Promise<Record<string, number>> | Record<string, number>,
    label: string,
  ): void;
  gauge(name: string, help: string, read: (() => unknown) | Reading, label?: string): void {
    if (this.gauges.has(name)) this.registry.removeSingleMetric(name);
    const gauge: Gauge = new Gauge({
      name,
      help,
      labelNames: label ? [label] : [],
      registers: [this.registry],
      async collect() {
        const value = await withTimeout(Promise.resolve().then(read), READING_TIMEOUT_MS).catch(() => undefined);
        if (typeof value === 'number') gauge.set(value);
        else if (value && typeof value === 'object' && label) {
          for (const [key, v] of Object.entries(value as Record<string, number>)) gauge.set({ [label]: key }, v);
        }
      },
    });
    this.gauges.set(name, gauge);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** A duration histogram in seconds on the shared latency buckets, registered in `registry`. */
function latencyHistogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [registry] });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('reading timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
