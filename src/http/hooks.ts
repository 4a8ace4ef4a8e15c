import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isTokenCaller } from '../auth/oauth/claims.js';
import type { Caller } from '../auth/scopes.js';
import { requireScope } from '../auth/scopes.js';
import { sweepHookRows } from '../db/queries/hook-sessions.js';
import type { Context, Services } from '../domain/context.js';
import { toFieldIssues } from '../domain/field-issues.js';
import { name } from '../domain/fields.js';
import { answerHook, recordsFor } from '../domain/hooks/claude-code.js';
import type { HookSettings } from '../domain/hooks/hook-call.js';
import {
  HookInputSchema,
  HookOutputSchema,
  isHookEvent,
  type HookOutcome,
  type HookOutput,
} from '../domain/hooks/hook-input.js';
import { hookScope } from '../domain/hooks/hook-scope.js';
import { validationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { toAppError } from '../operations/invoke.js';
import { repoHeader } from '../repo-header.js';
import { ErrorBodySchema } from './operation-routes.js';

export const HOOK_PATH = '/api/v1/hooks/claude-code';

/** Expired hook rows are swept at most this often per instance, in the background of a hook call. */
const SWEEP_EVERY_MS = 10 * 60_000;
const SWEEP_BATCH = 10_000;

const QuerySchema = z.strictObject({
  project: name('project')
    .optional()
    .describe('The project (default: the working folder’s name, else DEFAULT_PROJECT)'),
  repo: name('repo', 500).optional().describe('The code graph (default: X-Repo, else the working folder’s name)'),
  commit: z
    .string()
    .regex(/^[0-9a-fA-F]{7,64}$/, 'must be a commit hash (7-64 hex characters)')
    .optional()
    .describe("The checkout's commit, for SessionStart's graph freshness line"),
});

/**
 * Whose a Claude Code session's rows are (what it was given, what it touched): the key's name ('' with
 * AUTH=off), or `token:<subject>` for an access token's caller, never shared with a key of that name
 * (as MCP sessions and rate limits are kept apart; no key name holds a colon).
 */
const sessionCaller = (caller: Caller): string =>
  caller.name === null ? '' : isTokenCaller(caller) ? `token:${caller.name}` : caller.name;

export interface HookRouteOptions {
  services: Services;
  settings: HookSettings;
  metrics: Metrics;
  callerOf(request: FastifyRequest): Caller;
}

/**
 * `POST /api/v1/hooks/claude-code`: Claude Code's hooks served by the hub (domain/hooks). The body is
 * Claude Code's hook input as it is; the answer its hook output. Bad input is 400 and a missing
 * scope 403, as everywhere; any other failure — the database down included, before the handler
 * (authentication) or in it — answers 200 with no context and is logged: a hook never holds up or
 * breaks the session it serves.
 */
export async function registerHookRoutes(app: FastifyInstance, options: HookRouteOptions): Promise<void> {
  const { metrics, settings } = options;
  const label = (event: string) => (isHookEvent(event) ? event : 'other');
  let lastSweep = 0;
  let sweeping: Promise<void> | undefined;
  app.addHook('onClose', async () => {
    await sweeping;
  });
  const sweepSometimes = (log: Logger) => {
    const now = Date.now();
    if (sweeping || now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    sweeping = sweepHookRows(options.services.db, SWEEP_BATCH)
      .then((n) => {
        if (n > 0) log.debug({ removed: n }, 'swept expired hook sessions');
      })
      .catch((error: unknown) => log.warn({ err: error }, 'could not sweep expired hook sessions'))
      .finally(() => {
        sweeping = undefined;
      });
  };

  await app.register(async (scope) => {
    // Failures outside the handler (authentication with the database down: 503) answer as failures
    // inside it do: 200, no context. Client errors (400, 401, 403, 413, 429) pass on as they are.
    scope.setErrorHandler((thrown: FastifyError, request, reply) => {
      const error = toAppError(thrown, 'answering a Claude Code hook');
      if (error.status < 500) throw thrown;
      request.log.warn({ err: thrown, code: error.code }, 'Claude Code hook failed: answered with no context');
      const event = (request.body as { hook_event_name?: unknown } | undefined)?.hook_event_name;
      metrics.hookCalls.observe({ event: label(typeof event === 'string' ? event : ''), outcome: 'failed' }, 0);
      return reply.code(200).send({});
    });

    scope.post(
      HOOK_PATH,
      {
        schema: {
          operationId: 'post_claude_code_hook',
          summary: 'Answer a Claude Code hook',
          description:
            "Body: Claude Code's hook input JSON as it is (`session_id`, `cwd`, `hook_event_name`, `prompt`, `tool_name`, " +
            "`tool_input`, `source`, …; other fields are ignored). Answers Claude Code's hook output: `{}`, or " +
            '`hookSpecificOutput.additionalContext` for SessionStart (tasks, decisions, errors, graph freshness), ' +
            'UserPromptSubmit (memories and symbols for the prompt) and PreToolUse on Read/Grep/Glob (memories and ' +
            'symbols of the file or pattern), within HOOK_CONTEXT_TOKENS; never a permission decision. What a session ' +
            'was given is not given again. With HOOK_CAPTURE=1, PostToolUse records the files and tasks a session ' +
            'touches and SessionEnd stores them as one `context` memory (these need `write`). Failures answer 200 with ' +
            'no context. Needs an API key with the `read` scope.',
          tags: ['hooks'],
          querystring: QuerySchema,
          body: HookInputSchema,
          response: { 200: HookOutputSchema, '4XX': ErrorBodySchema, '5XX': ErrorBodySchema },
        },
      },
      async (request, reply) => {
        const started = performance.now();
        const query = QuerySchema.safeParse(request.query ?? {});
        if (!query.success) throw validationError(toFieldIssues(query.error));
        const body = HookInputSchema.safeParse(request.body);
        if (!body.success) throw validationError(toFieldIssues(body.error));
        const input = body.data;
        const event = input.hook_event_name;
        const caller = options.callerOf(request);
        const timings: string[] = [];
        const finish = (output: HookOutput, outcome: HookOutcome) => {
          const ms = performance.now() - started;
          const chars = output.hookSpecificOutput?.additionalContext.length ?? 0;
          metrics.hookCalls.observe({ event: label(event), outcome }, ms / 1000);
          if (chars > 0) metrics.hookInjectedChars.inc({ event: label(event) }, chars);
          timings.push(`hook;dur=${ms.toFixed(2)}`);
          return reply.header('server-timing', timings.join(', ')).send(output);
        };
        if (!isHookEvent(event)) return finish({}, 'skipped');
        try {
          requireScope(caller, recordsFor(event, settings.capture) ? 'write' : 'read', `The ${event} hook`);
        } catch (error) {
          metrics.hookCalls.observe({ event, outcome: 'refused' }, (performance.now() - started) / 1000);
          throw error;
        }
        const ctx: Context = {
          ...options.services,
          caller,
          defaultRepo: repoHeader(request),
          log: request.log as Logger,
          timing: (part, ms) => timings.push(`${part};dur=${ms.toFixed(2)}`),
          notice: (level, message, data) =>
            (level === 'debug' ? request.log.debug : request.log.info).call(
              request.log,
              { notice: level, ...data },
              message,
            ),
        };
        sweepSometimes(ctx.log);
        try {
          const scope = await hookScope(ctx, { project: query.data.project, repo: query.data.repo, cwd: input.cwd });
          const session = input.session_id ? { caller: sessionCaller(caller), sessionId: input.session_id } : undefined;
          const { output, stored } = await answerHook(
            { ctx, input, scope, session, settings, commit: query.data.commit },
            event,
          );
          if (stored) request.log.info({ memory: stored, event }, 'stored the Claude Code session capture');
          const answersContext = event === 'SessionStart' || event === 'UserPromptSubmit' || event === 'PreToolUse';
          return finish(output, output.hookSpecificOutput ? 'injected' : answersContext ? 'empty' : 'skipped');
        } catch (thrown) {
          const error = toAppError(thrown, `answering the ${event} hook`);
          request.log.warn(
            { err: thrown, code: error.code, event },
            'Claude Code hook failed: answered with no context',
          );
          return finish({}, 'failed');
        }
      },
    );
  });
}
