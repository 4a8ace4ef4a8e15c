import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { clusterSupport, createCluster } from '../support/pg-cluster.js';
import { backends, postgresBaseUrl, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { WREN_COMMIT, uploadWren } from './helpers/graph-fixture.js';
import { execFileSync } from 'node:child_process';
import { claudeCodeHooks, hookEndpoint, type CommandHook } from '../src/commands/claude-code-hooks.js';
import { runBash } from './helpers/bash.js';
import { eventually } from './helpers/eventually.js';
import { tempDirs } from './helpers/temp-dirs.js';
import { createKey } from './helpers/keys.js';
import { rest, startServer, type TestServer } from './helpers/server.js';
import { taskInput } from './helpers/task-input.js';

const ADMIN = 'test-admin-token-0123456789abcdefghijklmnop';
const HOOK = '/api/v1/hooks/claude-code';

/** A hook input as Claude Code sends it, with a field this service does not know. */
const input = (event: string, fields: Record<string, unknown> = {}) => ({
  session_id: 'session-a',
  transcript_path: '/home/dev/.claude/projects/x/session-a.jsonl',
  cwd: '/home/dev/Apollo Lander',
  permission_mode: 'default',
  hook_event_name: event,
  some_future_field: { nested: true },
  ...fields,
});

type Answer = { status: number; body: any; headers: Headers };

/** The additionalContext of a hook answer ('' for `{}`), checking the answer is never a decision. */
function contextOf(answer: Answer, event: string): string {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.decision, undefined);
  assert.equal(answer.body.continue, undefined);
  const out = answer.body.hookSpecificOutput;
  if (out === undefined) {
    assert.deepEqual(answer.body, {});
    return '';
  }
  assert.equal(out.hookEventName, event);
  assert.equal(out.permissionDecision, undefined);
  assert.equal(typeof out.additionalContext, 'string');
  return out.additionalContext as string;
}

