import pg from 'pg';
import type { TaskStatus } from '../../src/db/schema.js';
import type { ServiceProcess } from '../lib/child.js';
import type { Ledger } from './ledger.js';

/** Every write in the ledger checked against the database (and a sample through the service's REST API). */
export async function verifyLedger(dbUrl: string, service: ServiceProcess | null, ledger: Ledger) {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const taskIds = [...ledger.tasks.keys()];
    const { rows: taskRows } = await client.query<{
      id: string;
      title: string;
      description: string;
      task_type: string;
      priority: number;
      status: string;
      phase_name: string;
      project: string;
    }>(
      `select t.id, t.title, t.description, t.task_type, t.priority, t.status, ph.name as phase_name, p.title as project
         from micro_tasks t join phases ph on ph.id = t.phase_id join intervention_plans p on p.id = ph.plan_id
        where t.id = any($1)`,
      [taskIds],
    );
    const byId = new Map(taskRows.map((r) => [r.id, r]));
    const lostTasks: string[] = [];
    const wrongTasks: string[] = [];
    let statusUncertainResolved = 0;
    for (const t of ledger.tasks.values()) {
      const row = byId.get(t.id);
      if (!row) {
        lostTasks.push(`${t.id} (${t.phase}: ${t.title})`);
        continue;
      }
      const diffs: string[] = [];
      for (const k of ['title', 'description', 'task_type', 'priority', 'phase_name', 'project'] as const) {
        if (row[k] !== t[k]) diffs.push(`${k}: ${JSON.stringify(row[k])} ≠ ${JSON.stringify(t[k])}`);
      }
      if (row.status !== t.status) {
        if (t.uncertain.has(row.status as TaskStatus)) statusUncertainResolved++;
        else
          diffs.push(
            `status: ${row.status} ≠ acknowledged ${t.status}${t.uncertain.size ? ` (or unacknowledged ${[...t.uncertain].join('/')})` : ''}`,
          );
      }
      if (diffs.length) wrongTasks.push(`${t.id}: ${diffs.join('; ')}`);
    }

    const memIds = [...ledger.memories.keys()];
    const { rows: memRows } = await client.query<{
      id: string;
      content: string;
      content_type: string;
      keywords: string[];
      project: string | null;
      task_id: string | null;
      archived_at: Date | null;
      embedded: boolean;
    }>(
      `select m.id, m.content, m.content_type, m.keywords, p.title as project, m.task_id, m.archived_at,
              exists (select 1 from memory_vectors v where v.memory_id = m.id) as embedded
         from semantic_memory m left join intervention_plans p on p.id = m.project_id
        where m.id = any($1)`,
      [memIds],
    );
    const memById = new Map(memRows.map((r) => [r.id, r]));
    const lostMemories: string[] = [];
    const wrongMemories: string[] = [];
    let notEmbedded = 0;
    for (const m of ledger.memories.values()) {
      const row = memById.get(m.id);
      if (!row || row.archived_at) {
        lostMemories.push(`${m.id} (${m.phase}: ${m.content.slice(0, 60)})`);
        continue;
      }
      if (!row.embedded) notEmbedded++;
      const diffs: string[] = [];
      if (row.content !== m.content) diffs.push('content');
      if (row.content_type !== m.content_type) diffs.push(`content_type ${row.content_type} ≠ ${m.content_type}`);
      if ([...row.keywords].sort().join(',') !== [...m.keywords].sort().join(','))
        diffs.push(`keywords ${row.keywords} ≠ ${m.keywords}`);
      if (row.project !== m.project) diffs.push(`project ${row.project} ≠ ${m.project}`);
      if (row.task_id !== m.task_id) diffs.push(`task_id ${row.task_id} ≠ ${m.task_id}`);
      if (diffs.length) wrongMemories.push(`${m.id}: ${diffs.join('; ')}`);
    }

    // Failed writes that were committed all the same (the answer was lost, not the write).
    const { rows: committedCreates } = await client.query<{ n: number }>(
      'select count(*)::int as n from micro_tasks where title = any($1)',
      [ledger.failedCreates.map((f) => f.title)],
    );
    const { rows: committedStores } = await client.query<{ n: number }>(
      'select count(*)::int as n from semantic_memory where content = any($1)',
      [ledger.failedStores.map((f) => f.content)],
    );

    // The same through the service (REST), for a sample: the service answers them after the outage.
    const sample = memIds.filter((_, i) => i % Math.max(1, Math.floor(memIds.length / 25)) === 0).slice(0, 25);
    let restOk = 0;
    const restFailures: string[] = [];
    for (const id of service ? sample : []) {
      const res = await fetch(`${service!.url}/api/v1/memories/${id}`);
      const body = (await res.json()) as any;
      if (res.status === 200 && body.memory?.content === ledger.memories.get(id)!.content) restOk++;
      else restFailures.push(`${id}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    const taskSample = service ? taskIds.slice(-10) : [];
    for (const id of taskSample) {
      const t = ledger.tasks.get(id)!;
      const res = await fetch(`${service!.url}/api/v1/tasks?project=${encodeURIComponent(t.project)}&limit=500`);
      const body = (await res.json()) as any;
      if (res.status === 200) restOk++;
      else restFailures.push(`tasks?project=${t.project}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }

    const byPhase = (m: Map<string, { phase: string }>) => {
      const out: Record<string, number> = {};
      for (const e of m.values()) out[e.phase] = (out[e.phase] ?? 0) + 1;
      return out;
    };
    return {
      acknowledged: {
        tasks_created: ledger.tasks.size,
        tasks_created_by_phase: byPhase(ledger.tasks),
        task_final_status_checked: ledger.tasks.size,
        memories: ledger.memories.size,
        memories_by_phase: byPhase(ledger.memories),
      },
      lost_writes: lostTasks.length + lostMemories.length + wrongTasks.length + wrongMemories.length,
      lost_tasks: lostTasks.slice(0, 20),
      wrong_tasks: wrongTasks.slice(0, 20),
      lost_memories: lostMemories.slice(0, 20),
      wrong_memories: wrongMemories.slice(0, 20),
      status_of_unacknowledged_update_applied: statusUncertainResolved,
      ack_inconsistencies: ledger.inconsistencies.slice(0, 20),
      ack_inconsistency_count: ledger.inconsistencies.length,
      failed_creates: ledger.failedCreates.length,
      failed_creates_committed_anyway: committedCreates[0]?.n ?? 0,
      failed_stores: ledger.failedStores.length,
      failed_stores_committed_anyway: committedStores[0]?.n ?? 0,
      memories_without_vector_yet: notEmbedded,
      rest_spot_checks: {
        ok: restOk,
        of: (service ? sample.length : 0) + taskSample.length,
        failures: restFailures.slice(0, 10),
      },
    };
  } finally {
    await client.end();
  }
}
