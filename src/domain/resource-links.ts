import type { Memory } from './memory/model.js';
import type { PlanSummary, Task } from './tasks/model.js';

/**
 * A pointer to an item a client can read without another search: the MCP adapter sends it as a
 * `resource_link` content item (application/json) after a tool result's text, and serves the URI
 * as a resource (src/mcp/resources.ts).
 */
export interface ResourceLink {
  uri: string;
  /** What a client shows for the link. */
  name: string;
}

/** A task's resource URI: subscribers hear `notifications/resources/updated` for it when it changes. */
export const taskUri = (id: string) => `devstream://task/${id}`;
/** A plan's resource URI: the plan with its phases and their task counts. */
export const planUri = (id: string) => `devstream://plan/${id}`;
/** A memory's resource URI: the memory as devstream_get_memory gives it. */
export const memoryUri = (id: string) => `devstream://memory/${id}`;

export const taskLink = (task: Pick<Task, 'id' | 'title'>): ResourceLink => ({
  uri: taskUri(task.id),
  name: task.title,
});
export const planLink = (plan: Pick<PlanSummary, 'id' | 'title'>): ResourceLink => ({
  uri: planUri(plan.id),
  name: plan.title,
});
export const memoryLink = (memory: Pick<Memory, 'memory_id' | 'content_type'>): ResourceLink => ({
  uri: memoryUri(memory.memory_id),
  name: `${memory.content_type} memory ${memory.memory_id}`,
});