for (const backend of backends) {
  describe(`Claude Code hooks over HTTP (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let second: TestServer;
    let reader: string;
    let writer: string;
    let writeOnly: string;
    const memoryIds: Record<string, string> = {};
    const scratch = tempDirs('hook-checkout');
    let activeTask: { id: string };

    const hook = (token: string | undefined, body: unknown, query = '', target = () => server): Promise<Answer> =>
      rest(target().url, 'POST', `${HOOK}${query}`, body, token ? bearer(token) : {});

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN } });
      // A second instance on the same database: a session's hooks may land on either.
      second = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN } });
      writer = await createKey(server.url, ADMIN, 'writer', ['read', 'write']);
      reader = await createKey(server.url, ADMIN, 'reader', ['read']);
      writeOnly = await createKey(server.url, ADMIN, 'write-only', ['write']);
      const post = (path: string, body: unknown) => rest(server.url, 'POST', path, body, bearer(writer));
      for (const [title, project, priority] of [
        ['Wire the retry budget', 'Apollo Lander', 5],
        ['Document the hook endpoint', 'Apollo Lander', 8],
        ['Unrelated work', 'Zephyr', 5],
      ] as const)
        assert.equal((await post('/api/v1/tasks', taskInput({ title, project, priority }))).status, 201);
      const tasks = await rest(server.url, 'GET', '/api/v1/tasks?project=Apollo%20Lander', undefined, bearer(writer));
      activeTask = tasks.body.tasks.find((t: { title: string }) => t.title === 'Wire the retry budget');
      assert.equal(
        (await rest(server.url, 'PATCH', `/api/v1/tasks/${activeTask.id}`, { status: 'active' }, bearer(writer)))
          .status,
        200,
      );
      for (const [key, content, content_type, project] of [
        [
          'decision',
          'Retries back off exponentially with full jitter, capped at thirty seconds.',
          'decision',
          'Apollo Lander',
        ],
        ['error', 'The analyzer crashed on a symlink loop in the vendor folder.', 'error', 'Apollo Lander'],
        ['learning', 'Telemetry batches flush every five seconds to the collector.', 'learning', 'Apollo Lander'],
        ['zephyr', 'Zephyr retries back off with jitter too, but nobody reads this here.', 'decision', 'Zephyr'],
        ['backoff', 'backoff.ts must stay free of timers: the client schedules the retries.', 'decision', 'wren'],
      ] as const) {
        const stored = await post('/api/v1/memories', { content, content_type, project });
        assert.equal(stored.status, 201);
        memoryIds[key] = stored.body.memory_id;
      }
      await uploadWren(server.url, bearer(writer));
    });
    after(async () => {
      await second?.close();
      await server?.close();
      await database?.dispose();
    });

    it('SessionStart: active and pending tasks, latest decisions and errors of the cwd’s project; graph freshness', async () => {
      const text = contextOf(
        await hook(reader, input('SessionStart', { source: 'startup', session_id: 's-start' })),
        'SessionStart',
      );
      assert.match(text, /project "Apollo Lander"/);
      assert.match(text, /Active tasks \(1\):\n- [0-9a-f]{12} \[active, priority 5, [^\]]+\] Wire the retry budget/);
      assert.match(
        text,
        /Next pending tasks \(1\):\n- [0-9a-f]{12} \[pending, priority 8, [^\]]+\] Document the hook endpoint/,
      );
      assert.ok(text.includes(`memory ${memoryIds.decision}] Retries back off`), text);
      assert.ok(text.includes(`memory ${memoryIds.error}]`), text);
      assert.ok(!text.includes(memoryIds.learning!), 'learnings are not a SessionStart item');
      assert.ok(!text.includes('Unrelated work') && !text.includes(memoryIds.zephyr!), 'other projects stay out');
      assert.doesNotMatch(text, /Code graph/, 'no graph matches the folder, and none was named');

      const stale = contextOf(
        await hook(
          reader,
          input('SessionStart', { source: 'startup', session_id: 's-stale' }),
          '?repo=wren&commit=abcdef1234567',
        ),
        'SessionStart',
      );
      assert.match(
        stale,
        /- wren: latest upload is commit 25344fbd02fd, analyzed \d{4}-\d\d-\d\d; this session is at abcdef123456: answers about code may be stale/,
      );
      const current = contextOf(
        await hook(
          reader,
          input('SessionStart', { session_id: 's-current' }),
          `?repo=wren&commit=${WREN_COMMIT.slice(0, 10)}`,
        ),
        'SessionStart',
      );
      assert.match(current, /it is the commit this session is at/);
    });

    it('SessionStart for a project with nothing in it answers {}; ?project= beats the cwd', async () => {
      assert.equal(
        contextOf(await hook(reader, input('SessionStart', { cwd: '/tmp/nowhere' }), '?project=Empty'), 'SessionStart'),
        '',
      );
      const zephyr = contextOf(
        await hook(reader, input('SessionStart', { session_id: 's-z' }), '?project=zephyr'),
        'SessionStart',
      );
      assert.match(zephyr, /project "Zephyr"/);
      assert.match(zephyr, /Unrelated work/);
    });

    it('UserPromptSubmit: memories for the prompt, each once per session, on any instance; new sessions get them again', async () => {
      const prompt = input('UserPromptSubmit', {
        session_id: 's-prompt',
        prompt: 'How do our retries back off with jitter?',
      });
      const first = contextOf(await hook(reader, prompt), 'UserPromptSubmit');
      assert.ok(first.includes(`memory ${memoryIds.decision}]`), first);
      assert.ok(!first.includes(memoryIds.zephyr!), 'only the project’s memories');
      // The same prompt again, on the other instance: nothing new to give.
      assert.equal(contextOf(await hook(reader, prompt, '', () => second), 'UserPromptSubmit'), '');
      const other = contextOf(await hook(reader, { ...prompt, session_id: 's-other' }), 'UserPromptSubmit');
      assert.ok(other.includes(memoryIds.decision!), 'another session is given it');
      // After a compaction the model no longer holds it: given again.
      const compacted = contextOf(
        await hook(reader, input('SessionStart', { session_id: 's-prompt', source: 'compact' })),
        'SessionStart',
      );
      assert.ok(compacted.includes(memoryIds.decision!), 'given again after compact');
      // A resumed session keeps its transcript: what it was given stays given.
      const resumed = contextOf(
        await hook(reader, input('SessionStart', { session_id: 's-prompt', source: 'resume' })),
        'SessionStart',
      );
      assert.ok(!resumed.includes(memoryIds.decision!), resumed);
    });

    it('SessionStart’s memories count as given: the next prompt of the session leaves them out', async () => {
      const session = 's-chain';
      const start = contextOf(
        await hook(reader, input('SessionStart', { session_id: session, source: 'startup' })),
        'SessionStart',
      );
      assert.ok(start.includes(memoryIds.decision!));
      const text = contextOf(
        await hook(
          reader,
          input('UserPromptSubmit', { session_id: session, prompt: 'How do our retries back off with jitter?' }),
        ),
        'UserPromptSubmit',
      );
      assert.ok(!text.includes(memoryIds.decision!), text);
    });

    it('UserPromptSubmit: a prompt of a few words gets nothing; one naming identifiers gets their symbols', async () => {
      assert.equal(
        contextOf(await hook(reader, input('UserPromptSubmit', { prompt: 'go on' })), 'UserPromptSubmit'),
        '',
      );
      const text = contextOf(
        await hook(
          reader,
          input('UserPromptSubmit', {
            session_id: 's-ident',
            cwd: '/home/dev/wren',
            prompt: 'Why does `applyJitter` ignore parseRetryAfter here?',
          }),
        ),
        'UserPromptSubmit',
      );
      assert.match(text, /Code the prompt names \(wren @ 25344fbd02\):/);
      assert.match(text, /- source\/core\/backoff\.ts::applyJitter \(function, source\/core\/backoff\.ts:9-17\)/);
      assert.match(text, /- source\/core\/backoff\.ts::parseRetryAfter \(function, source\/core\/backoff\.ts:19-32\)/);
    });

    it('PreToolUse: a read file gets the memories that mention it and its main symbols; a pattern its symbols', async () => {
      const read = contextOf(
        await hook(
          reader,
          input('PreToolUse', {
            session_id: 's-tools',
            cwd: '/home/dev/wren',
            tool_name: 'Read',
            tool_input: { file_path: '/home/dev/wren/source/core/backoff.ts' },
          }),
        ),
        'PreToolUse',
      );
      assert.match(read, /on source\/core\/backoff\.ts:/);
      assert.ok(read.includes(`memory ${memoryIds.backoff}] backoff.ts must stay free of timers`), read);
      for (const symbol of ['backoffDelay', 'applyJitter', 'parseRetryAfter'])
        assert.ok(read.includes(`- source/core/backoff.ts::${symbol} (function,`), `${symbol} in ${read}`);
      // Reading it again in the session: nothing new.
      const again = await hook(
        reader,
        input('PreToolUse', {
          session_id: 's-tools',
          cwd: '/home/dev/wren',
          tool_name: 'Read',
          tool_input: { file_path: 'source/core/backoff.ts' },
        }),
      );
      assert.equal(contextOf(again, 'PreToolUse'), '');
      const grep = contextOf(
        await hook(
          reader,
          input('PreToolUse', {
            session_id: 's-grep',
            cwd: '/home/dev/wren',
            tool_name: 'Grep',
            tool_input: { pattern: 'resolveUrl\\(' },
          }),
        ),
        'PreToolUse',
      );
      assert.match(grep, /symbols matching "resolveUrl" in wren/);
      assert.match(grep, /- source\/core\/Client\.ts::Client\.resolveUrl \(method, source\/core\/Client\.ts:57-63\)/);
      const glob = contextOf(
        await hook(
          reader,
          input('PreToolUse', {
            session_id: 's-glob',
            cwd: '/home/dev/wren',
            tool_name: 'Glob',
            tool_input: { pattern: '**/StatusError*.ts' },
          }),
        ),
        'PreToolUse',
      );
      assert.match(glob, /source\/errors\/StatusError\.ts::StatusError \(class,/);
      const bash = await hook(
        reader,
        input('PreToolUse', { cwd: '/home/dev/wren', tool_name: 'Bash', tool_input: { command: 'ls' } }),
      );
      assert.equal(contextOf(bash, 'PreToolUse'), '');
    });

    it('other events and unknown ones answer {}; the answer carries its server time', async () => {
      for (const event of ['PostToolUse', 'Stop', 'SessionEnd', 'Notification', 'PreCompact']) {
        const answer = await hook(reader, input(event, { tool_name: 'Edit', tool_input: { file_path: 'a.ts' } }));
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body, {}, event);
        assert.match(answer.headers.get('server-timing') ?? '', /hook;dur=\d+(\.\d+)?/);
      }
    });

    it('bad input is 400 naming the field; unknown fields are not an error', async () => {
      const missing = await hook(reader, { session_id: 'x', cwd: '/a' });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.code, 'VALIDATION_ERROR');
      assert.match(missing.body.error.message, /hook_event_name/);
      const wrongType = await hook(reader, input('UserPromptSubmit', { prompt: 42 }));
      assert.equal(wrongType.status, 400);
      assert.match(wrongType.body.error.message, /prompt/);
      const notObject = await hook(reader, ['SessionStart']);
      assert.equal(notObject.status, 400);
      const badCommit = await hook(reader, input('SessionStart'), '?commit=not-a-hash');
      assert.equal(badCommit.status, 400);
      assert.match(badCommit.body.error.message, /commit/);
      const unknownParam = await hook(reader, input('SessionStart'), '?projct=x');
      assert.equal(unknownParam.status, 400);
      assert.match(unknownParam.body.error.message, /projct/);
    });

    it('scopes: no key is 401; a key without read is 403; capture off, PostToolUse and SessionEnd need only read', async () => {
      const anonymous = await hook(undefined, input('SessionStart'));
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);
      const refused = await hook(writeOnly, input('UserPromptSubmit', { prompt: 'How do our retries back off?' }));
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'FORBIDDEN');
      assert.match(refused.body.error.message, /"read" scope/);
      for (const event of ['PostToolUse', 'SessionEnd']) assert.equal((await hook(reader, input(event))).status, 200);
    });

    it('the printed SessionStart command, run by bash in a git checkout, brings the context and the commit; a stopped hub: nothing, exit 0', async () => {
      const checkout = await scratch();
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: checkout })
          .toString()
          .trim();
      git('init', '-q');
      git('commit', '-q', '--allow-empty', '-m', 'first');
      const head = git('rev-parse', 'HEAD');
      const command = (url: string) =>
        (
          claudeCodeHooks({ url: hookEndpoint(url, { project: 'Apollo Lander', repo: 'wren' }) }).SessionStart![0]!
            .hooks[0] as CommandHook
        ).command;
      const stdin = JSON.stringify(input('SessionStart', { session_id: 's-curl', source: 'startup', cwd: checkout }));
      const live = await runBash(command(server.url), stdin, { DEVSTREAM_TOKEN: reader }, checkout);
      assert.equal(live.code, 0, live.stderr);
      const text = contextOf({ status: 200, body: JSON.parse(live.stdout), headers: new Headers() }, 'SessionStart');
      assert.match(text, /project "Apollo Lander"/);
      assert.match(text, /Wire the retry budget/);
      assert.ok(text.includes(`this session is at ${head.slice(0, 12)}`), text);
      // A wrong key (401) and a stopped hub: nothing printed, exit 0, within curl's 3 s.
      const refused = await runBash(command(server.url), stdin, { DEVSTREAM_TOKEN: 'dsh_wrong' }, checkout);
      assert.deepEqual([refused.code, refused.stdout], [0, '']);
      const stopped = await startServer(database);
      const stoppedUrl = stopped.url;
      await stopped.close();
      const down = await runBash(command(stoppedUrl), stdin, { DEVSTREAM_TOKEN: reader }, checkout);
      assert.deepEqual([down.code, down.stdout], [0, '']);
      assert.ok(down.ms < 10_000, `${down.ms} ms`);
    });

    it('metrics: hook calls by event and outcome, and the characters given', async () => {
      const metrics = await fetch(`${server.url}/metrics`, { headers: bearer(ADMIN) });
      const text = await metrics.text();
      assert.match(text, /devstream_hook_duration_seconds_count\{event="UserPromptSubmit",outcome="injected"\} [1-9]/);
      assert.match(text, /devstream_hook_duration_seconds_count\{event="UserPromptSubmit",outcome="empty"\} [1-9]/);
      assert.match(text, /devstream_hook_duration_seconds_count\{event="other",outcome="skipped"\} [1-9]/);
      assert.match(text, /devstream_hook_duration_seconds_count\{event="UserPromptSubmit",outcome="refused"\} [1-9]/);
      assert.match(text, /devstream_hook_injected_characters_total\{event="SessionStart"\} [1-9]\d*/);
    });
  });

  describe(`Claude Code hooks: budget, capture and fail-open (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { hooks: { contextTokens: 100, capture: true, sessionTtlMs: 3_600_000 } });
      for (let i = 0; i < 12; i++) {
        const content = `Retry budget note ${i}: the retry budget refills ${i + 1} tokens per second and ${'caps bursts of retries '.repeat(4)}`;
        assert.equal(
          (await rest(server.url, 'POST', '/api/v1/memories', { content, content_type: 'learning', project: 'Budget' }))
            .status,
          201,
        );
      }
      assert.equal(
        (await rest(server.url, 'POST', '/api/v1/tasks', taskInput({ title: 'Capture me', project: 'Budget' }))).status,
        201,
      );
    });
    after(async () => {
      await server?.close().catch(() => undefined);
      await database?.dispose();
    });

    it('the context stays within HOOK_CONTEXT_TOKENS (chars / 4), whole lines only', async () => {
      const text = contextOf(
        await rest(
          server.url,
          'POST',
          HOOK,
          input('UserPromptSubmit', { cwd: '/w/budget', prompt: 'how does the retry budget refill?' }),
        ),
        'UserPromptSubmit',
      );
      assert.ok(text.length > 0 && text.length <= 400, `${text.length} characters`);
      const lines = text.split('\n');
      assert.match(lines[0]!, /project "Budget"/);
      for (const line of lines.slice(2))
        assert.match(line, /^- \[learning · \d{4}-\d\d-\d\d · memory [0-9a-f]{12}\] Retry budget note \d+: /);
    });

    it('HOOK_CAPTURE=1: the session’s files and task changes become one context memory at SessionEnd, never the transcript', async () => {
      const session = { session_id: 'capture-1', cwd: '/w/budget' };
      const post = (body: unknown) => rest(server.url, 'POST', HOOK, body);
      const uses = [
        { tool_name: 'Read', tool_input: { file_path: '/w/budget/src/retry.ts' } },
        {
          tool_name: 'Edit',
          tool_input: { file_path: '/w/budget/src/budget.ts', old_string: 'SECRET-OLD', new_string: 'x' },
        },
        { tool_name: 'Write', tool_input: { file_path: '/w/budget/src/budget.ts', content: 'SECRET-CONTENT' } },
        {
          tool_name: 'mcp__devstream__devstream_update_task',
          tool_input: { task_id: 'abcdef012345', status: 'completed' },
        },
        { tool_name: 'Bash', tool_input: { command: 'echo SECRET-COMMAND' } },
      ];
      for (const use of uses)
        assert.deepEqual(
          (await post(input('PostToolUse', { ...session, ...use, tool_response: { ok: true } }))).body,
          {},
        );
      assert.deepEqual((await post(input('Stop', session))).body, {});
      assert.deepEqual((await post(input('SessionEnd', { ...session, reason: 'logout' }))).body, {});
      const found = await rest(server.url, 'POST', '/api/v1/memories/search', {
        query: 'Claude Code session',
        project: 'Budget',
        content_type: 'context',
      });
      const memories = found.body.results as Array<{ content: string; keywords: string[] }>;
      assert.equal(memories.length, 1, JSON.stringify(found.body));
      const content = memories[0]!.content;
      assert.match(content, /^Claude Code session capture-1 \(\d{4}-\d\d-\d\d \d\d:\d\d UTC, ended: logout\)\./);
      assert.match(content, /Files edited: src\/budget\.ts\./);
      assert.match(content, /Task changes: abcdef012345 → completed\./);
      assert.match(content, /Files read: src\/retry\.ts\./);
      assert.doesNotMatch(content, /SECRET/);
      assert.deepEqual(memories[0]!.keywords, ['claude-code-session']);
      // The record went with it: a second SessionEnd stores nothing more.
      assert.deepEqual((await post(input('SessionEnd', session))).body, {});
      const after = await rest(server.url, 'POST', '/api/v1/memories/search', {
        query: 'Claude Code session',
        project: 'Budget',
        content_type: 'context',
      });
      assert.equal(after.body.results.length, 1);
    });

    it('fail-open: with the database gone, every event answers 200 {}', async () => {
      await database.db.close();
      for (const event of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'SessionEnd']) {
        const answer = await rest(
          server.url,
          'POST',
          HOOK,
          input(event, {
            prompt: 'how does the retry budget refill?',
            tool_name: 'Read',
            tool_input: { file_path: 'a.ts' },
          }),
        );
        assert.equal(answer.status, 200, `${event}: ${JSON.stringify(answer.body)}`);
        assert.deepEqual(answer.body, {});
      }
    });
  });
}

