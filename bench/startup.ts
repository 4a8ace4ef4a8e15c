/**
 * Start-up benchmark: `npm run bench:startup` (not part of `npm test`).
 *
 * How long `serve` takes from spawn to its first 200 from GET /readyz, on a fresh data folder
 * (PGlite) or a fresh database (Postgres) and on a restart of the same one, and how much memory
 * the idle service then holds (RSS ~10 s after ready). Each start is run the way people run it:
 * the `npm start` script's own command line (package.json, with node_modules/.bin on PATH as npm
 * puts it) and `node bin/devstream-hub.js serve`. Beside them, each round times `node -e ''`, the
 * floor no Node service can go below on this machine at that moment. Rounds are interleaved
 * (floor, then every case once), so that load from other work falls on every case alike; figures
 * are medians over the rounds. CPU time (user + system of the whole process tree up to ready)
 * moves less than wall time when the machine is shared.
 *
 *   npm run bench:startup                       PGlite; Postgres too when DATABASE_URL is set
 *   npm run bench:startup -- --runs 3 --idle 5
 *   npm run bench:startup -- --baseline ../old-checkout --out /tmp/startup-before-after
 *
 * Writes bench/results/startup.json and startup.md (or --out's .json and .md).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { createScratchDatabase } from '../support/postgres.js';
import { freePort } from '../support/free-port.js';
import { machineCpuMs, processCpuMs } from './lib/cpu.js';
import { gitInfo } from './lib/git.js';

const HERE = fileURLToPath(new URL('../', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const TARGETS = { fresh_ms: 5_000, restart_ms: 3_000, idle_rss_mib: 300 };

const USAGE = `Usage: npm run bench:startup [-- options]

  --runs N      rounds (default 5)
  --idle S      seconds to wait after ready before reading RSS (default 10)
  --root DIR    the checkout to start (default: this one)
  --baseline DIR  another checkout (e.g. an older commit, with node_modules) measured in the same
                rounds, interleaved, for a before/after under the same load
  --out FILE    write FILE.json and FILE.md instead of bench/results/startup.*
  -h, --help    this text

DATABASE_URL: a Postgres server on which scratch databases may be created and dropped (optional).`;

interface Command {
  key: string;
  /** As shown in the table. */
  label: string;
  argv: string[];
}

interface Sample {
  ready_ms: number;
  /** user + system CPU of the process tree when /readyz first answered 200. */
  cpu_ms: number;
  /** RSS of the service process (the one that listens), `idle` s after ready. */
  rss_mib: number;
  /** RSS of every process the command started (npm's shell, tsx's parent, …). */
  tree_rss_mib: number;
  processes: number;
}

interface Checkout {
  name: 'this' | 'baseline';
  root: string;
  git: { commit: string | null; dirty: boolean | null };
  commands: Command[];
}

interface Series {
  checkout: Checkout['name'];
  command: string;
  database: 'pglite' | 'postgres';
  start: 'fresh' | 'restart';
  samples: Sample[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? Number.NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};
const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The process and all its descendants, from /proc (Linux). */
function processTree(pid: number): number[] {
  const all = [pid];
  try {
    for (const tid of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
      all.push(...processTree(Number(tid)));
  } catch {
    /* gone */
  }
  return all;
}

function rssMib(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** The pid listening on `port` (the service itself, whatever wrapped it), from /proc/net/tcp. */
function listenerPid(pids: number[], port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]!);
      }
    } catch {
      /* no IPv6 */
    }
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link = '';
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        /* closed meanwhile */
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1]!)) return pid;
    }
  }
  return undefined;
}

/** This process's environment without what would point the service elsewhere (the row sets it). */
const inherited: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST'].includes(k)),
);

