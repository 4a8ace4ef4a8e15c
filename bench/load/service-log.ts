/** The service's output lines (LOG_LEVEL=warn), each with the phase it came in; the first 30 echoed. */
export class ServiceLog {
  readonly lines: Array<{ t: string; phase: string; line: string }> = [];
  phase = 'setup';

  readonly onLine = (line: string): void => {
    this.lines.push({ t: new Date().toISOString(), phase: this.phase, line });
    if (this.lines.length <= 30) console.log(`  [service] ${line.slice(0, 400)}`);
  };

  /** The results file's service_log. */
  summary() {
    const lines = this.lines;
    return {
      lines: lines.length,
      by_phase: lines.reduce<Record<string, number>>((m, l) => ((m[l.phase] = (m[l.phase] ?? 0) + 1), m), {}),
      first: lines.slice(0, 15).map((l) => `${l.phase} ${l.line.slice(0, 600)}`),
      distinct_messages: summarizeLogMessages(lines),
    };
  }
}

/** Service log lines grouped by their msg (pino JSON), with counts. */
function summarizeLogMessages(
  lines: Array<{ phase: string; line: string }>,
): Array<{ msg: string; count: number; phases: string[] }> {
  const groups = new Map<string, { count: number; phases: Set<string> }>();
  for (const { phase, line } of lines) {
    let msg = line.slice(0, 160);
    try {
      const j = JSON.parse(line) as { msg?: string; level?: number; err?: { message?: string; code?: string } };
      msg = `[${j.level ?? '?'}] ${j.msg ?? ''}${j.err ? ` — ${j.err.code ?? ''} ${j.err.message ?? ''}`.slice(0, 200) : ''}`;
    } catch {
      /* not JSON */
    }
    const g = groups.get(msg) ?? { count: 0, phases: new Set<string>() };
    g.count++;
    g.phases.add(phase);
    groups.set(msg, g);
  }
  return [...groups]
    .map(([msg, g]) => ({ msg, count: g.count, phases: [...g.phases] }))
    .sort((x, y) => y.count - x.count)
    .slice(0, 25);
}
