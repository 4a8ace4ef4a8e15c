import { recordToolUse, storeCapture } from './capture.js';
import type { HookCall } from './hook-call.js';
import type { HookEvent, HookOutput } from './hook-input.js';
import { promptContext } from './prompt-context.js';
import { sessionStartContext } from './session-start.js';
import { toolContext } from './tool-context.js';

/** The events whose answer may carry context (Claude Code reads `additionalContext` for these). */
type ContextEvent = 'SessionStart' | 'UserPromptSubmit' | 'PreToolUse';

/** Whether this event writes (capture on): the caller then needs the `write` scope. */
export const recordsFor = (event: HookEvent, capture: boolean): boolean =>
  capture && (event === 'PostToolUse' || event === 'SessionEnd');

/**
 * Answers one Claude Code hook: context for SessionStart, UserPromptSubmit and PreToolUse (`{}` when
 * there is none); with capture on, PostToolUse records what the tool touched and SessionEnd stores
 * the session's record as a memory. Never a permission decision, never a block.
 */
export async function answerHook(
  call: HookCall,
  event: HookEvent,
): Promise<{ output: HookOutput; stored?: string | undefined }> {
  const withContext = (name: ContextEvent, text: string): { output: HookOutput } =>
    text ? { output: { hookSpecificOutput: { hookEventName: name, additionalContext: text } } } : { output: {} };
  switch (event) {
    case 'SessionStart':
      return withContext(event, await sessionStartContext(call));
    case 'UserPromptSubmit':
      return withContext(event, await promptContext(call));
    case 'PreToolUse':
      return withContext(event, await toolContext(call));
    case 'PostToolUse':
      if (call.settings.capture) await recordToolUse(call);
      return { output: {} };
    case 'SessionEnd':
      return { output: {}, stored: call.settings.capture ? await storeCapture(call) : undefined };
    case 'Stop':
      return { output: {} };
  }
}
