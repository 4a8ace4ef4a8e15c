/**
 * `devstream-hub hooks print|install` and the Claude Code plugin: the printed block's shape, the
 * merge into a settings file, the flags' errors, and the SessionStart curl line run by bash against
 * a live HTTP server on loopback and against a closed port.
 */
import { tmpdir } from 'node:os';
import { runBash } from './helpers/bash.js';
import assert from 'node:assert/strict';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  claudeCodeHooks,
  hookEndpoint,
  pluginHooksFile,
  shellQuote,
  type CommandHook,
  type HooksBlock,
  type HttpHook,
} from '../src/commands/claude-code-hooks.js';
import { hooksCommand, installHooks, mergeHooks, SettingsFileError, type HooksArgs } from '../src/commands/hooks.js';
import { freePort } from '../support/free-port.js';
import { ROOT, runCli as cli } from './helpers/service.js';
import { tempDirs } from './helpers/temp-dirs.js';
import { once } from './helpers/backends.js';

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];
const PLUGIN = join(ROOT, 'plugins', 'claude-code', 'devstream-hub');
/** What Claude Code sends a SessionStart hook on stdin. */
const SESSION_START = JSON.stringify({
  session_id: 'a1b2c3d4-0000-4000-8000-000000000001',
  transcript_path: '/home/dev/.claude/projects/shop/a1b2.jsonl',
  cwd: '/home/dev/src/shop',
  hook_event_name: 'SessionStart',
  source: 'startup',
});
const TOKEN = 'dsh_hooks-cli-test-token-0123456789abcdefghijklmno';

/** `devstream-hub <args>` run in `cwd`. */
const cliIn = (cwd: string, args: string[]) => cli(args, {}, { cwd });

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP server on 127.0.0.1 that records each request and answers `status` with `answer`. */
async function recordingServer(status: number, answer: string) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(status, { 'content-type': 'application/json' }).end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const parse = (stdout: string) => JSON.parse(stdout) as { hooks: HooksBlock };
const only = <T>(block: HooksBlock, event: string) => block[event]![0]!.hooks[0] as T;

