import { forgetInjected } from '../../db/queries/hook-sessions.js';
import { listTasks } from '../tasks/list-tasks.js';
import { recentMemories } from '../memory/recent-memories.js';
import { preview } from '../preview.js';
import { ContextBudget } from './context-budget.js';
import { given, notGivenYet, type HookCall } from './hook-call.js';
import { memoryItem, memoryLine } from './hook-lines.js';

/** How far back SessionStart looks for decisions and errors. */
const RECENT_DAYS = 30;

/**
 * SessionStart: where the project stands — its active tasks and the top pending ones, the latest
 * decisions and errors, and whether the code graph is at the session's commit. After `clear` or
 * `compact` the model no longer holds what earlier hooks gave it: the session's record is reset first.
 */
export async function sessionStartContext(call: HookCall): Promise<string> {
  const { ctx, scope, input } = call;
  if (call.session && (input.source === 'clear' || input.source === 'compact')) {
    await forgetInjected(ctx.db, call.session);
  }
  const since = new Date(Date.now() - RECENT_DAYS * 86_400_000);
  const [active, pending, memories] = scope.projectExists
    ? await Promise.all([
        listTasks(ctx, { project: scope.project, status: 'active', limit: 5, offset: 0 }),
        listTasks(ctx, { project: scope.project, status: 'pending', limit: 5, offset: 0 }),
        recentMemories(ctx, { project: scope.project, types: ['decision', 'error'], since, limit: 10 }),
      ])
    : [{ tasks: [], total: 0 }, { tasks: [], total: 0 }, []];
  const fresh = await notGivenYet(
    call,
    memories.map((m) => memoryItem(m.id)),
  );
  const budget = new ContextBudget(
    call.settings.contextTokens,
    `DevStream Hub (team memory) for project "${scope.project}":`,
  );
  const taskLine = (t: (typeof active.tasks)[number]) =>
    `- ${t.id} [${t.status}, priority ${t.priority}, ${t.phase_name}] ${preview(t.title, 120)}`;
  budget.heading(`Active tasks (${active.total}):`);
  for (const t of active.tasks) budget.add(taskLine(t));
  budget.heading(`Next pending tasks (${pending.total}):`);
  for (const t of pending.tasks) budget.add(taskLine(t));
  const shown: string[] = [];
  for (const type of ['decision', 'error'] as const) {
    budget.heading(type === 'decision' ? 'Latest decisions:' : 'Latest errors:');
    for (const m of memories) {
      if (m.content_type !== type || !fresh.has(memoryItem(m.id))) continue;
      if (budget.add(memoryLine({ ...m, memory_id: m.id }))) shown.push(memoryItem(m.id));
    }
  }
  if (scope.graph) {
    const g = scope.graph;
    const at = `commit ${g.commitHash.slice(0, 12)}, analyzed ${g.analyzedAt.slice(0, 10)}`;
    const sent = call.commit;
    const state =
      sent === undefined
        ? ''
        : g.commitHash.startsWith(sent.toLowerCase()) || sent.toLowerCase().startsWith(g.commitHash)
          ? '; it is the commit this session is at'
          : `; this session is at ${sent.slice(0, 12)}: answers about code may be stale until a newer analysis is uploaded`;
    budget.heading('Code graph:');
    budget.add(`- ${g.repo}: latest upload is ${at}${state}. Ask resolve_context or find_symbols about its code.`);
  }
  await given(call, shown);
  return budget.text();
}