describe('Claude Code hooks: fail-open before the handler (authentication with the database gone)', () => {
  it('answers 200 {} when the key cannot be checked', async () => {
    const database = await backends[0]!.open();
    const server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN } });
    try {
      const token = await createKey(server.url, ADMIN, 'reader', ['read']);
      await database.db.close();
      const answer = await rest(server.url, 'POST', HOOK, input('SessionStart'), bearer(token));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, {});
      // Other routes still say what happened.
      const tasks = await rest(server.url, 'GET', '/api/v1/tasks', undefined, bearer(token));
      assert.ok(tasks.status >= 500, String(tasks.status));
    } finally {
      await server.close().catch(() => undefined);
      await database.dispose();
    }
  });
});

// A cluster of its own, stopped under the service: only with the Postgres half of the suite.
const skipOutage = !postgresBaseUrl ? 'Postgres tests are off (no DATABASE_URL)' : (clusterSupport() ?? false);

describe('Claude Code hooks: fail-open through a Postgres outage', { skip: skipOutage }, () => {
  it('answers 200 {} while Postgres is stopped, and context again once it is back', async () => {
    const cluster = await createCluster();
    const db = await openDb({ databaseUrl: cluster.url });
    try {
      const { current } = await migrate(db.kysely);
      const server = await startServer({ db, schemaVersion: current, dispose: () => db.close() });
      try {
        const memory = { content: 'Retries back off with full jitter.', content_type: 'decision', project: 'Outage' };
        assert.equal((await rest(server.url, 'POST', '/api/v1/memories', memory)).status, 201);
        const start = input('SessionStart', { cwd: '/w/outage', session_id: 'outage' });
        assert.match(contextOf(await rest(server.url, 'POST', HOOK, start), 'SessionStart'), /full jitter/);
        await cluster.stop('fast');
        const down = await rest(server.url, 'POST', HOOK, { ...start, session_id: 'outage-2' });
        assert.equal(down.status, 200, JSON.stringify(down.body));
        assert.deepEqual(down.body, {});
        await cluster.start();
        let session = 0;
        const back = await eventually(async () => {
          const answer = await rest(server.url, 'POST', HOOK, { ...start, session_id: `outage-back-${session++}` });
          return /full jitter/.test(contextOf(answer, 'SessionStart')) ? answer : undefined;
        });
        assert.equal(back.status, 200);
      } finally {
        await server.close();
      }
    } finally {
      await db.close();
      await cluster.destroy();
    }
  });
});
