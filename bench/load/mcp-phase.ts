import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport, ProtocolError } from '@modelcontextprotocol/client';
import { CONTENT_TYPES, TASK_STATUSES, TASK_TYPES, type TaskStatus } from '../../src/db/schema.js';
import { INTENTS } from '../../src/domain/graphs/resolve-context.js';
import type { ServiceProcess } from '../lib/child.js';
import type { SeededData } from '../lib/seed.js';
import { PhaseRecorder } from './calls.js';
import type { Ledger } from './ledger.js';
import { MIX } from './mix.js';
import {
  CLAUSES,
  GRAPH_NOUNS,
  GRAPH_VERBS,
  LOAD_PHASES,
  LOAD_PROJECTS,
  TOPICS,
  memoryText,
  pickFrom,
  queryText,
  weighted,
} from './vocabulary.js';

// MCP sessions (the real SDK client over Streamable HTTP) looping the weighted mix: phases A and C.

export interface Slot {
  index: number;
  rand: () => number;
  seq: number;
  /** Tasks this slot created (acknowledged); only this slot updates them, one call at a time. */
  tasks: string[];
}

export interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

export interface World {
  service: ServiceProcess;
  seeded: SeededData;
  graphNames: string[];
  ledger: Ledger;
  /** ms a session waits after a failed call before its next one (a client's retry delay). */
  errorPauseMs: number;
  /** Set when the service process is found gone (Date.now()). */
  diedAt: number | null;
}

/** Whether a process is still there. */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The catalogue code of a failed call: from an isError result's text, else what the client threw. */
export function errorCode(error: unknown): { code: string; message: string } {
  if (error instanceof ProtocolError) return { code: `MCP_${error.code}`, message: error.message };
  const e = error as { name?: string; code?: unknown; message?: string; cause?: { code?: string; message?: string } };
  if (typeof e?.code === 'number' && /Streamable HTTP error/.test(e.message ?? ''))
    return { code: `HTTP_${e.code}`, message: e.message ?? '' };
  if (e?.cause?.code) return { code: `NET_${e.cause.code}`, message: `${e.message}: ${e.cause.message ?? ''}` };
  return { code: 'CLIENT_ERROR', message: e?.message ?? String(error) };
}

export async function connectSession(url: string): Promise<Session> {
  const client = new Client({ name: 'devstream-hub-bench-load', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url));
  await client.connect(transport);
  // As an agent does: the tool list first (the SDK then validates structuredContent against outputSchema).
  await client.listTools();
  return { client, transport };
}

export async function closeSession(s: Session): Promise<void> {
  await s.transport.terminateSession().catch(() => {});
  await s.client.close().catch(() => {});
}

