import type { CreateTaskResult } from './create-task.js';
import type { UpdateTaskResult } from './update-task.js';
import { priorityLabel, type PlanDetail, type PlanSummary, type Task } from './model.js';
import { groupBy } from '../group-by.js';
import { preview } from '../preview.js';

const TASK_ICON: Record<Task['status'], string> = {
  pending: '⏳',
  active: '🔄',
  completed: '✅',
  failed: '❌',
  skipped: '⏭️',
};
const PLAN_ICON: Record<PlanSummary['status'], string> = {
  draft: '📝',
  active: '🔄',
  completed: '✅',
  paused: '⏸️',
  archived: '📦',
  cancelled: '🚫',
};
const PHASE_ICON: Record<PlanSummary['phases'][number]['status'], string> = {
  pending: '⏳',
  active: '🔄',
  completed: '✅',
  blocked: '⛔',
  skipped: '⏭️',
};

/** Text blocks show the first characters of a description, then `…`; structuredContent has it whole. */
const PREVIEW_CHARS = 160;

const percent = (done: number, total: number) => (total === 0 ? 0 : Math.round((done / total) * 100));

function renderTaskLines(task: Task): string[] {
  return [
    `${TASK_ICON[task.status]} **[${task.status.toUpperCase()}]** ${task.title}`,
    `   📝 ${preview(task.description, PREVIEW_CHARS)}`,
    `   🏷️ Type: ${task.task_type} | Priority: ${task.priority}/10 (${priorityLabel(task.priority)})`,
    `   🆔 ID: \`${task.id}\``,
  ];
}

/** DevStream's task list: grouped by project, then phase, in the order the tasks came. */
export function renderTaskList(
  out: { tasks: Task[]; total: number },
  input: { status?: string | undefined; project?: string | undefined; priority?: number | undefined; offset: number },
): string {
  const lines = ['📋 **DevStream Tasks**', ''];
  if (out.tasks.length === 0) lines.push('No tasks match.', '');
  for (const [project, tasks] of groupBy(out.tasks, (t) => t.project)) {
    lines.push(`## 🎯 ${project}`, '');
    for (const [phase, phaseTasks] of groupBy(tasks, (t) => t.phase_name)) {
      lines.push(`### 📁 ${phase}`, '');
      for (const task of phaseTasks) lines.push(...renderTaskLines(task), '');
    }
  }
  const filters = [
    input.status ? `Status: ${input.status}` : null,
    input.project ? `Project: ${input.project}` : null,
    input.priority !== undefined ? `Priority ≥ ${input.priority}` : null,
  ].filter(Boolean);
  const shown =
    out.tasks.length < out.total
      ? ` (showing ${input.offset + 1}–${input.offset + out.tasks.length}; use offset to see more)`
      : '';
  lines.push(
    `📊 **Summary**: ${out.total} task${out.total === 1 ? '' : 's'} found${shown}${filters.length ? ` • ${filters.join(' • ')}` : ''}`,
  );
  return lines.join('\n');
}

export function renderCreatedTask(out: CreateTaskResult): string {
  const t = out.task;
  const lines = [
    '✅ **Task Created Successfully**',
    '',
    `📝 **Title**: ${t.title}`,
    `📁 **Phase**: ${t.phase_name}`,
    `🎯 **Project**: ${t.project}`,
    `🏷️ **Type**: ${t.task_type}`,
    `⭐ **Priority**: ${t.priority}/10`,
    `🆔 **Task ID**: \`${t.id}\``,
  ];
  if (out.auto_created.project || out.auto_created.phase) {
    lines.push('', '🤖 **Auto-Creation Protocol Activated**');
    if (out.auto_created.project) lines.push(`   📋 Created project: "${t.project}"`);
    if (out.auto_created.phase) lines.push(`   📁 Created phase: "${t.phase_name}"`);
  }
  lines.push('', `The task has been added to the "${t.phase_name}" phase and is ready for execution.`);
  return lines.join('\n');
}

export function renderUpdatedTask(out: UpdateTaskResult, input: { notes?: string | undefined }): string {
  const lines = [
    '✅ **Task Updated Successfully**',
    '',
    `📝 **Task**: ${out.task.title}`,
    `📊 **Status**: ${out.previous_status} → **${out.task.status.toUpperCase()}**`,
    `🆔 **Task ID**: \`${out.task.id}\``,
  ];
  if (input.notes) lines.push('', `📝 **Notes**: ${input.notes}`);
  if (out.memory_id) lines.push(`🧠 **Memory ID**: \`${out.memory_id}\` (the notes, as a searchable decision memory)`);
  lines.push('', 'The task status has been updated and logged in the DevStream database.');
  return lines.join('\n');
}

function renderPlanLines(plan: PlanSummary): string[] {
  const lines = [
    `${PLAN_ICON[plan.status]} **${plan.title}**`,
    `📊 Status: **${plan.status.toUpperCase()}** | Priority: ${plan.priority}/10 (${priorityLabel(plan.priority)})`,
    `📈 Progress: ${percent(plan.phases_completed, plan.phases_total)}% phases (${plan.phases_completed}/${plan.phases_total}) • ` +
      `${percent(plan.tasks_completed, plan.tasks_total)}% tasks (${plan.tasks_completed}/${plan.tasks_total})`,
  ];
  if (plan.estimated_hours !== null)
    lines.push(`⏱️ Time: ${(plan.actual_hours ?? 0).toFixed(1)}/${plan.estimated_hours} hours`);
  if (plan.description) lines.push(`📝 ${preview(plan.description, PREVIEW_CHARS)}`);
  if (plan.objectives.length) {
    lines.push('🎯 **Objectives**:', ...plan.objectives.map((o, i) => `   ${i + 1}. ${o}`));
  }
  lines.push(`🆔 ID: \`${plan.id}\``);
  if (plan.phases.length) {
    lines.push('', '   📁 **Phases**:');
    for (const ph of plan.phases) {
      lines.push(
        `   ${PHASE_ICON[ph.status]} ${ph.name} (${ph.status}) — ${ph.tasks_completed}/${ph.tasks_total} tasks done`,
      );
    }
  }
  return lines;
}

export function renderPlanList(
  out: { plans: PlanSummary[]; total: number },
  input: { status?: string | undefined; offset: number },
): string {
  const lines = ['📋 **DevStream Intervention Plans**', ''];
  if (out.plans.length === 0) lines.push('No plans match.', '');
  for (const plan of out.plans) lines.push(...renderPlanLines(plan), '');
  const shown =
    out.plans.length < out.total
      ? ` (showing ${input.offset + 1}–${input.offset + out.plans.length}; use offset to see more)`
      : '';
  lines.push(
    `📊 **Summary**: ${out.total} plan${out.total === 1 ? '' : 's'} found${shown}${input.status ? ` • Status: ${input.status}` : ''}`,
  );
  return lines.join('\n');
}

export function renderPlan(out: { plan: PlanDetail }): string {
  const lines = renderPlanLines(out.plan);
  for (const phase of out.plan.phases) {
    if (phase.tasks.length === 0) continue;
    lines.push('', `### 📁 ${phase.name}`, '');
    for (const task of phase.tasks) lines.push(...renderTaskLines(task), '');
  }
  return lines.join('\n');
}
