import { parseArgs } from 'node:util';

export const USAGE = `Usage: npm run bench:load [-- options]

Load, soak and Postgres-restart benchmark of devstream-hub on a throwaway Postgres cluster
(needs the Postgres 15 + pgvector binaries, see support/pg-cluster.ts).

Options:
  --duration S      seconds of phase A (steady MCP load) and of phase C (fault), default 60
  --fault-duration S  seconds of phase C only (default: --duration)
  --rest S          seconds of phase B (autocannon), split over its three routes (default 21; shorter with --duration)
  --warmup S        unmeasured MCP load before phase A (default 5)
  --sessions N      concurrent MCP sessions (default 40)
  --connections N   autocannon connections (default 20)
  --mode M          how Postgres is stopped in phase C: fast | immediate (default fast)
  --restart-at S    when, into phase C (default: a third of it)
  --outage S        seconds Postgres stays down before it is started again (default 5; 0 = plain restart)
  --error-pause MS  a session's pause after a failed call, as a client's retry delay (default 100)
  --memories N      memories stored (through REST) before the load (default 1000)
  --nodes N         nodes of the synthetic code graph uploaded (default 3000)
  --out NAME        results file name in bench/results/ (default: load, or load-<A>s-<mode> for non-default runs)
  -h, --help        this text

With --replicas N, a different run (bench/load/replicas.ts): the hub as 1 and N replicas behind nginx
(needs redis-server and nginx), each protocol era, then one of N replicas SIGKILLed under load:
  --replicas N      replicas of the second round (default: no replica run)
  --clients N       concurrent MCP clients (default 16)
  --duration S      seconds per phase (default 20 with --replicas)
  --out NAME        results file name (default load-replicas)`;

/** What a run does: phase lengths, load, the outage, the data, where results go. */
export interface LoadOptions {
  steadyS: number;
  faultS: number;
  restS: number;
  warmupS: number;
  sessionCount: number;
  connections: number;
  restartAtS: number;
  outageS: number;
  errorPauseMs: number;
  memoryCount: number;
  nodeCount: number;
  mode: 'fast' | 'immediate';
  /** Results file name in bench/results/, without the extension. */
  outName: string;
}

/** The command line's options (null for --help); throws naming the option that is out of range. */
export function parseLoadOptions(args: string[]): LoadOptions | null {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string', default: '60' },
      'fault-duration': { type: 'string' },
      rest: { type: 'string' },
      warmup: { type: 'string', default: '5' },
      sessions: { type: 'string', default: '40' },
      connections: { type: 'string', default: '20' },
      mode: { type: 'string', default: 'fast' },
      'restart-at': { type: 'string' },
      outage: { type: 'string', default: '5' },
      'error-pause': { type: 'string', default: '100' },
      memories: { type: 'string', default: '1000' },
      nodes: { type: 'string', default: '3000' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  const num = (name: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min} (got ${v})`);
    return n;
  };
  const steadyS = num('duration', values.duration, 3);
  const faultS = num('fault-duration', values['fault-duration'] ?? values.duration, 6);
  const restS = num('rest', values.rest ?? String(Math.min(21, Math.max(6, Math.round(steadyS * 0.35)))), 3);
  const warmupS = num('warmup', values.warmup, 0);
  const sessionCount = num('sessions', values.sessions, 1);
  const connections = num('connections', values.connections, 1);
  const restartAtS = num('restart-at', values['restart-at'] ?? String(Math.round(faultS / 3)), 0);
  const outageS = num('outage', values.outage, 0);
  const errorPauseMs = num('error-pause', values['error-pause'], 0);
  const memoryCount = num('memories', values.memories, 0);
  const nodeCount = num('nodes', values.nodes, 100);
  const mode = values.mode as 'fast' | 'immediate';
  if (mode !== 'fast' && mode !== 'immediate') throw new Error('--mode must be fast or immediate');
  const defaults =
    steadyS === 60 && faultS === 60 && mode === 'fast' && sessionCount === 40 && outageS === 5 && errorPauseMs === 100;
  const outName = values.out ?? (defaults ? 'load' : `load-${steadyS}s-${mode}`);
  return {
    steadyS,
    faultS,
    restS,
    warmupS,
    sessionCount,
    connections,
    restartAtS,
    outageS,
    errorPauseMs,
    memoryCount,
    nodeCount,
    mode,
    outName,
  };
}

/** The --replicas run's options, or null when --replicas is not given; throws naming a bad option. */
export function parseReplicaOptions(args: string[]): import('./replicas.js').ReplicaBenchOptions | null {
  if (!args.includes('--replicas')) return null;
  const { values } = parseArgs({
    args,
    options: {
      replicas: { type: 'string' },
      clients: { type: 'string', default: '16' },
      duration: { type: 'string', default: '20' },
      out: { type: 'string', default: 'load-replicas' },
    },
  });
  const num = (name: string, v: string | undefined, min: number, max: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name} must be an integer from ${min} to ${max} (got ${v})`);
    return n;
  };
  return {
    replicas: num('replicas', values.replicas, 2, 8),
    clients: num('clients', values.clients, 1, 500),
    durationS: num('duration', values.duration, 3, 3600),
    outName: values.out!,
  };
}
