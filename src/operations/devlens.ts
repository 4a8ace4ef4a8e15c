import { z } from 'zod';
import { findSymbols, FindSymbolsResultSchema, renderSymbols } from '../domain/graphs/find-symbols.js';
import { getNode, GetNodeResultSchema, NODE_PARTS, renderNode } from '../domain/graphs/get-node.js';
import { deleteGraph, DeleteGraphResultSchema, listGraphs, ListGraphsResultSchema } from '../domain/graphs/graphs.js';
import { DIRECTIONS, impact, ImpactResultSchema, renderImpact } from '../domain/graphs/impact.js';
import { knownSummaries, KnownSummariesResultSchema, MAX_CODE_HASHES } from '../domain/graphs/known-summaries.js';
import { INTENTS, resolveContext, ResolveContextResultSchema } from '../domain/graphs/resolve-context.js';
import { renderRepo, REPO_ACTIONS, RepoResultSchema, repoTool } from '../domain/graphs/repo-tool.js';
import { graphId, text } from '../domain/fields.js';
import { defineOperation } from './operation.js';

/**
 * The code-graph operations (one concept): listing and deleting uploaded graphs, and the DevLens
 * tools (../shared/spec/devlens-mcp-reference.md) with DevLens's names, arguments and camelCase
 * output. `repo` replaces DevLens's working-folder lookup (the server cannot see the client's
 * folder): a name, graphId or path suffix.
 */
const repo = text(500, { what: 'repo', trim: true, nonEmpty: true })
  .optional()
  .describe(
    'Repository: name, graphId or path ending in its name (default: ?repo= on the MCP URL, X-Repo, or the only graph)',
  );

export const findSymbolsOp = defineOperation({
  name: 'find_symbols',
  title: 'Find symbols',
  description:
    'Cheap symbol lookup in an uploaded code graph by name, path fragment or concept words: exact identifier ' +
    'matches first, then ranked matches (name > path > summaries), tests and generated files last. Returns nodeIds ' +
    'with file:line, no code. For a question in plain words prefer resolve_context.',
  action: 'finding symbols',
  input: z.strictObject({
    query: text(2000, { what: 'query', trim: true, nonEmpty: true }).describe('A symbol name, path fragment or words'),
    limit: z.number().int().min(1).max(25).default(10).describe('Results (1-25, default 10)'),
    repo,
  }),
  output: FindSymbolsResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'GET', path: '/symbols', query: { q: 'query' } }],
  handler: findSymbols,
  render: renderSymbols,
});

export const getNodeOp = defineOperation({
  name: 'get_node',
  title: 'Get node',
  description:
    'Full detail for one node of an uploaded code graph: technical, business and security summaries, metadata, ' +
    "callers and callees with edge types; include=['code'] adds the stored source. Pass a nodeId from " +
    'find_symbols/resolve_context (`<id>#<k>` for the k-th of repeated ids), or a symbol name to auto-locate (exact, ' +
    'any case; the best scored of that name, the others as alternatives). Anything else is NOT_FOUND with the ' +
    'closest symbols as suggestions (in the message and details.suggestions), never one of them as the answer.',
  action: 'getting node',
  input: z.strictObject({
    node: text(2000, { what: 'node', trim: true, nonEmpty: true }).describe('nodeId or symbol name'),
    include: z
      .array(z.enum(NODE_PARTS))
      .max(NODE_PARTS.length)
      .optional()
      .describe('Parts to return (default: all but code)'),
    repo,
  }),
  output: GetNodeResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'GET', path: '/nodes/:nodeId', params: { nodeId: 'node' } }],
  handler: getNode,
  render: renderNode,
});

export const repoOp = defineOperation({
  name: 'repo',
  title: 'Code graph repos',
  description:
    'Manage uploaded code graphs: list (every repo with its latest commit), health (summary coverage and ' +
    'dependency cycles as strongly connected components of CALLS/IMPORTS), freshness (latest uploaded commit against ' +
    'the commit you name) and analyze (with path: analyze a folder on the server as a background job, answering ' +
    'with its jobId; without: how to build and upload a graph).',
  action: 'reading repos',
  input: z.strictObject({
    action: z.enum(REPO_ACTIONS).describe('list | health | freshness | analyze'),
    repo,
    commit: text(100, { what: 'commit', trim: true })
      .optional()
      .describe('freshness: your commit (e.g. git rev-parse HEAD)'),
    path: text(4096, { what: 'path', trim: true, nonEmpty: true })
      .optional()
      .describe('analyze: an absolute folder on the server, inside ANALYZE_ROOTS'),
    branch: text(200, { what: 'branch', trim: true, nonEmpty: true })
      .optional()
      .describe('analyze: the branch the graph is recorded under'),
    summarize: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe("analyze with a path: also write summaries with the server's chat model (OLLAMA_SUMMARY_MODEL)"),
  }),
  output: RepoResultSchema,
  scope: 'read',
  // analyze with a path queues a job that stores a graph (a write); every other action only reads.
  scopeFor: (input) => (input.action === 'analyze' && input.path !== undefined ? 'write' : 'read'),
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  routes: [],
  handler: repoTool,
  render: renderRepo,
});