describe('devstream-hub hooks print', once, () => {
  test('prints only JSON: HTTP hooks with the bearer header from DEVSTREAM_TOKEN, SessionStart as a curl command hook', async () => {
    const r = await cli(['hooks', 'print', '--url', 'https://hub.example.com'], {});
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const { hooks, ...rest } = parse(r.stdout) as { hooks: HooksBlock } & Record<string, unknown>;
    assert.deepEqual(rest, {}, 'one key: hooks');
    assert.deepEqual(Object.keys(hooks), EVENTS);
    const endpoint = 'https://hub.example.com/api/v1/hooks/claude-code';
    for (const event of EVENTS.slice(1)) {
      assert.equal(hooks[event]!.length, 1, `${event}: one matcher group`);
      assert.deepEqual(
        hooks[event]![0],
        {
          ...(event === 'PreToolUse' ? { matcher: 'Read|Grep|Glob' } : {}),
          ...(event === 'PostToolUse'
            ? { matcher: 'Read|Edit|MultiEdit|Write|NotebookEdit|mcp__.*devstream_(create|update)_task' }
            : {}),
          hooks: [
            {
              type: 'http',
              url: endpoint,
              headers: { Authorization: 'Bearer $DEVSTREAM_TOKEN' },
              allowedEnvVars: ['DEVSTREAM_TOKEN'],
              timeout: 5,
            },
          ],
        },
        event,
      );
    }
    assert.deepEqual(hooks.SessionStart, [
      {
        hooks: [
          {
            type: 'command',
            command:
              `c=$(git rev-parse HEAD 2>/dev/null); ` +
              `curl -fsS -m 3 -X POST -H "Authorization: Bearer $DEVSTREAM_TOKEN" -H 'Content-Type: application/json' ` +
              `--data-binary @- '${endpoint}'"\${c:+?commit=$c}" 2>/dev/null || true`,
            timeout: 5,
          },
        ],
      },
    ]);
  });

  test('--project and --repo go on the URL; --token-env names the variable everywhere; a hub under a path keeps it', async () => {
    const r = await cli(
      [
        'hooks',
        'print',
        '--url',
        'https://hub.example.com/team/',
        '--token-env',
        'SHOP_HUB_KEY',
        '--project',
        'Shop & Co',
        '--repo',
        'shop-web',
      ],
      {},
    );
    assert.equal(r.code, 0, r.stderr);
    const { hooks } = parse(r.stdout);
    const url = 'https://hub.example.com/team/api/v1/hooks/claude-code?project=Shop+%26+Co&repo=shop-web';
    const http = only<HttpHook>(hooks, 'UserPromptSubmit');
    assert.equal(http.url, url);
    assert.deepEqual(http.headers, { Authorization: 'Bearer $SHOP_HUB_KEY' });
    assert.deepEqual(http.allowedEnvVars, ['SHOP_HUB_KEY']);
    const command = only<CommandHook>(hooks, 'SessionStart').command;
    assert.ok(command.includes(`-H "Authorization: Bearer $SHOP_HUB_KEY"`), command);
    assert.ok(command.includes(` '${url}'"\${c:+&commit=$c}" `), command);
    assert.ok(!r.stdout.includes('DEVSTREAM_TOKEN'), 'the default variable is gone');
  });

  test('--help describes print and install; the main usage lists hooks', async () => {
    const help = await cli(['hooks', '--help'], {});
    assert.equal(help.code, 0);
    for (const text of [
      'hooks print',
      'hooks install',
      '--token-env',
      '--settings',
      '--project',
      '--repo',
      'DEVSTREAM_TOKEN',
    ])
      assert.ok(help.stdout.includes(text), `hooks --help mentions ${text}`);
    const usage = await cli(['help'], {});
    assert.match(usage.stdout, /^ {2}hooks {5}Claude Code hooks/m);
  });

  test('bad flags are refused (exit 2) with a message naming the flag, and nothing on stdout', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /^--url is required: the hub's base URL/],
      [
        ['--url', '127.0.0.1:7000'],
        /^--url must be an http\(s\) URL, such as http:\/\/127\.0\.0\.1:7000 \(.*has no scheme\)$/,
      ],
      [
        ['--url', 'https://hub.example.com', '--token', TOKEN],
        /^--token is not taken here: the key would be written into the settings file/,
      ],
    ];
    for (const [flags, message] of cases) {
      const r = await cli(['hooks', 'print', ...flags], {});
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', flags.join(' '));
      assert.match(r.stderr.trim(), message, flags.join(' '));
      assert.ok(!r.stderr.includes(TOKEN), 'the key is not echoed');
    }
  });

  test('every flag and action check, in process: the message names the flag and echoes no secret', async (t) => {
    const out: string[] = [];
    const err: string[] = [];
    t.mock.method(console, 'log', (...a: unknown[]) => out.push(a.join(' ')));
    t.mock.method(console, 'error', (...a: unknown[]) => err.push(a.join(' ')));
    const url = 'https://hub.example.com';
    const cases: Array<[Omit<HooksArgs, 'positionals'>, RegExp]> = [
      [{ url: 'ftp://hub.example.com' }, /^--url must be an http\(s\) URL.*is ftp, not http\(s\)/],
      [{ url: 'https://' }, /^--url must be an http\(s\) URL.*is not a valid URL/],
      [{ url: 'https://me:s3cret@hub.example.com' }, /^--url must not carry a user or password/],
      [{ url: 'https://hub.example.com/?repo=x' }, /^--url must be the hub's base URL, without a query or #fragment/],
      [{ url: 'https://hub.example.com/#top' }, /^--url must be the hub's base URL, without a query or #fragment/],
      [
        { url, tokenEnv: '$DEVSTREAM_TOKEN' },
        /^--token-env must be the name of a shell variable .*: got "\$DEVSTREAM_TOKEN"; without the \$: DEVSTREAM_TOKEN$/,
      ],
      [{ url, tokenEnv: '1KEY' }, /^--token-env must be the name of a shell variable .*: got "1KEY"$/],
      [{ url, tokenEnv: 'MY-KEY' }, /^--token-env must be the name of a shell variable/],
      [{ url, tokenEnv: '' }, /^--token-env must be the name of a shell variable/],
      [{ url, tokenEnv: TOKEN }, /^--token-env takes the name of the variable that holds the API key/],
      [{ url, project: ' ' }, /^--project must not be empty$/],
      [{ url, repo: '' }, /^--repo must not be empty$/],
    ];
    for (const [flags, message] of cases) {
      err.length = 0;
      const code = await hooksCommand({ positionals: ['print'], ...flags });
      assert.equal(code, 2, JSON.stringify(flags));
      assert.equal(err.length, 1, JSON.stringify(flags));
      assert.match(err[0]!, message, JSON.stringify(flags));
      assert.ok(!err[0]!.includes(TOKEN) && !err[0]!.includes('s3cret'), 'no secret echoed');
    }
    err.length = 0;
    assert.equal(await hooksCommand({ positionals: [] }), 2);
    assert.match(err.pop()!, /^Usage: devstream-hub hooks print/);
    assert.equal(await hooksCommand({ positionals: ['add'], url }), 2);
    assert.match(err.pop()!, /^Unknown hooks action "add"/);
    assert.equal(out.length, 0, 'nothing on stdout');
    // Names that are fine, DSH_ prefix included.
    for (const tokenEnv of ['DEVSTREAM_TOKEN', '_k', 'dsh_team_key', 'Shop2']) {
      assert.equal(await hooksCommand({ positionals: ['print'], url, tokenEnv }), 0, tokenEnv);
      assert.ok(out.pop()!.includes(`"Bearer $${tokenEnv}"`), tokenEnv);
    }
  });
});

