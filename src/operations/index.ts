import type { AnyOperation } from './operation.js';
import { codeGraphOperations } from './devlens.js';
import { jobOperations } from './jobs.js';
import { keyOperations } from './keys.js';
import { memoryOperations } from './memory.js';
import { taskOperations } from './tasks.js';

/** Every operation the service offers; the MCP and HTTP adapters loop over this list. */
export const operations: AnyOperation[] = [
  ...taskOperations,
  ...memoryOperations,
  ...codeGraphOperations,
  ...jobOperations,
  ...keyOperations,
] as unknown as AnyOperation[];

/** The operations exposed as MCP tools (and at POST /api/v1/tools/{name}). */
export const tools: AnyOperation[] = operations.filter((op) => op.tool !== false);
