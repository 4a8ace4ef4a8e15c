import autocannon from 'autocannon';
import { prng, type SeededData } from '../lib/seed.js';
import { round1, rounded, summarize } from '../lib/stats.js';
import { cpuMeter } from './cpu-meter.js';
import { alive } from './mcp-phase.js';
import type { LoadOptions } from './options.js';
import type { LoadRig } from './setup.js';
import { GRAPH_NOUNS, GRAPH_VERBS, LOAD_PROJECTS, pickFrom, queryText } from './vocabulary.js';

/**
 * Phase B: autocannon against three read routes (task list, memory search, symbol search), --rest s
 * split over them: req/s, latency, non-2xx, errors, CPU.
 */
export async function runRestPhase(rig: LoadRig, o: LoadOptions, log: (msg: string) => void) {
  const { sampler, service: svc } = rig;
  const { connections, restS } = o;
  const routes = restRoutes(rig.seeded, rig.graph.names);
  const perRoute = Math.max(2, Math.round(restS / routes.length));
  log(`phase B: autocannon, ${connections} connections, ${perRoute} s per route`);
  sampler.start(5_000);
  const cpuB = await cpuMeter(svc.pid, rig.scratch.url);
  const phaseBRoutes: Record<string, Awaited<ReturnType<typeof runAutocannon>>> = {};
  for (const route of routes) {
    const res = await runAutocannon(svc.url, route, perRoute, connections);
    phaseBRoutes[route.key] = res;
    log(
      `  ${route.label}: ${res.req_per_s} req/s, p50/p95/p99 ${res.latency_ms.p50.toFixed(1)}/${res.latency_ms.p95.toFixed(1)}/${res.latency_ms.p99.toFixed(1)} ms, non-2xx ${res.non2xx}, errors ${res.errors}`,
    );
  }
  const cpuBFig = await cpuB(Object.values(phaseBRoutes).reduce((n, r) => n + r.requests, 0));
  sampler.stop();
  const rssB1 = await sampler.sample();
  if (!alive(svc.pid)) throw new Error(`the service exited during phase B\n${svc.output()}`);
  return { phaseB: { cpu: cpuBFig, routes: phaseBRoutes }, rssEnd: rssB1 };
}

/** The three routes, each drawing its requests from a seeded generator. */
function restRoutes(seeded: SeededData, graphNames: string[]): RestRoute[] {
  return [
    {
      key: 'list_tasks',
      label: 'GET /api/v1/tasks?project=…&limit=20',
      setup: (rand) => ({
        method: 'GET',
        path: `/api/v1/tasks?project=${encodeURIComponent(rand() < 0.5 ? pickFrom(rand, LOAD_PROJECTS) : pickFrom(rand, seeded.plans).title)}&limit=20`,
      }),
    },
    {
      key: 'search_memory',
      label: 'POST /api/v1/memories/search',
      setup: (rand) => ({
        method: 'POST',
        path: '/api/v1/memories/search',
        body: JSON.stringify({
          query: queryText(rand),
          limit: 10,
          ...(rand() < 0.5 ? { project: pickFrom(rand, LOAD_PROJECTS) } : {}),
        }),
      }),
    },
    {
      key: 'find_symbols',
      label: 'GET /api/v1/symbols?q=…&repo=synthetic',
      setup: (rand) => ({
        method: 'GET',
        path: `/api/v1/symbols?q=${encodeURIComponent(rand() < 0.4 ? pickFrom(rand, graphNames) : `${pickFrom(rand, GRAPH_VERBS)} ${pickFrom(rand, GRAPH_NOUNS)}`)}&repo=synthetic`,
      }),
    },
  ];
}

export interface RestRoute {
  key: string;
  label: string;
  setup: (rand: () => number) => { method: 'GET' | 'POST'; path: string; body?: string };
}

export async function runAutocannon(url: string, route: RestRoute, seconds: number, connections: number) {
  const rand = prng(4242);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const first = route.setup(rand);
  let done!: (r: { err: unknown; result: autocannon.Result }) => void;
  const finished = new Promise<{ err: unknown; result: autocannon.Result }>((resolve) => (done = resolve));
  const instance = autocannon(
    {
      url,
      connections,
      duration: seconds,
      timeout: 30,
      method: first.method,
      requests: [
        {
          setupRequest: (request) => {
            const r = route.setup(rand);
            return {
              ...request,
              method: r.method,
              path: r.path,
              ...(r.body !== undefined
                ? { body: r.body, headers: { ...request.headers, 'content-type': 'application/json' } }
                : {}),
            };
          },
        },
      ],
    },
    (err, result) => done({ err, result }),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    latencies.push(responseTime);
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  });
  const { err, result } = await finished;
  if (err) throw err;
  return {
    route: route.label,
    seconds: result.duration,
    connections,
    requests: result.requests.total,
    req_per_s: round1(result.requests.average),
    latency_ms: rounded(summarize(latencies)),
    autocannon_latency_ms: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p97_5: result.latency.p97_5,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    status_codes: statuses,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