describe('devstream-hub hooks install', once, () => {
  const tempDir = tempDirs('hooks');
  const block = claudeCodeHooks({ url: hookEndpoint('http://127.0.0.1:7000') });

  test('creates ./.claude/settings.json and its folder when absent; installing again changes nothing', async () => {
    const dir = await tempDir();
    const first = await cliIn(dir, ['hooks', 'install', '--url', 'http://127.0.0.1:7000']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Created \.claude\/settings\.json: DevStream Hub hooks for 6 events; .*\$DEVSTREAM_TOKEN$/m,
    );
    const file = join(dir, '.claude', 'settings.json');
    const text = await readFile(file, 'utf8');
    assert.deepEqual(JSON.parse(text), { hooks: block });
    const printed = await cliIn(dir, ['hooks', 'print', '--url', 'http://127.0.0.1:7000']);
    assert.deepEqual(JSON.parse(text), JSON.parse(printed.stdout), 'install writes what print prints');

    const second = await cliIn(dir, ['hooks', 'install', '--url', 'http://127.0.0.1:7000']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^Updated .*\(replacing the 6 installed before\)/m);
    assert.equal(await readFile(file, 'utf8'), text, 'byte for byte the same');
    assert.deepEqual(await readdir(join(dir, '.claude')), ['settings.json'], 'no temporary file left');
  });

  test('keeps the other settings and the other hooks of the same events; replaces the hub entries of an earlier install', async () => {
    const dir = await tempDir();
    const file = join(dir, 'settings.json');
    const foreignStart = { type: 'command', command: 'echo started >> ~/.claude/log' };
    const foreignBash = { matcher: 'Bash', hooks: [{ type: 'command', command: './check-bash.sh' }] };
    const earlier = claudeCodeHooks({ url: hookEndpoint('http://old-hub:7000', { repo: 'shop' }) }, 'OLD_KEY');
    const settings = {
      permissions: { allow: ['Bash(npm test)'] },
      env: { FOO: 'bar' },
      hooks: {
        // An earlier hub entry and a foreign hook in one group: the group stays, holding the foreign hook.
        SessionStart: [{ hooks: [earlier.SessionStart![0]!.hooks[0], foreignStart] }],
        PreToolUse: [foreignBash, ...earlier.PreToolUse!],
        Notification: [{ hooks: [{ type: 'command', command: 'notify-send claude' }] }],
      },
    };
    await writeFile(file, JSON.stringify(settings, null, 4));
    await chmod(file, 0o600);

    const r = await cli(['hooks', 'install', '--url', 'http://127.0.0.1:7000', '--settings', file], {});
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^Updated .*settings\.json: DevStream Hub hooks for 6 events \(replacing the 2 installed before\)/m,
    );
    const merged = JSON.parse(await readFile(file, 'utf8'));
    assert.deepEqual(merged.permissions, settings.permissions);
    assert.deepEqual(merged.env, settings.env);
    assert.deepEqual(Object.keys(merged), ['permissions', 'env', 'hooks'], 'the keys keep their order');
    assert.deepEqual(merged.hooks.Notification, settings.hooks.Notification);
    assert.deepEqual(merged.hooks.SessionStart, [{ hooks: [foreignStart] }, ...block.SessionStart!]);
    assert.deepEqual(merged.hooks.PreToolUse, [foreignBash, ...block.PreToolUse!]);
    for (const event of ['UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd'])
      assert.deepEqual(merged.hooks[event], block[event], event);
    assert.ok(!JSON.stringify(merged).includes('old-hub'), 'the earlier hub entries are gone');
    assert.equal((await stat(file)).mode & 0o777, 0o600, 'the file keeps its mode');

    const again = mergeHooks(merged, block);
    assert.deepEqual(again, merged, 'merging again is the same');
  });

  test('a settings file that is not valid JSON, or not shaped as settings, is refused and left unchanged', async () => {
    const dir = await tempDir();
    const file = join(dir, 'settings.json');
    const broken = '{ "hooks": { "Stop": [ ';
    await writeFile(file, broken);
    const r = await cli(['hooks', 'install', '--url', 'http://127.0.0.1:7000', '--settings', file], {});
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr.trim(),
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON \\(.*\\): left unchanged$`),
    );
    assert.equal(await readFile(file, 'utf8'), broken);
    assert.deepEqual(await readdir(dir), ['settings.json'], 'no temporary file left');

    for (const [text, why] of [
      ['[]', /is not a JSON object/],
      ['{"hooks": []}', /"hooks" is not an object/],
      ['{"hooks": {"Stop": {"type": "command"}}}', /"hooks\.Stop" is not an array/],
    ] as const) {
      await writeFile(file, text);
      await assert.rejects(
        installHooks(file, block),
        (e: unknown) => e instanceof SettingsFileError && why.test(e.message),
      );
      assert.equal(await readFile(file, 'utf8'), text);
    }
  });

  test('an empty settings file is taken as {}; a new folder is created for --settings', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'empty.json'), '');
    assert.deepEqual(await installHooks(join(dir, 'empty.json'), block), { created: false, replaced: 0 });
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'empty.json'), 'utf8')), { hooks: block });
    const nested = join(dir, 'a', 'b', 'settings.local.json');
    assert.deepEqual(await installHooks(nested, block), { created: true, replaced: 0 });
    assert.deepEqual(JSON.parse(await readFile(nested, 'utf8')), { hooks: block });
  });
});

describe('the SessionStart command, run by bash', once, () => {
  const ANSWER = JSON.stringify({
    hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'Active tasks: T1 Ship the cart' },
  });
  let hub: Awaited<ReturnType<typeof recordingServer>>;
  before(async () => {
    hub = await recordingServer(200, ANSWER);
  });
  after(() => hub?.close());

  test("posts the hook input with the key from the variable, and prints the hub's answer exactly", async () => {
    // A path with a quote and a space: the URL must stay one shell word.
    const r = await cli(
      ['hooks', 'print', '--url', `${hub.url}/it's a hub`, '--project', 'Shop & Co', '--repo', 'shop-web'],
      {},
    );
    assert.equal(r.code, 0, r.stderr);
    const command = only<CommandHook>(parse(r.stdout).hooks, 'SessionStart').command;
    const before = hub.requests.length;
    const run = await runBash(command, SESSION_START, { DEVSTREAM_TOKEN: TOKEN }, tmpdir());
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, ANSWER);
    assert.equal(hub.requests.length, before + 1);
    const request = hub.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    const url = new URL(request.url, hub.url);
    assert.equal(url.pathname, "/it's%20a%20hub/api/v1/hooks/claude-code");
    assert.deepEqual(
      [...url.searchParams],
      [
        ['project', 'Shop & Co'],
        ['repo', 'shop-web'],
      ],
    );
    assert.equal(request.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.body, SESSION_START, 'the hook input, byte for byte');
  });

  test('a hub that refuses (401) prints nothing and exits 0', async () => {
    const refusing = await recordingServer(401, JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'no key' } }));
    try {
      const command = only<CommandHook>(claudeCodeHooks({ url: hookEndpoint(refusing.url) }), 'SessionStart').command;
      const run = await runBash(command, SESSION_START, {}, tmpdir());
      assert.equal(run.code, 0);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, '');
      assert.equal(refusing.requests[0]!.headers.authorization?.trim(), 'Bearer', 'no DEVSTREAM_TOKEN: no key');
    } finally {
      await refusing.close();
    }
  });

  test('a closed port: exit 0, nothing printed, within curl -m 3', async () => {
    const port = await freePort(); // free a moment ago: nothing listens there
    const command = only<CommandHook>(
      claudeCodeHooks({ url: hookEndpoint(`http://127.0.0.1:${port}`) }),
      'SessionStart',
    ).command;
    const run = await runBash(command, SESSION_START, { DEVSTREAM_TOKEN: TOKEN }, tmpdir());
    assert.equal(run.code, 0);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, '');
    assert.ok(run.ms < 10_000, `did not hang (${Math.round(run.ms)} ms)`);
  });

  test("the plugin's commands take the hub from DEVSTREAM_HUB_URL and the key from DEVSTREAM_TOKEN", async () => {
    const plugin = JSON.parse(await readFile(join(PLUGIN, 'hooks', 'hooks.json'), 'utf8')) as { hooks: HooksBlock };
    for (const event of ['SessionStart', 'PreToolUse']) {
      const input = JSON.stringify({ session_id: 's', cwd: '/src/shop', hook_event_name: event, tool_name: 'Read' });
      const run = await runBash(
        only<CommandHook>(plugin.hooks, event).command,
        input,
        { DEVSTREAM_HUB_URL: hub.url, DEVSTREAM_TOKEN: TOKEN },
        tmpdir(),
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, ANSWER);
      const request = hub.requests.at(-1)!;
      assert.equal(request.url, '/api/v1/hooks/claude-code');
      assert.equal(request.headers.authorization, `Bearer ${TOKEN}`);
      assert.equal(request.body, input);
    }
  });
});

