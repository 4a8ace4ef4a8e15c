import assert from 'node:assert/strict';
import { rest } from './server.js';
import { taskInput } from './task-input.js';

/**
 * Creates a coding task `title` in `project` (phase "P", description "d") over POST /api/v1/tasks on the
 * service at `url`; the task as the answer gives it. Fails the test unless it was created (201).
 */
export async function postTask(
  url: string,
  title: string,
  project: string,
  priority = 5,
  headers: Record<string, string> = {},
): Promise<any> {
  const created = await rest(url, 'POST', '/api/v1/tasks', taskInput({ title, priority, project }), headers);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.task;
}
