/** The mix each session loops over: tool → weight. */
export const MIX: ReadonlyArray<readonly [ToolName, number]> = [
  ['devstream_create_task', 14],
  ['devstream_update_task', 14],
  ['devstream_list_tasks', 16],
  ['devstream_store_memory', 16],
  ['devstream_search_memory', 20],
  ['find_symbols', 10],
  ['resolve_context', 10],
];
export type ToolName =
  | 'devstream_create_task'
  | 'devstream_update_task'
  | 'devstream_list_tasks'
  | 'devstream_store_memory'
  | 'devstream_search_memory'
  | 'find_symbols'
  | 'resolve_context';
export const TOOLS = MIX.map(([t]) => t);