describe('the Claude Code plugin folder', once, () => {
  test('hooks/hooks.json is what the generator gives for DEVSTREAM_HUB_URL and DEVSTREAM_TOKEN', async () => {
    const committed = await readFile(join(PLUGIN, 'hooks', 'hooks.json'), 'utf8');
    assert.equal(
      committed,
      `${JSON.stringify(pluginHooksFile(), null, 2)}\n`,
      "regenerate: node --import tsx -e \"import('./src/commands/claude-code-hooks.ts').then((m) => " +
        'console.log(JSON.stringify(m.pluginHooksFile(), null, 2)))" > plugins/claude-code/devstream-hub/hooks/hooks.json',
    );
    const { hooks } = JSON.parse(committed) as { hooks: HooksBlock };
    assert.deepEqual(Object.keys(hooks), EVENTS);
    assert.equal(hooks.PreToolUse![0]!.matcher, 'Read|Grep|Glob');
    // Beside the printed block: the same events, matchers and curl line, the URL from the environment.
    const printed = claudeCodeHooks({ url: 'https://hub.example.com/api/v1/hooks/claude-code' });
    const sessionStart = only<CommandHook>(printed, 'SessionStart').command;
    // SessionStart alone sends the checkout's commit.
    const plain = sessionStart.replace('c=$(git rev-parse HEAD 2>/dev/null); ', '').replace('"${c:+?commit=$c}"', '');
    for (const event of EVENTS) {
      assert.equal(hooks[event]![0]!.matcher, printed[event]![0]!.matcher, event);
      assert.equal(
        only<CommandHook>(hooks, event).command,
        (event === 'SessionStart' ? sessionStart : plain).replace(
          shellQuote('https://hub.example.com/api/v1/hooks/claude-code'),
          '"${DEVSTREAM_HUB_URL}/api/v1/hooks/claude-code"',
        ),
        event,
      );
    }
  });

  test('plugin.json names the plugin at the package version; .mcp.json is the hub over HTTP with the bearer header', async () => {
    const manifest = JSON.parse(await readFile(join(PLUGIN, '.claude-plugin', 'plugin.json'), 'utf8'));
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    assert.equal(manifest.name, 'devstream-hub');
    assert.equal(manifest.version, pkg.version);
    assert.match(manifest.description, /DEVSTREAM_HUB_URL/);
    assert.match(manifest.description, /DEVSTREAM_TOKEN/);
    const mcp = JSON.parse(await readFile(join(PLUGIN, '.mcp.json'), 'utf8'));
    assert.deepEqual(mcp, {
      mcpServers: {
        'devstream-hub': {
          type: 'http',
          url: '${DEVSTREAM_HUB_URL}/mcp',
          headers: { Authorization: 'Bearer ${DEVSTREAM_TOKEN}' },
        },
      },
    });
    const files = (await readdir(PLUGIN, { recursive: true })).sort();
    assert.deepEqual(files, ['.claude-plugin', '.claude-plugin/plugin.json', '.mcp.json', 'hooks', 'hooks/hooks.json']);
  });
});
