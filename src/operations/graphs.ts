import { z } from 'zod';
import { deleteGraph, DeleteGraphResultSchema, listGraphs, ListGraphsResultSchema } from '../domain/graphs/graphs.js';
import { graphId } from '../domain/fields.js';
import { defineOperation } from './operation.js';

export const listGraphsOp = defineOperation({
  name: 'devstream_list_graphs',
  title: 'List code graphs',
  description:
    'Every uploaded code graph (a repository) with its latest commit, node and edge counts, and how many commits are kept.',
  action: 'listing graphs',
  input: z.strictObject({}),
  output: ListGraphsResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // Agents reach this through the DevLens `repo` tool (action "list").
  tool: false,
  routes: [{ method: 'GET', path: '/graphs' }],
  handler: listGraphs,
  render: (out) => JSON.stringify(out, null, 2),
});

export const deleteGraphOp = defineOperation({
  name: 'devstream_delete_graph',
  title: 'Delete code graph',
  description: 'Delete a code graph with every commit of it.',
  action: 'deleting graph',
  input: z.strictObject({ graphId: graphId.describe('The graph to delete') }),
  output: DeleteGraphResultSchema,
  scope: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  tool: false,
  routes: [{ method: 'DELETE', path: '/graphs/:graphId' }],
  handler: deleteGraph,
  render: (out) => JSON.stringify(out),
});

export const graphOperations = [listGraphsOp, deleteGraphOp];
