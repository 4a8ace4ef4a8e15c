import {
  ProtocolError,
  ProtocolErrorCode,
  type Prompt,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Context } from '../domain/context.js';
import { toFieldIssues } from '../domain/field-issues.js';
import { name, text } from '../domain/fields.js';
import { listGraphs } from '../domain/graphs/graphs.js';
import { QUESTION_WORDS } from '../domain/graphs/stop-words.js';
import { normalizeKeywords } from '../domain/memory/classify.js';
import { iso } from '../domain/iso-date.js';
import { recentMemories } from '../domain/memory/recent-memories.js';
import { projectNamesStarting } from '../domain/tasks/project-names.js';
import { validationError } from '../errors.js';
import { resolveContextOp } from '../operations/devlens.js';
import { invoke, toAppError } from '../operations/invoke.js';
import { listTasksOp } from '../operations/tasks.js';
import { requireRead } from './read-scope.js';

/** How far back `resume` looks for decisions and errors when no `since` is given. */
const RESUME_DAYS = 14;
/** Completion values at most (the specification's cap). */
const MAX_COMPLETIONS = 100;
/** Characters of a memory shown in `resume`. */
const MEMORY_PREVIEW = 300;

/**
 * The prompts (slash commands in Claude Code), both protocol eras. Arguments are strings, as MCP
 * passes them; each prompt checks its own with zod, and a missing or bad one is -32602 naming it.
 */
const PROMPTS: Array<Prompt & { input: z.ZodObject }> = [
  {
    name: 'resume',
    title: 'Resume a project',
    description:
      'Where a project stands: its active tasks, the next pending ones, and the decisions and errors recorded since a date (default: the last 14 days).',
    arguments: [
      { name: 'project', description: 'The project (exact name, case-insensitive)', required: true },
      { name: 'since', description: 'ISO date or time: decisions and errors from then on (default: 14 days ago)' },
    ],
    input: z.strictObject({
      project: name('project'),
      since: z.iso
        .date()
        .or(z.iso.datetime({ offset: true }))
        .optional()
        .describe('ISO date'),
    }),
  },
  {
    name: 'record-decision',
    title: 'Record a decision',
    description: 'Guidance to store a decision in the team memory with the right type and keywords.',
    arguments: [
      { name: 'decision', description: 'The decision, in a sentence or two', required: true },
      { name: 'project', description: 'The project it belongs to' },
    ],
    input: z.strictObject({
      decision: text(4000, { what: 'decision', trim: true, nonEmpty: true }),
      project: name('project').optional(),
    }),
  },
  {
    name: 'explain-code',
    title: 'Explain code',
    description:
      "A question about an uploaded code graph, with the resolve_context packet that answers it embedded, so the model starts from the graph's answer.",
    arguments: [
      { name: 'question', description: 'The question about the code, in plain words', required: true },
      { name: 'repo', description: 'The code graph (repository name); default: the only one, or ?repo= on the URL' },
    ],
    input: z.strictObject({
      question: text(2000, { what: 'question', trim: true, nonEmpty: true }),
      repo: name('repo', 500).optional(),
    }),
  },
];

/** What prompts/list shows (without the checks). */
const LISTED: Prompt[] = PROMPTS.map(({ input: _input, ...prompt }) => prompt);

/** A prompt's result: one user message. */
const userMessage = (description: string, body: string) => ({
  description,
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: body } }],
});

/** Words a decision is said in rather than about (beside the words no question is about). */
const DECISION_WORDS = new Set([
  'decide',
  'decided',
  'decision',
  'instead',
  'because',
  'rather',
  'from',
  'into',
  'with',
]);

/**
 * Words of a decision worth keeping as keywords: its first five distinct words of four or more
 * letters that are neither question words (stop-words.ts: "should", "would", "make"…) nor decision
 * words, normalised as stored keywords are.
 */
function suggestedKeywords(decision: string): string[] {
  const words = (decision.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]{3,}/gu) ?? []).filter(
    (w) => !QUESTION_WORDS.has(w) && !DECISION_WORDS.has(w),
  );
  return normalizeKeywords(words).slice(0, 5);
}

/**
 * prompts/list, prompts/get and completion/complete on `server`. `contextOf` gives a request's
 * Context (its caller, default repo and log), so a prompt reads with the caller's scopes.
 */
