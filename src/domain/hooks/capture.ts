import { addTouches, takeTouches } from '../../db/queries/hook-sessions.js';
import { storeMemory } from '../memory/store-memory.js';
import type { HookCall } from './hook-call.js';
import { repoPath } from './tool-context.js';
import { maySeeProject } from '../visibility.js';

/** Tools that change a file, and the one that reads one. */
const EDITING = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);
/** A DevStream task tool as Claude Code names it (`mcp__<server>__devstream_update_task`). */
const TASK_TOOL = /(?:^|__)devstream_(create_task|update_task)$/;

/** Paths listed in the capture at most, per list; characters of a path kept; of the memory. */
const LISTED = 40;
const PATH_CHARS = 300;
const CAPTURE_CHARS = 8000;

/** What a PostToolUse adds to the session's capture: the file read or edited, the task changed. */
function touchesOf(call: HookCall): Parameters<typeof addTouches>[2] | undefined {
  const tool = call.input.tool_name ?? '';
  const args = call.input.tool_input ?? {};
  const file =
    typeof args.file_path === 'string'
      ? args.file_path
      : typeof args.notebook_path === 'string'
        ? args.notebook_path
        : undefined;
  const path = file === undefined ? undefined : repoPath(file, call.input.cwd).slice(0, PATH_CHARS);
  if (path && EDITING.has(tool)) return { filesEdited: [path] };
  if (path && tool === 'Read') return { filesRead: [path] };
  const task = TASK_TOOL.exec(tool);
  if (task) {
    const text = (v: unknown, max: number) => (typeof v === 'string' ? v.replace(/\s+/g, ' ').slice(0, max) : '');
    const change =
      task[1] === 'create_task'
        ? `created "${text(args.title, 120)}"`
        : `${text(args.task_id, 64)}${args.status ? ` → ${text(args.status, 20)}` : ' updated'}`;
    return { tasks: [change] };
  }
  return undefined;
}

/** PostToolUse with HOOK_CAPTURE=1: adds what the tool touched to the session's record. */
export async function recordToolUse(call: HookCall): Promise<void> {
  if (!call.session) return;
  const touches = touchesOf(call);
  if (!touches) return;
  await addTouches(call.ctx.db, call.session, { ...touches, project: call.scope.project }, call.settings.sessionTtlMs);
}

const list = (items: string[]) =>
  items.length <= LISTED ? items.join(', ') : `${items.slice(0, LISTED).join(', ')} and ${items.length - LISTED} more`;

/**
 * SessionEnd with HOOK_CAPTURE=1: the session's files and task changes as one `context` memory in
 * its project (never the transcript); nothing when it touched nothing, or when the caller may not
 * write to the project (refused silently: a hook never fails a session). The record goes either way.
 */
export async function storeCapture(call: HookCall): Promise<string | undefined> {
  if (!call.session) return undefined;
  const touched = await takeTouches(call.ctx.db, call.session);
  if (!touched) return undefined;
  const { filesEdited, filesRead, tasks } = touched;
  if (filesEdited.length + filesRead.length + tasks.length === 0) return undefined;
  const project = touched.project ?? call.scope.project;
  if (!maySeeProject(call.ctx.caller, project)) return undefined;
  const lines = [
    `Claude Code session ${call.session.sessionId.slice(0, 36)} (${touched.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC` +
      `${call.input.reason ? `, ended: ${call.input.reason}` : ''}${call.ctx.caller.name ? `, key ${call.ctx.caller.name}` : ''}).`,
    ...(filesEdited.length ? [`Files edited: ${list(filesEdited)}.`] : []),
    ...(tasks.length ? [`Task changes: ${list(tasks)}.`] : []),
    ...(filesRead.length ? [`Files read: ${list(filesRead)}.`] : []),
  ];
  const stored = await storeMemory(call.ctx, {
    content: lines.join('\n').slice(0, CAPTURE_CHARS),
    content_type: 'context',
    project,
    keywords: ['claude-code-session'],
  });
  return stored.memory_id;
}
