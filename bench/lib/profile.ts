import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A V8 .cpuprofile (node --cpu-prof), the parts read here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  total_ms: number;
  /** Self time by where the code lives: a package under node_modules, a src/ file, node internals, GC, idle. */
  by_origin: Array<{ origin: string; self_ms: number; share: number }>;
  /** The functions with the most self time. */
  top_functions: Array<{ fn: string; where: string; self_ms: number; share: number }>;
}

function originOf(url: string, root: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return relative(root, path);
}

/** Self time per origin and per function; idle time is left out of the shares. */
export async function summarizeProfile(file: string, root: string, top = 25): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const byOrigin = new Map<string, number>();
  const byFn = new Map<string, { fn: string; where: string; ms: number }>();
  let busy = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    if (ms === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    busy += ms;
    const origin = functionName === '(garbage collector)' ? 'GC' : originOf(url, root);
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + ms);
    const where = url ? `${originOf(url, root)}:${lineNumber + 1}` : origin;
    const key = `${functionName}@${where}`;
    const entry = byFn.get(key) ?? { fn: functionName || '(anonymous)', where, ms: 0 };
    entry.ms += ms;
    byFn.set(key, entry);
  }
  const share = (ms: number) => Math.round((ms / busy) * 1000) / 10;
  const r = (ms: number) => Math.round(ms * 10) / 10;
  return {
    total_ms: r(busy),
    by_origin: [...byOrigin.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([origin, ms]) => ({ origin, self_ms: r(ms), share: share(ms) })),
    top_functions: [...byFn.values()]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top)
      .map((e) => ({ fn: e.fn, where: e.where, self_ms: r(e.ms), share: share(e.ms) })),
  };
}

export function formatProfile(p: ProfileSummary, title: string): string {
  const lines = [`${title}: ${p.total_ms} ms of CPU (idle excluded)`, '  by origin (self time):'];
  for (const o of p.by_origin.slice(0, 15))
    lines.push(`    ${String(o.share).padStart(5)}%  ${String(o.self_ms).padStart(8)} ms  ${o.origin}`);
  lines.push('  top functions (self time):');
  for (const f of p.top_functions)
    lines.push(`    ${String(f.share).padStart(5)}%  ${String(f.self_ms).padStart(8)} ms  ${f.fn}  ${f.where}`);
  return lines.join('\n');
}
