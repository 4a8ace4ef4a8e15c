import { z } from 'zod';

/**
 * Claude Code's hook input, as Claude Code sends it (https://code.claude.com/docs/en/hooks): the
 * fields this service reads are checked; every other field is kept as it came and never an error,
 * so a newer Claude Code with more fields keeps working.
 */
export const HookInputSchema = z.looseObject({
  hook_event_name: z.string().trim().min(1).max(64).describe('SessionStart, UserPromptSubmit, PreToolUse, …'),
  session_id: z.string().max(200).optional().describe('The Claude Code session (dedup and capture are per session)'),
  cwd: z.string().max(4096).optional().describe("The session's working folder"),
  source: z.string().max(64).optional().describe('SessionStart: startup, resume, clear or compact'),
  prompt: z.string().optional().describe('UserPromptSubmit: what the user typed'),
  tool_name: z.string().max(200).optional().describe('PreToolUse / PostToolUse: the tool'),
  tool_input: z.record(z.string(), z.unknown()).optional().describe("PreToolUse / PostToolUse: the tool's arguments"),
  reason: z.string().max(200).optional().describe('SessionEnd: why the session ended'),
});
export type HookInput = z.output<typeof HookInputSchema>;

/** The events this service answers; any other is answered with nothing (`{}`). */
export const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'Stop',
  'SessionEnd',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export const isHookEvent = (name: string): name is HookEvent => (HOOK_EVENTS as readonly string[]).includes(name);

/** Claude Code's hook output: context for the model, never a permission decision or a block. */
export const HookOutputSchema = z
  .object({
    hookSpecificOutput: z
      .object({
        hookEventName: z.enum(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse']),
        additionalContext: z.string().describe('Added to the conversation for the model'),
      })
      .optional(),
  })
  .meta({ id: 'ClaudeCodeHookOutput' });
export type HookOutput = z.output<typeof HookOutputSchema>;

/** What a hook call answered with, for the metrics: context given, nothing found, not applicable, failed (fail-open), or refused (403). */
export type HookOutcome = 'injected' | 'empty' | 'skipped' | 'failed' | 'refused';