const commit = (what: string) => text(100, { what, trim: true, nonEmpty: true });

export const impactOp = defineOperation({
  name: 'impact',
  title: 'Change impact',
  description:
    'What breaks if a node changes: its upstream dependents (callers, importers… up to `radius` hops), or with ' +
    "direction='downstream' what it depends on, as compact file:line lines. With `from` and `to` commits: the nodes " +
    'ADDED, REMOVED and CODECHANGED between two uploaded commits, each with its direct dependents.',
  action: 'computing impact',
  input: z.strictObject({
    target: text(2000, { what: 'target', trim: true, nonEmpty: true }).optional().describe('nodeId or symbol name'),
    direction: z.enum(DIRECTIONS).default('upstream').describe('upstream (default) | downstream | both'),
    radius: z.number().int().min(1).max(5).default(2).describe('Hops (1-5, default 2)'),
    from: commit('from').optional().describe('Commit range: the older commit (hash or 7+ character prefix)'),
    to: commit('to').optional().describe('Commit range: the newer commit'),
    repo,
  }),
  output: ImpactResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [],
  handler: impact,
  render: renderImpact,
});

export const resolveContextOp = defineOperation({
  name: 'resolve_context',
  title: 'Resolve context',
  description:
    'The front door for questions about an uploaded code graph: one call returns a task-shaped plain-text packet — ' +
    'an ANSWER line, ranked nodes with one-line meanings, call flow, the files involved with matched-line snippets, ' +
    'security notes and an id map — within a token budget. Intents: pinpoint, reference-list, flow, overview, concept, ' +
    'security-audit, exploratory (default).',
  action: 'resolving context',
  input: z.strictObject({
    task: text(2000, { what: 'task', trim: true, nonEmpty: true }).describe('The question, in plain words'),
    intent: z.enum(INTENTS).default('exploratory').describe(INTENTS.join(' | ')),
    focus: z
      .array(text(2000, { what: 'focus entries', trim: true, nonEmpty: true }))
      .max(20, 'at most 20 focus entries')
      .optional()
      .describe('nodeIds, symbol names or file paths to center on'),
    tokenBudget: z
      .number()
      .int()
      .min(500)
      .max(100_000)
      .optional()
      .describe('500-100000 (default: by intent, scaled by repo size)'),
    repo,
    commitHash: commit('commitHash').optional().describe('Default: the latest uploaded commit'),
    code: z
      .boolean()
      .optional()
      .describe(
        "Add a CODE section with the source of the top nodes, cut to fit the budget (default: the service's DEVLENS_PACKET_CODE, off)",
      ),
  }),
  output: ResolveContextResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  routes: [{ method: 'POST', path: '/context' }],
  handler: resolveContext,
  render: (out) => out.packet,
});

/** The graph store's own operations (REST only): agents reach them through `repo`. */
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

export const knownSummariesOp = defineOperation({
  name: 'devstream_graph_summaries',
  title: 'Known summaries',
  description:
    "The model-written summaries the latest stored commit of a repo has for code of the given hashes (a node's " +
    'codeHash: SHA-256 of its code, 32 hex characters): what `analyze --summarize --upload` reuses instead of asking ' +
    'its model again about unchanged code.',
  action: 'reading known summaries',
  input: z.strictObject({
    repo: text(500, { what: 'repo', trim: true, nonEmpty: true }).describe('The repository the graph is stored under'),
    codeHashes: z
      .array(
        z
          .string()
          .max(32, 'must be 32 lowercase hex characters (a codeHash)')
          .regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex characters (a codeHash)'),
      )
      .max(MAX_CODE_HASHES, `at most ${MAX_CODE_HASHES} code hashes a request`)
      .describe(`Code hashes (at most ${MAX_CODE_HASHES})`),
  }),
  output: KnownSummariesResultSchema,
  scope: 'read',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // The analyzer's, not an agent's.
  tool: false,
  routes: [{ method: 'POST', path: '/graphs/summaries' }],
  handler: knownSummaries,
  render: (out) => JSON.stringify(out),
});

/** The graph store's operations, then the DevLens tools in their tools/list order. */
export const codeGraphOperations = [
  listGraphsOp,
  deleteGraphOp,
  knownSummariesOp,
  resolveContextOp,
  findSymbolsOp,
  getNodeOp,
  impactOp,
  repoOp,
];
