import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  claudeCodeHooks,
  DEFAULT_TOKEN_ENV,
  hookEndpoint,
  HOOK_PATH,
  isHubHook,
  SHELL_NAME,
  type HookGroup,
  type HooksBlock,
} from './claude-code-hooks.js';
import { TOKEN_PREFIX } from '../auth/tokens.js';
import { serverUrlProblem } from './upload.js';

export const DEFAULT_SETTINGS = '.claude/settings.json';

export const HOOKS_USAGE = `Usage: devstream-hub hooks print   --url <hub> [--token-env DEVSTREAM_TOKEN] [--project <name>] [--repo <name>]
       devstream-hub hooks install --url <hub> [--token-env DEVSTREAM_TOKEN] [--project <name>] [--repo <name>]
                                   [--settings ${DEFAULT_SETTINGS}]

Claude Code hooks that send each event to the hub (POST <hub>${HOOK_PATH}) and add the
context it answers: SessionStart, UserPromptSubmit, PreToolUse (Read|Grep|Glob), PostToolUse, Stop
and SessionEnd. SessionStart is a command hook (Claude Code runs only those there): one curl line,
no Node needed, printing nothing when the hub is down; the others are HTTP hooks.

  print     writes {"hooks": …} for .claude/settings.json to stdout (JSON only)
  install   merges it into the settings file (default ./${DEFAULT_SETTINGS}, created when absent):
            other settings and other hooks are kept; the hub's own entries (found by the path
            ${HOOK_PATH}) are replaced, so installing again changes nothing

  --url        the hub's base URL, http(s), e.g. https://hub.example.com (a path is kept: https://host/hub)
  --token-env  the environment variable that holds the API key (default ${DEFAULT_TOKEN_ENV}); the key itself is
               never written, Claude Code reads the variable when it sends a hook
  --project, --repo  the project and code graph to use (sent as ?project= / ?repo=); without them the
               hub goes by the session's working folder`;

export interface HooksArgs {
  positionals: string[];
  url?: string | undefined;
  tokenEnv?: string | undefined;
  project?: string | undefined;
  repo?: string | undefined;
  settings?: string | undefined;
  /** `--token` was given: refused, the key must not land in a settings file. */
  token?: boolean;
}

/** A settings file that cannot be merged into: it is left as it is. */
export class SettingsFileError extends Error {}

/** Why the arguments cannot make hooks, or null. */
function argumentProblem(args: HooksArgs): string | null {
  if (args.token)
    return (
      '--token is not taken here: the key would be written into the settings file. Put it in an environment ' +
      `variable and name that with --token-env (default ${DEFAULT_TOKEN_ENV})`
    );
  if (args.url === undefined) return `--url is required: the hub's base URL, such as http://127.0.0.1:7000`;
  const badUrl = serverUrlProblem(args.url, '--url');
  if (badUrl) return badUrl;
  const url = new URL(args.url);
  if (url.username || url.password)
    return `--url must not carry a user or password: the hooks send the API key from --token-env`;
  if (url.search || url.hash)
    return `--url must be the hub's base URL, without a query or #fragment (use --project and --repo)`;
  const tokenEnv = args.tokenEnv ?? DEFAULT_TOKEN_ENV;
  // A key given by mistake (dsh_ and 43 base64url characters) is neither echoed back nor written.
  if (tokenEnv.startsWith(TOKEN_PREFIX) && tokenEnv.length >= TOKEN_PREFIX.length + 40)
    return `--token-env takes the name of the variable that holds the API key, such as ${DEFAULT_TOKEN_ENV}, not the key itself`;
  if (!SHELL_NAME.test(tokenEnv)) {
    const hint = tokenEnv.startsWith('$') ? `; without the $: ${tokenEnv.slice(1)}` : '';
    return `--token-env must be the name of a shell variable (letters, digits and _, not starting with a digit), such as ${DEFAULT_TOKEN_ENV}: got ${JSON.stringify(tokenEnv)}${hint}`;
  }
  for (const [flag, value] of [
    ['--project', args.project],
    ['--repo', args.repo],
  ] as const)
    if (value !== undefined && value.trim() === '') return `${flag} must not be empty`;
  return null;
}

/** The hooks block the (valid) arguments ask for. */
function blockFor(args: HooksArgs): HooksBlock {
  const url = hookEndpoint(args.url!, { project: args.project, repo: args.repo });
  return claudeCodeHooks({ url }, args.tokenEnv ?? DEFAULT_TOKEN_ENV);
}

