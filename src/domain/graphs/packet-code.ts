/**
 * The packet's CODE section (spec "Packet format"; DEVLENS_PACKET_CODE or a call's `code`): the
 * source bodies of the top nodes, in rank order. Code gives way first: the nodes are fitted to the
 * budget less a reserve for code (what the bodies need, at most CODE_SHARE of the budget), then the
 * bodies fill the room left, each cut at a line to fit and saying how many lines it lost. Without
 * the reserve a packet asked for code would rarely show any: the ranked nodes alone fill most budgets.
 */
import type { Candidate } from './rank-candidates.js';

/** Bodies shown at most: the answer and the next two. */
export const CODE_NODES = 3;
/** Lines of one body shown at most, and characters of one line. */
const CODE_LINES = 80;
const CODE_LINE_CHARS = 200;
/** Characters kept for the section's `CODE <n>` line. */
const HEADER_CHARS = 12;
/** Share of the budget kept for code when the nodes are fitted. */
const CODE_SHARE = 0.25;

/** Tokens of the budget the nodes leave to the CODE section: what the bodies of `nodes` need, at most CODE_SHARE of it. */
export function codeReserve(nodes: Candidate[], budget: number): number {
  const cap = Math.floor(budget * CODE_SHARE);
  const need = codeSection(nodes, cap * 4).reduce((n, line) => n + line.length + 1, 0);
  return Math.min(cap, Math.ceil(need / 4));
}

/**
 * The CODE section's lines for `nodes` (the packet's, in rank order; `N<i+1>` their short ids)
 * within `room` characters, newlines included; empty when not even its header fits. Files, ghosts
 * and nodes without stored code are passed over.
 */
export function codeSection(nodes: Candidate[], room: number): string[] {
  if (room < HEADER_CHARS) return [];
  let left = room - HEADER_CHARS;
  const out: string[] = [];
  let shown = 0;
  for (let n = 0; n < nodes.length && shown < CODE_NODES; n++) {
    const r = nodes[n]!.row;
    if (!r.code || r.type === 'FILE' || r.type === 'GHOST') continue;
    const head = `N${n + 1} ${r.file_path}:${r.start_line}-${r.end_line}`;
    const total = lineCount(r.code);
    const marker = (lost: number) => `  … ${lost} more line${lost === 1 ? '' : 's'}`;
    // The head, one line of code and the marker must fit, or this body is not shown at all.
    if (head.length + 1 + marker(total).length + 1 >= left) break;
    left -= head.length + 1;
    const body: string[] = [];
    let start = 0;
    while (start <= r.code.length && body.length < Math.min(total, CODE_LINES)) {
      let end = r.code.indexOf('\n', start);
      if (end === -1) end = r.code.length;
      const raw = r.code.slice(start, Math.min(end, start + CODE_LINE_CHARS));
      const line = `  ${raw}${end - start > CODE_LINE_CHARS ? '…' : ''}`.trimEnd();
      const rest = total - body.length - 1;
      if (line.length + 1 + (rest > 0 ? marker(rest).length + 1 : 0) > left) break;
      body.push(line);
      left -= line.length + 1;
      start = end + 1;
    }
    if (body.length === 0) break; // not one line of it fits: what is left is too little for another body
    if (body.length < total) {
      const m = marker(total - body.length);
      body.push(m);
      left -= m.length + 1;
    }
    out.push(head, ...body);
    shown++;
  }
  return [`CODE ${shown}`, ...out];
}

/** Lines of `code` (newline-separated), counted without copying it. */
function lineCount(code: string): number {
  let lines = 1;
  for (let at = code.indexOf('\n'); at !== -1; at = code.indexOf('\n', at + 1)) lines++;
  return lines;
}
