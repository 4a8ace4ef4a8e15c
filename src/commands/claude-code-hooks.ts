/**
 * The Claude Code hooks that send each event to the hub's `POST /api/v1/hooks/claude-code`: the
 * `hooks` block of `.claude/settings.json` that `devstream-hub hooks print|install` writes, and the
 * plugin's `plugins/claude-code/devstream-hub/hooks/hooks.json`. One generator makes both, so they
 * cannot drift apart (test/hooks-cli.test.ts compares the committed hooks.json with it).
 */

/** The hub's hook route; an entry whose URL or command holds it is ours (replaced on a new install). */
export const HOOK_PATH = '/api/v1/hooks/claude-code';

/** The environment variable the hooks read the API key from, unless told otherwise. */
export const DEFAULT_TOKEN_ENV = 'DEVSTREAM_TOKEN';

/** The environment variable the plugin reads the hub's base URL from. */
export const PLUGIN_URL_ENV = 'DEVSTREAM_HUB_URL';

/** Seconds Claude Code waits for a hook; curl gives up after CURL_MAX_S, before that. */
const HOOK_TIMEOUT_S = 5;
const CURL_MAX_S = 3;

/** Claude Code's hook events, in the order they come in a session, with the tool matcher where one applies. */
const EVENTS: ReadonlyArray<{ event: string; matcher?: string }> = [
  { event: 'SessionStart' },
  { event: 'UserPromptSubmit' },
  { event: 'PreToolUse', matcher: 'Read|Grep|Glob' },
  // What capture (HOOK_CAPTURE=1) records: files read and edited, DevStream task changes.
  { event: 'PostToolUse', matcher: 'Read|Edit|MultiEdit|Write|NotebookEdit|mcp__.*devstream_(create|update)_task' },
  { event: 'Stop' },
  { event: 'SessionEnd' },
];

export interface HttpHook {
  type: 'http';
  url: string;
  headers: Record<string, string>;
  allowedEnvVars: string[];
  timeout: number;
}
export interface CommandHook {
  type: 'command';
  command: string;
  timeout: number;
}
export interface HookGroup {
  matcher?: string;
  hooks: Array<HttpHook | CommandHook>;
}
/** The value of `hooks` in a settings file: event name → matcher groups. */
export type HooksBlock = Record<string, HookGroup[]>;

/**
 * Where the hooks send events:
 * - `{ url }`: a fixed endpoint URL (what `hooks print` writes). SessionStart is a command hook,
 *   since Claude Code runs only command hooks there; every other event is an HTTP hook.
 * - `{ urlEnv }`: the hub's base URL in an environment variable (the plugin). Claude Code checks an
 *   HTTP hook's `url` as a URL when it loads the settings and fills `$VAR` in header values only
 *   (anthropics/claude-code#31653, #46577: a `${VAR}` url fails the whole file's hooks), so every
 *   event is a command hook there, the shell filling in the URL.
 */
export type HookTarget = { url: string } | { urlEnv: string };

/** `s` as one word for sh/bash: single-quoted, a `'` inside written `'\''`. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A shell variable's name: letters, digits and `_`, not starting with a digit. */
export const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The endpoint URL for a hub at `base` (an http(s) URL; a path is kept, as for a hub behind a proxy
 * at https://host/hub), with `?project=` / `?repo=` when given.
 * @example hookEndpoint('http://127.0.0.1:7000', { repo: 'ky' }) // 'http://127.0.0.1:7000/api/v1/hooks/claude-code?repo=ky'
 */
export function hookEndpoint(base: string, scope: { project?: string; repo?: string } = {}): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${HOOK_PATH}`;
  url.search = '';
  url.hash = '';
  const query = new URLSearchParams();
  if (scope.project !== undefined) query.set('project', scope.project);
  if (scope.repo !== undefined) query.set('repo', scope.repo);
  if (query.size > 0) url.search = query.toString();
  return url.href;
}

/**
 * The one-line command hook: posts the hook input (stdin) to `endpointWord` (already a shell word)
 * and prints the hub's answer, Claude Code's hook output. Needs only sh and curl; a hub that is
 * down, slow (over CURL_MAX_S) or refusing prints nothing and exits 0, so the session goes on.
 */
function curlCommand(endpointWord: string, tokenEnv: string, commit?: { separator: '?' | '&' }): string {
  // SessionStart sends the checkout's commit (none outside a git checkout), for the graph's freshness line.
  const head = commit ? 'c=$(git rev-parse HEAD 2>/dev/null); ' : '';
  const query = commit ? `"\${c:+${commit.separator}commit=$c}"` : '';
  return (
    `${head}curl -fsS -m ${CURL_MAX_S} -X POST -H "Authorization: Bearer $${tokenEnv}" ` +
    `-H 'Content-Type: application/json' --data-binary @- ${endpointWord}${query} 2>/dev/null || true`
  );
}

/**
 * The `hooks` block: the events the hub serves, each sending its input to the hub with the API key
 * from the environment variable `tokenEnv` (never the key itself).
 */
export function claudeCodeHooks(target: HookTarget, tokenEnv: string = DEFAULT_TOKEN_ENV): HooksBlock {
  if (!SHELL_NAME.test(tokenEnv)) throw new Error(`not a shell variable name: ${tokenEnv}`);
  const command = (word: string, commit?: { separator: '?' | '&' }): CommandHook => ({
    type: 'command',
    command: curlCommand(word, tokenEnv, commit),
    timeout: HOOK_TIMEOUT_S,
  });
  const hookFor = (event: string): HttpHook | CommandHook => {
    const start = event === 'SessionStart';
    if ('urlEnv' in target) {
      if (!SHELL_NAME.test(target.urlEnv)) throw new Error(`not a shell variable name: ${target.urlEnv}`);
      return command(`"\${${target.urlEnv}}${HOOK_PATH}"`, start ? { separator: '?' } : undefined);
    }
    if (start) return command(shellQuote(target.url), { separator: target.url.includes('?') ? '&' : '?' });
    return {
      type: 'http',
      url: target.url,
      headers: { Authorization: `Bearer $${tokenEnv}` },
      allowedEnvVars: [tokenEnv],
      timeout: HOOK_TIMEOUT_S,
    };
  };
  const block: HooksBlock = {};
  for (const { event, matcher } of EVENTS)
    block[event] = [{ ...(matcher === undefined ? {} : { matcher }), hooks: [hookFor(event)] }];
  return block;
}

/** The plugin's hooks/hooks.json, as committed: URL from DEVSTREAM_HUB_URL, key from DEVSTREAM_TOKEN. */
export function pluginHooksFile(): { description: string; hooks: HooksBlock } {
  return {
    description:
      `DevStream Hub: sends each event to $${PLUGIN_URL_ENV}${HOOK_PATH} (API key in $${DEFAULT_TOKEN_ENV}) ` +
      'and adds the context it answers; prints nothing when the hub is not reachable.',
    hooks: claudeCodeHooks({ urlEnv: PLUGIN_URL_ENV }, DEFAULT_TOKEN_ENV),
  };
}

/** Whether a hook entry of a settings file is one of ours: its URL or command holds HOOK_PATH. */
export function isHubHook(hook: unknown): boolean {
  if (typeof hook !== 'object' || hook === null) return false;
  const { url, command } = hook as { url?: unknown; command?: unknown };
  return [url, command].some((v) => typeof v === 'string' && v.includes(HOOK_PATH));
}