/**
 * `settings` with `block` merged into its `hooks`: every other key and every other hook kept, in
 * place; each event's hub entries (isHubHook) removed, with the matcher groups that held only them,
 * and the new groups appended. Merging the same block twice gives the same result as once.
 * Throws SettingsFileError when `settings` or its `hooks` are not shaped as Claude Code reads them.
 */
export function mergeHooks(settings: unknown, block: HooksBlock): Record<string, unknown> {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
    throw new SettingsFileError('is not a JSON object');
  const current = (settings as Record<string, unknown>).hooks ?? {};
  if (typeof current !== 'object' || current === null || Array.isArray(current))
    throw new SettingsFileError('"hooks" is not an object');
  const hooks: Record<string, unknown> = { ...(current as Record<string, unknown>) };
  for (const [event, groups] of Object.entries(block)) {
    const existing = hooks[event] ?? [];
    if (!Array.isArray(existing)) throw new SettingsFileError(`"hooks.${event}" is not an array`);
    const kept: unknown[] = [];
    for (const group of existing) {
      const inner = (group as HookGroup | null)?.hooks;
      if (!Array.isArray(inner)) {
        kept.push(group);
        continue;
      }
      const foreign = inner.filter((hook) => !isHubHook(hook));
      if (foreign.length === inner.length) kept.push(group);
      else if (foreign.length > 0) kept.push({ ...group, hooks: foreign });
    }
    hooks[event] = [...kept, ...groups];
  }
  return { ...(settings as Record<string, unknown>), hooks };
}

/** Writes `text` to `path` through a temporary file in the same folder and a rename: never half a file. */
async function writeAtomically(path: string, text: string, mode: number | undefined): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, text, { flag: 'wx' });
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Merges `block` into the settings file at `file` (created, with its folder, when absent; a symlink
 * is followed). A file that is not JSON, or not shaped as settings, throws SettingsFileError and is
 * not written. Returns how many hub entries the file held before.
 */
export async function installHooks(file: string, block: HooksBlock): Promise<{ created: boolean; replaced: number }> {
  const path = await realpath(file).catch(() => file);
  let text: string | null = null;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  let settings: unknown = {};
  if (text !== null && text.trim() !== '') {
    try {
      settings = JSON.parse(text);
    } catch (error) {
      throw new SettingsFileError(`is not valid JSON (${(error as Error).message})`);
    }
  }
  const before = (settings as { hooks?: Record<string, unknown> } | null)?.hooks;
  let replaced = 0;
  if (before && typeof before === 'object')
    for (const groups of Object.values(before))
      if (Array.isArray(groups))
        for (const group of groups)
          for (const hook of (group as HookGroup | null)?.hooks ?? []) if (isHubHook(hook)) replaced++;
  const merged = mergeHooks(settings, block);
  await mkdir(dirname(path), { recursive: true });
  const mode = text === null ? undefined : (await stat(path)).mode & 0o7777;
  await writeAtomically(path, `${JSON.stringify(merged, null, 2)}\n`, mode);
  return { created: text === null, replaced };
}

/** `devstream-hub hooks print|install`: returns the exit code (0 done, 1 the settings file refused, 2 bad arguments). */
export async function hooksCommand(args: HooksArgs): Promise<number> {
  const [action] = args.positionals;
  if (action !== 'print' && action !== 'install') {
    console.error(action ? `Unknown hooks action "${action}".\n\n${HOOKS_USAGE}` : HOOKS_USAGE);
    return 2;
  }
  const problem = argumentProblem(args);
  if (problem) {
    console.error(problem);
    return 2;
  }
  const block = blockFor(args);
  if (action === 'print') {
    console.log(JSON.stringify({ hooks: block }, null, 2));
    return 0;
  }
  const file = args.settings ?? DEFAULT_SETTINGS;
  try {
    const { created, replaced } = await installHooks(file, block);
    const events = Object.keys(block).length;
    console.log(
      `${created ? 'Created' : 'Updated'} ${file}: DevStream Hub hooks for ${events} events` +
        (replaced ? ` (replacing the ${replaced} installed before)` : '') +
        `; Claude Code reads the API key from $${args.tokenEnv ?? DEFAULT_TOKEN_ENV}`,
    );
    return 0;
  } catch (error) {
    if (error instanceof SettingsFileError) {
      console.error(`${file} ${error.message}: left unchanged`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EISDIR' || code === 'ENOTDIR') {
      console.error(`cannot write ${file} (${code}): left unchanged`);
      return 1;
    }
    throw error;
  }
}