async function runOnce(root: string, command: Command, env: Record<string, string>, idleS: number): Promise<Sample> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(command.argv[0]!, command.argv.slice(1), {
    cwd: root,
    env: {
      ...inherited,
      PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      LOG_LEVEL: 'warn',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: the stop reaches tsx's child and npm's shell too
  });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim()),
    );
    tail.splice(0, Math.max(0, tail.length - 30));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // Every process of the group must be gone, not only the first: npm's shell exits on the signal
  // while the service is still closing its data folder.
  const groupAlive = () => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stop = async () => {
    if (!groupAlive()) return;
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* gone */
    }
    const kill = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 15_000);
    await exited;
    while (groupAlive()) await sleep(20);
    clearTimeout(kill);
  };
  try {
    let readyMs: number | undefined;
    let cpuMs = 0;
    while (readyMs === undefined) {
      if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode} before ready`);
      if (performance.now() - started > 120_000) throw new Error('not ready within 120 s');
      try {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        await response.arrayBuffer();
        if (response.ok) {
          readyMs = performance.now() - started;
          cpuMs = processTree(child.pid!).reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
        }
      } catch {
        /* not listening yet */
      }
      if (readyMs === undefined) await sleep(20);
    }
    await sleep(idleS * 1000);
    const pids = processTree(child.pid!);
    const service = listenerPid(pids, port) ?? pids[pids.length - 1]!;
    return {
      ready_ms: round(readyMs),
      cpu_ms: cpuMs,
      rss_mib: round(rssMib(service), 1),
      tree_rss_mib: round(
        pids.reduce((sum, pid) => sum + rssMib(pid), 0),
        1,
      ),
      processes: pids.length,
    };
  } catch (error) {
    throw new Error(`${command.label}: ${(error as Error).message}\n--- output ---\n${tail.join('\n')}`, {
      cause: error,
    });
  } finally {
    await stop();
  }
}

/** `node -e ''`: spawn to exit. */
function floorMs(): number {
  const t = performance.now();
  spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
  return performance.now() - t;
}

function machineBusyPct(from: { busy: number; total: number } | undefined): number | null {
  const to = machineCpuMs();
  return from && to && to.total > from.total ? round(((to.busy - from.busy) / (to.total - from.total)) * 100) : null;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      idle: { type: 'string', default: '10' },
      root: { type: 'string' },
      baseline: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const runs = Number(values.runs);
  const idleS = Number(values.idle);
  const root = resolve(values.root ?? HERE);
  const checkouts: Checkout[] = [];
  for (const [name, dir] of [
    ['this', root],
    ...(values.baseline ? [['baseline', resolve(values.baseline)]] : []),
  ] as Array<[Checkout['name'], string]>) {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const startScript = pkg.scripts.start!;
    checkouts.push({
      name,
      root: dir,
      git: gitInfo(dir, { paths: ['src', 'migrations', 'package.json', 'scripts'] }),
      commands: [
        { key: 'npm-start', label: `npm start (${startScript})`, argv: ['/bin/sh', '-c', startScript] },
        {
          key: 'bin',
          label: 'node bin/devstream-hub.js serve',
          argv: [process.execPath, 'bin/devstream-hub.js', 'serve'],
        },
      ],
    });
    // What `npm ci` leaves behind (the `prepare` script), when the checkout has it.
    if (pkg.scripts['build:pglite-templates']) {
      const r = spawnSync('npm', ['run', '--silent', 'build:pglite-templates'], { cwd: dir, stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`npm run build:pglite-templates failed in ${dir}`);
    }
  }
  const databaseUrl = process.env.DATABASE_URL;
  const databases: Array<'pglite' | 'postgres'> = databaseUrl ? ['pglite', 'postgres'] : ['pglite'];

  const loadBefore = os.loadavg();
  const m0 = machineCpuMs();
  await sleep(1_000);
  const busyBefore = machineBusyPct(m0);
  console.error(
    `bench: ${runs} rounds, idle ${idleS} s; machine ${busyBefore}% busy with other work, load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`,
  );

  const series = new Map<string, Series>();
  const record = (
    checkout: Checkout,
    command: Command,
    database: Series['database'],
    start: Series['start'],
    sample: Sample,
  ) => {
    const key = `${checkout.name}/${command.key}/${database}/${start}`;
    if (!series.has(key))
      series.set(key, { checkout: checkout.name, command: command.label, database, start, samples: [] });
    series.get(key)!.samples.push(sample);
  };
  const floors: number[] = [];
  const mRun = machineCpuMs();
  const started = performance.now();
  let ourCpuMs = 0;
  for (let round_ = 1; round_ <= runs; round_++) {
    floors.push(floorMs());
    for (const command of [0, 1]) {
      for (const database of databases) {
        for (const checkout of checkouts) {
          let env: Record<string, string>;
          let drop: () => Promise<void>;
          if (database === 'pglite') {
            const dir = await mkdtemp(join(os.tmpdir(), 'dsh-bench-startup-'));
            env = { DATA_DIR: dir };
            drop = () => rm(dir, { recursive: true, force: true });
          } else {
            const scratch = await createScratchDatabase(databaseUrl!, 'dsh_bench_startup');
            env = { DATABASE_URL: scratch.url };
            drop = () => scratch.drop();
          }
          try {
            for (const start of ['fresh', 'restart'] as const) {
              const sample = await runOnce(checkout.root, checkout.commands[command]!, env, idleS);
              ourCpuMs += sample.cpu_ms;
              record(checkout, checkout.commands[command]!, database, start, sample);
              console.error(
                `bench: round ${round_} ${checkout.name} ${checkout.commands[command]!.key} ${database} ${start}: ready ${sample.ready_ms} ms, CPU ${sample.cpu_ms} ms, RSS ${sample.rss_mib} MiB (all ${sample.processes} processes: ${sample.tree_rss_mib})`,
              );
            }
          } finally {
            await drop();
          }
        }
      }
    }
  }
  const elapsed = performance.now() - started;
  const busyDuring = machineBusyPct(mRun);
  // Our own share of the machine while measuring (the starts' CPU, roughly): the rest is others'.
  const othersPct =
    busyDuring === null ? null : Math.max(0, round(busyDuring - (ourCpuMs / (elapsed * os.cpus().length)) * 100));
  const loadAfter = os.loadavg();

  const rows = [...series.values()].map((s) => ({
    checkout: s.checkout,
    command: s.command,
    database: s.database,
    start: s.start,
    ready_ms: {
      median: round(median(s.samples.map((x) => x.ready_ms))),
      min: Math.min(...s.samples.map((x) => x.ready_ms)),
      max: Math.max(...s.samples.map((x) => x.ready_ms)),
    },
    cpu_ms: { median: round(median(s.samples.map((x) => x.cpu_ms))) },
    rss_mib: {
      median: round(median(s.samples.map((x) => x.rss_mib)), 1),
      max: Math.max(...s.samples.map((x) => x.rss_mib)),
    },
    tree_rss_mib: { median: round(median(s.samples.map((x) => x.tree_rss_mib)), 1) },
    processes: s.samples[0]?.processes ?? 0,
    samples: s.samples,
  }));
  const floor = { median: round(median(floors)), min: round(Math.min(...floors)), max: round(Math.max(...floors)) };
  const check = (ok: boolean) => (ok ? '✅' : '❌');
  const targetOf = (r: (typeof rows)[number]) => {
    if (r.database !== 'pglite' || r.checkout !== 'this') return '';
    const readyTarget = r.start === 'fresh' ? TARGETS.fresh_ms : TARGETS.restart_ms;
    return `ready ≤ ${readyTarget / 1000} s ${check(r.ready_ms.median <= readyTarget)} · RSS ≤ ${TARGETS.idle_rss_mib} MiB ${check(r.rss_mib.median <= TARGETS.idle_rss_mib)}`;
  };
  const name = (c: Checkout) =>
    `${c.name === 'this' ? 'this' : 'baseline'} ${c.git.commit?.slice(0, 7) ?? '?'}${c.git.dirty ? '+' : ''}`;
  const label = Object.fromEntries(checkouts.map((c) => [c.name, name(c)]));
  const order = (r: (typeof rows)[number]) =>
    `${r.database}/${r.start === 'fresh' ? 0 : 1}/${r.command.startsWith('npm') ? 0 : 1}/${r.checkout === 'this' ? 1 : 0}`;
  rows.sort((a, b) => order(a).localeCompare(order(b)));
  const header = `| database | start | command |${checkouts.length > 1 ? ' checkout |' : ''} ready ms (median, min–max) | CPU ms to ready | idle RSS MiB: service (all processes) | target (PGlite) |`;
  const lines = [header, `|---|---|---|${checkouts.length > 1 ? '---|' : ''}---:|---:|---:|---|`];
  for (const r of rows) {
    lines.push(
      `| ${r.database} | ${r.start} | ${r.command} |${checkouts.length > 1 ? ` ${label[r.checkout]} |` : ''} ${r.ready_ms.median} (${r.ready_ms.min}–${r.ready_ms.max}) | ${r.cpu_ms.median} | ${r.rss_mib.median} (${r.tree_rss_mib.median}, ${r.processes} proc.) | ${targetOf(r)} |`,
    );
  }
  lines.push(
    `| floor | | \`node -e ''\` |${checkouts.length > 1 ? ' |' : ''} ${floor.median} (${floor.min}–${floor.max}) | | | |`,
  );
  const table = lines.join('\n');
  const git = checkouts[0]!.git;
  const pass = rows
    .filter((r) => r.database === 'pglite' && r.checkout === 'this')
    .every((r) => targetOf(r).split('❌').length === 1);
  const report = {
    benchmark: 'devstream-hub start-up',
    date: new Date().toISOString(),
    node: process.version,
    checkouts: checkouts.map((c) => ({
      name: c.name,
      root: c.root,
      git: c.git,
      commands: c.commands.map((x) => x.label),
    })),
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      total_memory_gib: round(os.totalmem() / 2 ** 30, 1),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      load_average_before: loadBefore.map((x) => round(x, 2)),
      load_average_after: loadAfter.map((x) => round(x, 2)),
      cpu_busy_pct_before: busyBefore,
      cpu_busy_pct_by_others_during: othersPct,
    },
    settings: {
      runs,
      idle_s: idleS,
      log_level: 'warn',
      ready: 'first 200 from GET /readyz, polled every 20 ms, from spawn',
    },
    targets: TARGETS,
    floor_ms: { ...floor, samples: floors.map((x) => round(x)) },
    rows,
    pass,
  };
  const summary =
    `Machine: ${report.machine.cpus} CPUs, ${busyBefore}% busy with other work before, about ${othersPct}% during; ` +
    `load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${loadAfter.map((x) => x.toFixed(2)).join(' ')} after.`;
  console.log('');
  console.log(
    `devstream-hub start-up — ${runs} rounds, RSS ${idleS} s after ready · Node ${process.version} · commit ${git.commit?.slice(0, 10) ?? '?'}${git.dirty ? ' (modified)' : ''}`,
  );
  console.log(summary);
  console.log('');
  console.log(table);
  console.log('');
  console.log(
    `Targets (PGlite): ready ≤ ${TARGETS.fresh_ms / 1000} s fresh, ≤ ${TARGETS.restart_ms / 1000} s restart; idle RSS ≤ ${TARGETS.idle_rss_mib} MiB: ${pass ? 'ALL PASS' : 'MISSED'}`,
  );

  const md = [
    '# devstream-hub start-up benchmark',
    '',
    `- Date: ${report.date}`,
    `- Node ${process.version}; ${report.machine.cpus} CPUs (${report.machine.cpu_model}); ${report.machine.total_memory_gib} GiB RAM; ${report.machine.platform}`,
    ...checkouts.map(
      (c) =>
        `- ${c.name === 'this' ? 'Commit' : 'Baseline, in the same rounds'}: ${c.git.commit ?? '?'}${c.git.dirty ? ' (with changes in src/, migrations/, scripts/ or package.json)' : ''}`,
    ),
    `- ${summary}`,
    `- ${runs} rounds, interleaved (floor, then each row once per round); figures are medians. Ready: first 200 from GET /readyz, polled every 20 ms, measured from spawn. RSS: ${idleS} s after ready, of the process listening (in brackets: every process the command started). CPU: user + system of the process tree up to ready.`,
    '- fresh: a new PGlite data folder (a new scratch database on Postgres); restart: the same one again.',
    '',
    table,
    '',
    `**Targets (PGlite, this checkout): ready ≤ ${TARGETS.fresh_ms / 1000} s fresh and ≤ ${TARGETS.restart_ms / 1000} s on a restart, idle RSS ≤ ${TARGETS.idle_rss_mib} MiB: ${pass ? 'all met' : 'some missed'}.**`,
    '',
  ].join('\n');
  const out = values.out ? resolve(values.out) : join(RESULTS_DIR, 'startup');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
  await writeFile(`${out}.md`, md);
  console.log(`\nWrote ${out}.json and ${out}.md`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