export function registerPrompts(server: Server, contextOf: (request: ServerContext) => Context): void {
  server.setRequestHandler('prompts/list', async () => ({ prompts: LISTED }));

  server.setRequestHandler('prompts/get', async (request, requestCtx) => {
    const prompt = PROMPTS.find((p) => p.name === request.params.name);
    if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const ctx = contextOf(requestCtx);
    requireRead(ctx.caller, 'getting a prompt');
    const parsed = prompt.input.safeParse(request.params.arguments ?? {});
    if (!parsed.success)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid arguments of prompt ${prompt.name}: ${validationError(toFieldIssues(parsed.error)).message}`,
      );
    try {
      return await getPrompt(ctx, prompt.name, parsed.data as Record<string, string | undefined>);
    } catch (thrown) {
      if (thrown instanceof ProtocolError) throw thrown;
      const error = toAppError(thrown, `getting prompt ${prompt.name}`);
      throw new ProtocolError(
        error.code === 'VALIDATION_ERROR' || error.code === 'NOT_FOUND'
          ? ProtocolErrorCode.InvalidParams
          : ProtocolErrorCode.InternalError,
        `${error.code}: ${error.message}`,
      );
    }
  });

  server.setRequestHandler('completion/complete', async (request, requestCtx) => {
    const { ref, argument } = request.params;
    const none = { completion: { values: [], total: 0, hasMore: false } };
    if (ref.type !== 'ref/prompt' || !PROMPTS.some((p) => p.name === ref.name)) return none;
    const prefix = argument.value.slice(0, 200);
    const ctx = contextOf(requestCtx);
    // Project and repo names are what the read scope lists.
    requireRead(ctx.caller, 'completing a prompt argument');
    if (argument.name === 'project') {
      const { titles, total } = await projectNamesStarting(ctx, prefix, MAX_COMPLETIONS);
      return { completion: { values: titles, total, hasMore: total > titles.length } };
    }
    if (argument.name === 'repo') {
      const lower = prefix.toLowerCase();
      const repos = [...new Set((await listGraphs(ctx)).graphs.map((g) => g.repo))]
        .filter((r) => r.toLowerCase().startsWith(lower))
        .sort((a, b) => a.localeCompare(b));
      return {
        completion: {
          values: repos.slice(0, MAX_COMPLETIONS),
          total: repos.length,
          hasMore: repos.length > MAX_COMPLETIONS,
        },
      };
    }
    return none;
  });
}

async function getPrompt(ctx: Context, promptName: string, args: Record<string, string | undefined>) {
  if (promptName === 'resume') {
    const project = args.project!;
    const since = args.since ? new Date(args.since) : new Date(Date.now() - RESUME_DAYS * 86_400_000);
    const [active, pending, memories] = await Promise.all([
      invoke(listTasksOp, ctx, { project, status: 'active', limit: 10 }),
      invoke(listTasksOp, ctx, { project, status: 'pending', limit: 5 }),
      recentMemories(ctx, { project, types: ['decision', 'error'], since, limit: 8 }),
    ]);
    const recorded =
      memories.length === 0
        ? 'None recorded.'
        : memories
            .map((m) => {
              const content = m.content.length > MEMORY_PREVIEW ? `${m.content.slice(0, MEMORY_PREVIEW)}…` : m.content;
              return `- ${m.content_type} (${iso(m.created_at).slice(0, 10)}, memory ${m.id}): ${content.replace(/\s+/g, ' ')}`;
            })
            .join('\n');
    return userMessage(
      `Where ${project} stands`,
      [
        `We are resuming work on the project "${project}". Here is where it stands.`,
        '',
        '## Active tasks',
        listTasksOp.render(active.output as never, active.input as never),
        '',
        '## Next pending tasks',
        listTasksOp.render(pending.output as never, pending.input as never),
        '',
        `## Decisions and errors since ${iso(since).slice(0, 10)}`,
        recorded,
        '',
        'Pick up the active task (or the first pending one), keep its status current with devstream_update_task, ' +
          'and search memory (devstream_search_memory) before re-deciding anything listed above.',
      ].join('\n'),
    );
  }
  if (promptName === 'record-decision') {
    const keywords = suggestedKeywords(args.decision!);
    const call = {
      content: args.decision,
      content_type: 'decision',
      ...(args.project ? { project: args.project } : {}),
      keywords,
    };
    return userMessage(
      'Store a decision in the team memory',
      [
        'Record this decision in the team memory so that other agents find it before deciding again:',
        '',
        `> ${args.decision!.replace(/\n/g, '\n> ')}`,
        '',
        'Call devstream_store_memory with content_type "decision"' +
          (args.project ? ` in project "${args.project}"` : '') +
          '. Write the content as the decision and its reason in one or two sentences, and add keywords a ' +
          'teammate would search for (the names of the components, libraries or files it is about). For example:',
        '',
        '```json',
        JSON.stringify(call, null, 2),
        '```',
      ].join('\n'),
    );
  }
  // explain-code
  const packet = await invoke(resolveContextOp, ctx, {
    task: args.question,
    ...(args.repo ? { repo: args.repo } : {}),
  });
  return userMessage(
    'A code question with its context packet',
    [
      'Answer this question about the code, starting from the context packet below (from the code graph the ' +
        'analyzer uploaded; its ANSWER line is the best match, the IDMAP names the nodes). Use get_node or ' +
        'find_symbols for more, and say which nodes the answer rests on.',
      '',
      `Question: ${args.question}`,
      '',
      '```',
      resolveContextOp.render(packet.output as never, packet.input as never),
      '```',
    ].join('\n'),
  );
}
