import type { TaskStatus } from '../../src/db/schema.js';

// The ledger: every write the service acknowledged, and the writes whose outcome is unknown.

export interface TaskEntry {
  id: string;
  phase: string;
  title: string;
  description: string;
  task_type: string;
  priority: number;
  project: string;
  phase_name: string;
  /** The last acknowledged status. */
  status: TaskStatus;
  /** Statuses sent after that, whose call failed: the write may or may not have happened. */
  uncertain: Set<TaskStatus>;
}

export interface MemoryEntry {
  id: string;
  phase: string;
  content: string;
  content_type: string;
  keywords: string[];
  project: string;
  task_id: string | null;
}

export class Ledger {
  readonly tasks = new Map<string, TaskEntry>();
  readonly memories = new Map<string, MemoryEntry>();
  /** Titles of creates that failed (were they committed anyway?). */
  readonly failedCreates: Array<{ phase: string; title: string }> = [];
  /** Contents of stores that failed. */
  readonly failedStores: Array<{ phase: string; content: string }> = [];
  /** Acknowledgements that contradict an earlier one (previous_status not what we last saw acknowledged). */
  readonly inconsistencies: string[] = [];
}
