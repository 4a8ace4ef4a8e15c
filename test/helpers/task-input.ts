/**
 * The arguments of a new task (POST /api/v1/tasks, devstream_create_task): a coding task of priority 5
 * in phase "P", description "d", with `fields` (its title, project …) over those.
 */
export function taskInput(fields: { title: string } & Record<string, unknown>): Record<string, unknown> {
  return { description: 'd', task_type: 'coding', priority: 5, phase_name: 'P', ...fields };
}
