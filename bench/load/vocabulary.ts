/** The words the load's generated memories, queries, tasks and code questions are made of. */

export const TOPICS = [
  'session cache',
  'retry backoff',
  'rate limiter',
  'connection pool',
  'schema migration',
  'feature flag',
  'audit log',
  'token refresh',
  'search index',
  'payment webhook',
  'queue consumer',
  'circuit breaker',
  'tenant isolation',
  'blue green deploy',
  'read replica',
  'vector index',
  'embedding worker',
  'graceful shutdown',
  'health probe',
  'request tracing',
  'error budget',
  'load balancer',
  'sticky sessions',
  'cold start',
  'memory leak',
  'deadlock',
  'slow query',
  'cursor pagination',
  'idempotency key',
  'dead letter queue',
  'config reload',
  'secret rotation',
];
export const CLAUSES = [
  'we decided to keep it behind a feature flag until the rollout review',
  'the root cause was an unbounded buffer growing under load',
  'postgres restarts must not lose acknowledged writes',
  'use exponential backoff with jitter and a ceiling of one minute',
  'the client retries on 503 but never on 400',
  'measure p95 before and after, on a quiet machine',
  'the index is rebuilt concurrently so writers never block',
  'documented the trade-off in the design notes',
  'tests cover empty input, unicode names and concurrent writers',
  'keep the public interface unchanged and migrate callers later',
  'the outage lasted four minutes and paged the on-call engineer',
  'split the change into three small pull requests',
];
export const LOAD_PROJECTS = [
  'Load Alpha',
  'Load Beta',
  'Load Gamma',
  'Load Delta',
  'Load Epsilon',
  'Load Zeta',
  'Load Eta',
  'Load Theta',
];
export const LOAD_PHASES = ['Design', 'Build', 'Verify', 'Release'];
export const GRAPH_VERBS =
  'get set create update delete find load save parse render build resolve compute validate merge apply handle fetch send read write'.split(
    ' ',
  );
export const GRAPH_NOUNS =
  'user order invoice session token cache query schema table index request response header payload message event queue worker job plan task memory graph node'.split(
    ' ',
  );
export const pickFrom = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

export function weighted<T>(rand: () => number, items: ReadonlyArray<readonly [T, number]>): T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  let x = rand() * total;
  for (const [item, w] of items) {
    x -= w;
    if (x < 0) return item;
  }
  return items[items.length - 1]![0];
}

export function memoryText(rand: () => number, tag: string): { content: string; keywords: string[] } {
  const topic = pickFrom(rand, TOPICS);
  const other = pickFrom(rand, TOPICS);
  const content = `${topic[0]!.toUpperCase()}${topic.slice(1)}: ${pickFrom(rand, CLAUSES)}; ${pickFrom(rand, CLAUSES)} (see ${other}, ref ${tag}).`;
  return { content, keywords: [...new Set([...topic.split(' ').slice(0, 2), tag.split('-')[0]!])] };
}

export function queryText(rand: () => number): string {
  const topic = pickFrom(rand, TOPICS);
  return rand() < 0.5
    ? `how do we handle the ${topic}?`
    : `${topic} ${pickFrom(rand, CLAUSES).split(' ').slice(2, 5).join(' ')}`;
}
