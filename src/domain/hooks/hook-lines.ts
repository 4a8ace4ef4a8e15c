import type { ContentType } from '../../db/schema.js';
import type { HookNodeRow } from '../../db/queries/graphs/hook-nodes.js';
import { preview } from '../preview.js';

/** Characters of a memory's content a hook shows at most. */
export const MEMORY_CHARS = 500;
/** Characters of a node's summary a hook shows at most. */
const SUMMARY_CHARS = 200;

/** How a hook lists a memory: type, day and id (for devstream_get_memory), then its content on one line. */
export function memoryLine(m: {
  memory_id: string;
  content: string;
  content_type: ContentType;
  created_at: string | Date;
}): string {
  const day = (m.created_at instanceof Date ? m.created_at.toISOString() : m.created_at).slice(0, 10);
  return `- [${m.content_type} · ${day} · memory ${m.memory_id}] ${preview(m.content, MEMORY_CHARS)}`;
}

/** How a hook lists a code node: id, kind and place, then the first of its summaries. */
export function nodeLine(n: Omit<HookNodeRow, 'summary'> & { summary?: string | null | undefined }): string {
  const summary = n.summary ? ` — ${preview(n.summary, SUMMARY_CHARS)}` : '';
  return `- ${n.node_id} (${n.type.toLowerCase()}, ${n.file_path}:${n.start_line}-${n.end_line})${summary}`;
}

/** How a hook lists a find_symbols hit, with its node's summary. */
export function symbolLine(
  s: { nodeId: string; name: string; type: string; filePath: string; startLine: number; endLine: number },
  summary: string | null | undefined,
): string {
  return nodeLine({
    node_id: s.nodeId,
    name: s.name,
    type: s.type,
    file_path: s.filePath,
    start_line: s.startLine,
    end_line: s.endLine,
    summary,
  });
}

/** The dedup key of a memory and of a code node (hook_injections.item). */
export const memoryItem = (id: string) => `m:${id}`;
export const nodeItem = (graphId: string, nodeId: string) => `n:${graphId}:${nodeId}`;
