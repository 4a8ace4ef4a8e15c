/**
 * Load and soak benchmark (`npm run bench:load`), on a throwaway Postgres cluster this process owns
 * (support/pg-cluster.ts) so that it can restart it:
 *
 *   A. steady: 40 MCP sessions (the real SDK client over Streamable HTTP) each looping a weighted mix
 *      of create/update/list tasks, store/search memory, find_symbols and resolve_context for 60 s:
 *      throughput, client-side p50/p95/p99 per tool, errors, the service's RSS every 5 s;
 *   B. REST: autocannon against three read routes (task list, memory search, symbol search), 20
 *      connections: req/s, p50/p95/p99, non-2xx, errors;
 *   C. fault: the same MCP mix for 60 s while Postgres is stopped once (at 1/3, for --outage s) and
 *      started again: errors by catalogue code during the outage, recovery time, then every write the
 *      service acknowledged (in A and C) checked in the database: lost writes must be 0.
 *
 * Embeddings come from a fake Ollama on loopback (deterministic 768-D vectors), so searches run the
 * hybrid path. Writes bench/results/load.{json,md} (other names for non-default runs, see --out).
 *
 *   npm run bench:load
 *   npm run bench:load -- --duration 20 --mode immediate --out load-immediate
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { clusterSupport } from '../support/pg-cluster.js';
import { runFaultPhase } from './load/fault-phase.js';
import { Ledger } from './load/ledger.js';
import { markdown } from './load/markdown.js';
import { errorCode, runMcpPhase, type Slot, type World } from './load/mcp-phase.js';
import { MIX } from './load/mix.js';
import { parseLoadOptions, parseReplicaOptions, USAGE } from './load/options.js';
import { runReplicaBench } from './load/replicas.js';
import { runRestPhase } from './load/rest-phase.js';
import { ServiceLog } from './load/service-log.js';
import { ROOT, setUpLoad, tearDownLoad } from './load/setup.js';
import { runSteadyPhase } from './load/steady-phase.js';
import { verifyLedger } from './load/verify.js';
import { gitInfo } from './lib/git.js';
import { prng } from './lib/seed.js';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

async function main(): Promise<number> {
  const replicas = parseReplicaOptions(process.argv.slice(2));
  if (replicas) return runReplicaBench(replicas);
  const o = parseLoadOptions(process.argv.slice(2));
  if (!o) {
    console.log(USAGE);
    return 0;
  }
  const unsupported = clusterSupport();
  if (unsupported) {
    console.error(`bench:load needs a throwaway Postgres cluster: ${unsupported}`);
    return 2;
  }

  const log = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
  const serviceLog = new ServiceLog();
  const rig = await setUpLoad(o, log, serviceLog);
  const { sampler, service: svc } = rig;
  const enter = (phase: string) => {
    serviceLog.phase = sampler.phase = phase;
  };
  try {
    const world: World = {
      service: svc,
      seeded: rig.seeded,
      graphNames: rig.graph.names,
      ledger: new Ledger(),
      errorPauseMs: o.errorPauseMs,
      diedAt: null,
    };
    const slots: Slot[] = Array.from({ length: o.sessionCount }, (_, i) => ({
      index: i,
      rand: prng(1000 + i),
      seq: 0,
      tasks: [],
    }));

    // Warm-up (not measured; its writes are in the ledger all the same).
    if (o.warmupS > 0) {
      enter('warmup');
      log(`warm-up: ${o.sessionCount} MCP sessions for ${o.warmupS} s`);
      await runMcpPhase(world, slots, 'w', o.warmupS);
    }
    enter('A');
    const a = await runSteadyPhase(rig, world, slots, o, log);
    enter('B');
    const b = await runRestPhase(rig, o, log);
    enter('C');
    const c = await runFaultPhase(rig, world, slots, o, log);
    const serviceAlive = c.phaseC.service_alive_after;

    // Every acknowledged write, checked once the embedding worker has caught up on what the outage queued.
    serviceLog.phase = 'verify';
    if (serviceAlive) await sleep(3_000);
    const verification: Awaited<ReturnType<typeof verifyLedger>> | { error: string } = await verifyLedger(
      rig.scratch.url,
      serviceAlive ? svc : null,
      world.ledger,
    ).catch((error: unknown) => ({ error: String((error as Error).stack ?? error) }));
    if ('lost_writes' in verification) {
      log(
        `verify: ${verification.acknowledged.tasks_created} tasks and ${verification.acknowledged.memories} memories acknowledged; lost or wrong: ${verification.lost_writes}; ` +
          `failed writes committed anyway: ${verification.failed_creates_committed_anyway}/${verification.failed_creates} creates, ${verification.failed_stores_committed_anyway}/${verification.failed_stores} stores`,
      );
    } else log(`verify: ${verification.error}`);
    const ready = await fetch(`${svc.url}/readyz`)
      .then((r) => r.status)
      .catch((e: unknown) => errorCode(e).code);

    const allSamples = sampler.samples;
    const results = {
      benchmark: 'devstream-hub load',
      date: new Date().toISOString(),
      git: gitInfo(ROOT, { short: true, paths: ['src'] }),
      machine: {
        cpus: os.cpus().length,
        cpu_model: os.cpus()[0]?.model ?? 'unknown',
        total_memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
        node: process.version,
        load_average_end: os.loadavg().map((x) => Math.round(x * 100) / 100),
      },
      database_server: rig.pgVersion,
      setup: {
        postgres: 'throwaway cluster (fsync=off, max_connections=200), scratch database',
        embeddings: 'fake Ollama on loopback (768-D deterministic vectors): hybrid search',
        seeded: {
          ...rig.seeded.counts,
          memories: rig.storedMemories,
          graph_nodes: rig.graph.nodes,
          graph_edges: rig.graph.edges,
        },
        mix: Object.fromEntries(MIX),
        options: {
          steadyS: o.steadyS,
          faultS: o.faultS,
          restS: o.restS,
          warmupS: o.warmupS,
          sessionCount: o.sessionCount,
          connections: o.connections,
          mode: o.mode,
          restartAtS: o.restartAtS,
          outageS: o.outageS,
          errorPauseMs: o.errorPauseMs,
        },
      },
      rss_mib: {
        baseline_after_start: rig.rssBaseline.rss_mib,
        phase_a_start: a.rssStart.rss_mib,
        phase_a_end: a.rssEnd.rss_mib,
        phase_b_end: b.rssEnd.rss_mib,
        phase_c_end: c.rssEnd.rss_mib,
        peak_hwm: Math.max(...allSamples.map((s) => s.hwm_mib ?? 0)),
        samples: allSamples,
      },
      phase_a: a.phaseA,
      phase_b: b.phaseB,
      phase_c: c.phaseC,
      verification,
      readyz_at_end: ready,
      service_log: serviceLog.summary(),
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(`${RESULTS_DIR}${o.outName}.json`, JSON.stringify(results, null, 2) + '\n');
    const md = markdown(results);
    await writeFile(`${RESULTS_DIR}${o.outName}.md`, md);
    console.log(`\n${md}`);
    log(`wrote bench/results/${o.outName}.json and .md`);
    const lost = 'lost_writes' in verification ? verification.lost_writes : null;
    return serviceAlive && lost === 0 ? 0 : 1;
  } finally {
    await tearDownLoad(rig);
  }
}

if (process.argv[1]?.endsWith('load.ts')) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
