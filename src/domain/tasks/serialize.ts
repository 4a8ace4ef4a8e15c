import type { TaskRow } from '../../db/queries/tasks.js';
import type { Task } from './model.js';
import { iso, isoOrNull } from '../iso-date.js';

/** A database task row as the API shows it (timestamps in ISO 8601). */
export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    task_type: row.task_type,
    status: row.status,
    priority: row.priority,
    phase_id: row.phase_id,
    phase_name: row.phase_name,
    project: row.project,
    assigned_agent: row.assigned_agent,
    created_by: row.created_by,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    started_at: isoOrNull(row.started_at),
    completed_at: isoOrNull(row.completed_at),
  };
}
