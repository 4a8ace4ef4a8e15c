import { monitorEventLoopDelay } from 'node:perf_hooks';
import { round1 } from '../lib/stats.js';
import { summarizeCalls } from './calls.js';
import { cpuMeter } from './cpu-meter.js';
import { alive, runMcpPhase, type Slot, type World } from './mcp-phase.js';
import type { LoadOptions } from './options.js';
import { rssVerdict } from './rss.js';
import type { LoadRig } from './setup.js';

/**
 * Phase A: `sessions` MCP sessions looping the mix for --duration s. Throughput, client-side latency
 * per tool, errors, CPU, this process's event-loop delay (it inflates client-side latencies), and the
 * service's RSS and heap every 5 s with the soak's verdict on RSS growth.
 */
export async function runSteadyPhase(
  rig: LoadRig,
  world: World,
  slots: Slot[],
  o: LoadOptions,
  log: (msg: string) => void,
) {
  const { sampler, service: svc } = rig;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  log(`phase A: ${o.sessionCount} MCP sessions, ${o.steadyS} s`);
  const rssA0 = await sampler.sample();
  sampler.start(5_000);
  loopDelay.enable();
  const cpuA = await cpuMeter(svc.pid, rig.scratch.url);
  const a = await runMcpPhase(world, slots, 'a', o.steadyS);
  const cpuAFig = await cpuA(a.rec.events.length);
  loopDelay.disable();
  const delayA = {
    p50_ms: round1(loopDelay.percentile(50) / 1e6),
    p99_ms: round1(loopDelay.percentile(99) / 1e6),
    max_ms: round1(loopDelay.max / 1e6),
  };
  loopDelay.reset();
  sampler.stop();
  const rssA1 = await sampler.sample();
  const rssASamples = sampler.samples.filter((s) => s.phase === 'A');
  const phaseA = {
    seconds: o.steadyS,
    sessions: o.sessionCount,
    session_connect_ms: Math.round(a.connectMs),
    ...summarizeCalls(a.rec, a.elapsedMs),
    error_examples: Object.fromEntries(a.rec.examples),
    cpu: cpuAFig,
    client_event_loop_delay: delayA,
    rss: { ...rssVerdict(rssASamples), samples: rssASamples.map((s) => [s.t_s, s.rss_mib]) },
    heap_mib: rssASamples.map((s) => [s.t_s, s.heap_mib]),
  };
  log(
    `phase A: ${phaseA.calls} calls (${phaseA.throughput_per_s}/s), ${phaseA.errors} errors, p50/p95/p99 ${phaseA.latency_ms?.p50.toFixed(1)}/${phaseA.latency_ms?.p95.toFixed(1)}/${phaseA.latency_ms?.p99.toFixed(1)} ms; ` +
      `RSS ${rssA0.rss_mib} → ${rssA1.rss_mib} MiB`,
  );
  if (!alive(svc.pid)) throw new Error(`the service exited during phase A\n${svc.output()}`);
  return { phaseA, rssStart: rssA0, rssEnd: rssA1 };
}