/** One tool call of the mix, recorded, and the ledger updated with what it acknowledged. */
export async function oneCall(
  world: World,
  slot: Slot,
  session: Session,
  rec: PhaseRecorder,
  phase: string,
): Promise<boolean> {
  const { rand } = slot;
  let tool = weighted(rand, MIX);
  if (tool === 'devstream_update_task' && slot.tasks.length === 0) tool = 'devstream_create_task';
  const seq = slot.seq++;
  const tag = `s${slot.index}-${phase}${seq}`;
  let args: Record<string, unknown>;
  let onAck: (sc: any) => void = () => {};
  let onFail: () => void = () => {};
  switch (tool) {
    case 'devstream_create_task': {
      const title = `Load task ${tag} ${pickFrom(rand, TOPICS)}`;
      const a = {
        title,
        description: `${pickFrom(rand, CLAUSES)}. ${pickFrom(rand, CLAUSES)}.`,
        task_type: pickFrom(rand, TASK_TYPES),
        priority: 1 + Math.floor(rand() * 10),
        phase_name: pickFrom(rand, LOAD_PHASES),
        project: pickFrom(rand, LOAD_PROJECTS),
      };
      args = a;
      onAck = (sc) => {
        const id = sc.task.id as string;
        world.ledger.tasks.set(id, { id, phase, ...a, status: sc.task.status, uncertain: new Set() });
        slot.tasks.push(id);
      };
      onFail = () => world.ledger.failedCreates.push({ phase, title });
      break;
    }
    case 'devstream_update_task': {
      const id = pickFrom(rand, slot.tasks);
      const status = pickFrom(rand, TASK_STATUSES);
      const notes = rand() < 0.3 ? `load notes ${tag}: ${pickFrom(rand, CLAUSES)}` : undefined;
      args = { task_id: id, status, ...(notes ? { notes } : {}) };
      const entry = world.ledger.tasks.get(id)!;
      onAck = (sc) => {
        const prev = sc.previous_status as TaskStatus;
        if (prev !== entry.status && !entry.uncertain.has(prev)) {
          world.ledger.inconsistencies.push(
            `task ${id}: previous_status ${prev}, last acknowledged ${entry.status} (uncertain: ${[...entry.uncertain].join(',') || 'none'})`,
          );
        }
        entry.status = status;
        entry.uncertain.clear();
        if (notes && sc.memory_id) {
          world.ledger.memories.set(sc.memory_id, {
            id: sc.memory_id,
            phase,
            content: `Task status update: ${status}. Notes: ${notes}`,
            content_type: 'decision',
            keywords: ['task', 'update', status],
            project: entry.project,
            task_id: id,
          });
        }
      };
      onFail = () => entry.uncertain.add(status);
      break;
    }
    case 'devstream_list_tasks': {
      const project = rand() < 0.5 ? pickFrom(rand, LOAD_PROJECTS) : pickFrom(rand, world.seeded.plans).title;
      args = {
        project,
        limit: 20,
        ...(rand() < 0.3 ? { status: pickFrom(rand, TASK_STATUSES) } : {}),
        ...(rand() < 0.2 ? { priority: 6 } : {}),
      };
      break;
    }
    case 'devstream_store_memory': {
      const m = memoryText(rand, tag);
      const a = {
        content: m.content,
        content_type: pickFrom(rand, CONTENT_TYPES),
        keywords: m.keywords,
        project: pickFrom(rand, LOAD_PROJECTS),
      };
      args = a;
      onAck = (sc) => {
        world.ledger.memories.set(sc.memory_id, {
          id: sc.memory_id,
          phase,
          content: a.content,
          content_type: a.content_type,
          keywords: sc.keywords,
          project: a.project,
          task_id: null,
        });
      };
      onFail = () => world.ledger.failedStores.push({ phase, content: a.content });
      break;
    }
    case 'devstream_search_memory':
      args = { query: queryText(rand), limit: 10, ...(rand() < 0.5 ? { project: pickFrom(rand, LOAD_PROJECTS) } : {}) };
      break;
    case 'find_symbols':
      args = {
        query:
          rand() < 0.4
            ? pickFrom(rand, world.graphNames)
            : `${pickFrom(rand, GRAPH_VERBS)} ${pickFrom(rand, GRAPH_NOUNS)} ${pickFrom(rand, GRAPH_NOUNS)}`,
        repo: 'synthetic',
      };
      break;
    case 'resolve_context':
      args = {
        task: `how does ${pickFrom(rand, GRAPH_VERBS)} ${pickFrom(rand, GRAPH_NOUNS)} reach the ${pickFrom(rand, GRAPH_NOUNS)}`,
        intent: pickFrom(rand, INTENTS),
        repo: 'synthetic',
      };
      break;
  }

  const start = rec.now();
  let ok = false;
  let code: string | undefined;
  let message = '';
  try {
    const result = await session.client.callTool({ name: tool, arguments: args }, { timeout: 20_000 });
    if (result.isError) {
      const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';
      code = /^❌ Error [^:]*: ([A-Z_]+):/.exec(text)?.[1] ?? 'TOOL_ERROR';
      message = text;
    } else {
      ok = true;
      onAck(result.structuredContent);
    }
  } catch (error) {
    ({ code, message } = errorCode(error));
  }
  const end = rec.now();
  if (!ok) {
    onFail();
    if (!rec.examples.has(code!)) rec.examples.set(code!, `${tool}: ${message.slice(0, 300)}`);
  }
  rec.events.push({ tool, start, end, ok, ...(code ? { code } : {}) });
  return ok;
}

/** `sessions` MCP sessions looping the mix until `seconds` have passed; `during` runs alongside. */
export async function runMcpPhase(
  world: World,
  slots: Slot[],
  phase: string,
  seconds: number,
  during?: (rec: PhaseRecorder) => Promise<void>,
): Promise<{ rec: PhaseRecorder; elapsedMs: number; connectMs: number; diedAtMs: number | null }> {
  const c0 = performance.now();
  const sessions = await Promise.all(slots.map(() => connectSession(world.service.url)));
  const connectMs = performance.now() - c0;
  const rec = new PhaseRecorder();
  const endAt = seconds * 1000;
  let diedAtMs: number | null = null;
  // A dead service ends the phase: its sessions are closed at once (in-flight calls fail now, not at their timeout).
  const watch = setInterval(() => {
    if (diedAtMs !== null || alive(world.service.pid)) return;
    diedAtMs = rec.now();
    world.diedAt = Date.now();
    for (const s of sessions) void s.client.close().catch(() => {});
  }, 100);
  try {
    const loops = slots.map(async (slot, i) => {
      while (rec.now() < endAt && diedAtMs === null) {
        const ok = await oneCall(world, slot, sessions[i]!, rec, phase);
        if (!ok && world.errorPauseMs > 0 && diedAtMs === null) await sleep(world.errorPauseMs);
      }
    });
    await Promise.all([...loops, during?.(rec)]);
  } finally {
    clearInterval(watch);
    await Promise.all(sessions.map(closeSession));
  }
  // Calls start until endAt (those in flight then finish after it): rates are over the window they started in.
  return { rec, elapsedMs: Math.min(rec.now(), endAt, diedAtMs ?? Infinity), connectMs, diedAtMs };
}
