import { setTimeout as sleep } from 'node:timers/promises';
import { rounded, summarize } from '../lib/stats.js';
import { summarizeCalls, timeline } from './calls.js';
import { cpuMeter } from './cpu-meter.js';
import { alive, errorCode, runMcpPhase, type Slot, type World } from './mcp-phase.js';
import type { LoadOptions } from './options.js';
import type { LoadRig } from './setup.js';

/**
 * Phase C: the MCP mix while Postgres is stopped once (at --restart-at, `pg_ctl stop -m <mode>`) and
 * started again after --outage s; /readyz and a REST read probed every ~250 ms meanwhile. Errors by
 * catalogue code, by tool and by when they happened, and the recovery time.
 */
export async function runFaultPhase(
  rig: LoadRig,
  world: World,
  slots: Slot[],
  o: LoadOptions,
  log: (msg: string) => void,
) {
  const { cluster, sampler, service: svc } = rig;
  const { faultS, mode, outageS, restartAtS, sessionCount } = o;
  log(
    `phase C: ${sessionCount} MCP sessions, ${faultS} s; Postgres stopped (${mode}) at ${restartAtS} s for ${outageS} s`,
  );
  const marks: Record<string, number> = {};
  const readiness: Array<{ t: number; status: number | string }> = [];
  const restProbes: Array<{ t: number; status: number | string; code: string | null }> = [];
  let stopReady = false;
  sampler.start(5_000);
  const cpuC = await cpuMeter(svc.pid, rig.scratch.url);
  const c = await runMcpPhase(world, slots, 'c', faultS, async (rec) => {
    const probe = (async () => {
      while (!stopReady && world.diedAt === null && rec.now() < faultS * 1000 + 2_000) {
        const t = rec.now();
        let status: number | string;
        try {
          const res = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
          await res.arrayBuffer();
          status = res.status;
        } catch (error) {
          status = errorCode(error).code;
        }
        readiness.push({ t: Math.round(t), status });
        // And a REST read: its HTTP status and catalogue code while the database is gone.
        try {
          const res = await fetch(`${svc.url}/api/v1/tasks?limit=1`, { signal: AbortSignal.timeout(10_000) });
          const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
          restProbes.push({ t: Math.round(t), status: res.status, code: body?.error?.code ?? null });
        } catch (error) {
          restProbes.push({ t: Math.round(t), status: errorCode(error).code, code: null });
        }
        await sleep(250);
      }
    })();
    await sleep(Math.max(0, restartAtS * 1000 - rec.now()));
    marks.stop_begin = rec.now();
    log(`  stopping Postgres (${mode})`);
    await cluster.stop(mode);
    marks.stopped = rec.now();
    log(`  Postgres stopped after ${Math.round(marks.stopped - marks.stop_begin)} ms`);
    await sleep(outageS * 1000);
    marks.start_begin = rec.now();
    await cluster.start();
    marks.up = rec.now();
    log(
      `  Postgres accepting connections again after ${Math.round(marks.up - marks.start_begin)} ms (down ${Math.round(marks.up - marks.stopped)} ms)`,
    );
    while (rec.now() < faultS * 1000 && world.diedAt === null)
      await sleep(Math.min(200, Math.max(1, faultS * 1000 - rec.now())));
    stopReady = true;
    await probe;
  });
  const cpuCFig = await cpuC(c.rec.events.length);
  sampler.stop();
  const rssC1 = await sampler.sample();
  const serviceAlive = alive(svc.pid);

  const ev = c.rec.events;
  const failed = ev.filter((e) => !e.ok);
  const firstError = failed.length ? Math.min(...failed.map((e) => e.end)) : null;
  const lastError = failed.length ? Math.max(...failed.map((e) => e.end)) : null;
  const okAfterUp = ev.filter((e) => e.ok && e.end >= marks.up!);
  const firstSuccessAfterUp = okAfterUp.length ? Math.min(...okAfterUp.map((e) => e.end)) : null;
  const failedStartedAfterUp = failed.filter((e) => e.start >= marks.up!);
  const errorsByTool: Record<string, number> = {};
  for (const e of failed) errorsByTool[e.tool] = (errorsByTool[e.tool] ?? 0) + 1;
  const notReady = readiness.filter((r) => r.status !== 200);
  const readyAgain = readiness.find((r) => r.t >= (marks.up ?? Infinity) && r.status === 200);
  const outage = {
    mode,
    outage_held_s: outageS,
    marks_ms: Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, Math.round(v)])),
    postgres_down_ms:
      marks.up !== undefined && marks.stopped !== undefined ? Math.round(marks.up - marks.stop_begin!) : null,
    errors_total: failed.length,
    errors_by_code: Object.fromEntries(
      Object.entries(
        failed.reduce<Record<string, number>>((m, e) => ((m[e.code!] = (m[e.code!] ?? 0) + 1), m), {}),
      ).sort((x, y) => y[1] - x[1]),
    ),
    errors_by_tool: errorsByTool,
    errors_before_stop: failed.filter((e) => e.end < marks.stop_begin!).length,
    errors_while_down: failed.filter((e) => e.end >= marks.stop_begin! && e.end < marks.up!).length,
    errors_after_up: failed.filter((e) => e.end >= marks.up!).length,
    calls_started_after_up_that_failed: failedStartedAfterUp.length,
    ok_while_down: ev.filter((e) => e.ok && e.end >= marks.stopped! && e.end < marks.start_begin!).length,
    error_latency_ms: failed.length ? rounded(summarize(failed.map((e) => e.end - e.start))) : null,
    first_error_ms: firstError && Math.round(firstError),
    last_error_ms: lastError && Math.round(lastError),
    first_success_after_up_ms: firstSuccessAfterUp && Math.round(firstSuccessAfterUp),
    /** First error to first success once Postgres is back. */
    recovery_ms:
      firstError !== null && firstSuccessAfterUp !== null ? Math.round(firstSuccessAfterUp - firstError) : null,
    /** Postgres accepting connections again → first successful call. */
    up_to_first_success_ms: firstSuccessAfterUp !== null ? Math.round(firstSuccessAfterUp - marks.up!) : null,
    /** Postgres back → the last failure (0: none after it was back). */
    up_to_last_error_ms: lastError !== null && lastError > marks.up! ? Math.round(lastError - marks.up!) : 0,
    readyz_not_ready_probes: notReady.length,
    readyz_first_not_ready_ms: notReady[0]?.t ?? null,
    readyz_statuses_seen: [...new Set(readiness.map((r) => String(r.status)))],
    readyz_ready_again_after_up_ms: readyAgain ? Math.round(readyAgain.t - marks.up!) : null,
    /** GET /api/v1/tasks?limit=1 every ~250 ms: "status code" → probes. */
    rest_probe_answers: restProbes.reduce<Record<string, number>>((m, p) => {
      const k = `${p.status}${p.code ? ` ${p.code}` : ''}`;
      m[k] = (m[k] ?? 0) + 1;
      return m;
    }, {}),
    error_examples: Object.fromEntries(c.rec.examples),
  };
  const phaseC = {
    seconds: faultS,
    sessions: sessionCount,
    ...summarizeCalls(c.rec, c.elapsedMs),
    before_stop: summarizeCalls(c.rec, marks.stop_begin!, 0, marks.stop_begin!),
    after_recovery: (() => {
      const from = (lastError ?? marks.up!) + 1;
      const span = c.elapsedMs - from; // up to the end of the phase
      return span > 2_000 ? { from_ms: Math.round(from), ...summarizeCalls(c.rec, span, from) } : null;
    })(),
    outage,
    timeline: timeline(c.rec, c.rec.events.reduce((m, e) => Math.max(m, e.end), 0) / 1000),
    cpu: cpuCFig,
    service_alive_after: serviceAlive,
    service_died_at_ms: c.diedAtMs === null ? null : Math.round(c.diedAtMs),
    service_exit_output: serviceAlive ? null : svc.output(),
  };
  log(
    `phase C: ${phaseC.calls} calls, ${outage.errors_total} errors ${JSON.stringify(outage.errors_by_code)}; ` +
      `recovery ${outage.recovery_ms} ms (Postgres up → first success ${outage.up_to_first_success_ms} ms; last error ${outage.up_to_last_error_ms} ms after up)`,
  );
  if (!serviceAlive) log(`the service EXITED during phase C. Output:\n${svc.output()}`);
  return { phaseC, rssEnd: rssC1 };
}
