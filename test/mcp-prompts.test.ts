import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, type TestDb } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { uploadWren } from './helpers/graph-fixture.js';
import { createKey } from './helpers/keys.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';
import { taskInput } from './helpers/task-input.js';

const ADMIN = 'test-admin-token-0123456789abcdefghijklmnop';

/** A v2 SDK client of `era` (the 2025 handshake, or pinned to 2026-07-28) as `token`. */
const connect = async (url: string, token: string, era: 'legacy' | 'modern') =>
  (await connectMcp(url, '/mcp', bearer(token), { era })).client;

const textOf = (result: { messages: Array<{ content: unknown }> }) =>
  result.messages.map((m) => (m.content as { text?: string }).text ?? '').join('\n');

for (const backend of backends) {
  describe(`MCP prompts and completions, both eras (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    let reader: string;

    before(async () => {
      database = await backend.open();
      server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN } });
      const writer = await createKey(server.url, ADMIN, 'writer', ['read', 'write']);
      reader = await createKey(server.url, ADMIN, 'reader', ['read']);
      const post = (path: string, body: unknown) => rest(server.url, 'POST', path, body, bearer(writer));
      for (const [title, project] of [
        ['Wire the retry budget', 'Apollo Lander'],
        ['Document the hook endpoint', 'Apollo Lander'],
        ['Unrelated work', 'Zephyr'],
      ] as const)
        assert.equal((await post('/api/v1/tasks', taskInput({ title, project }))).status, 201);
      const tasks = await rest(server.url, 'GET', '/api/v1/tasks?project=Apollo%20Lander', undefined, bearer(writer));
      const first = tasks.body.tasks.find((t: { title: string }) => t.title === 'Wire the retry budget');
      assert.equal(
        (await rest(server.url, 'PATCH', `/api/v1/tasks/${first.id}`, { status: 'active' }, bearer(writer))).status,
        200,
      );
      for (const [content, content_type] of [
        ['Retries back off exponentially with full jitter, capped at 30 s.', 'decision'],
        ['The analyzer crashed on a symlink loop in vendor/.', 'error'],
        ['A learning that resume does not show.', 'learning'],
      ])
        assert.equal((await post('/api/v1/memories', { content, content_type, project: 'Apollo Lander' })).status, 201);
      await uploadWren(server.url, bearer(writer));
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    for (const era of ['legacy', 'modern'] as const) {
      it(`${era}: prompts/list names resume, record-decision and explain-code with their arguments`, async () => {
        const client = await connect(server.url, reader, era);
        try {
          assert.ok(client.getServerCapabilities()?.prompts, 'the prompts capability');
          const { prompts } = await client.listPrompts();
          assert.deepEqual(
            prompts.map((p) => p.name),
            ['resume', 'record-decision', 'explain-code'],
          );
          const resume = prompts.find((p) => p.name === 'resume')!;
          assert.deepEqual(
            resume.arguments?.map((a) => [a.name, a.required ?? false]),
            [
              ['project', true],
              ['since', false],
            ],
          );
        } finally {
          await client.close();
        }
      });

      it(`${era}: resume shows the project's active and pending tasks and its recent decisions and errors, not other projects'`, async () => {
        const client = await connect(server.url, reader, era);
        try {
          const text = textOf(await client.getPrompt({ name: 'resume', arguments: { project: 'apollo lander' } }));
          assert.match(
            text,
            /## Active tasks[\s\S]*Wire the retry budget[\s\S]*## Next pending tasks[\s\S]*Document the hook endpoint/,
          );
          assert.match(text, /decision \(\d{4}-\d\d-\d\d, memory [^)]+\): Retries back off exponentially/);
          assert.match(text, /error \(.*\): The analyzer crashed/);
          assert.ok(!text.includes('A learning that resume does not show'));
          assert.ok(!text.includes('Unrelated work'));
          // `since` in the future: no decisions yet.
          const later = textOf(
            await client.getPrompt({ name: 'resume', arguments: { project: 'Apollo Lander', since: '2999-01-01' } }),
          );
          assert.match(later, /## Decisions and errors since 2999-01-01\nNone recorded\./);
        } finally {
          await client.close();
        }
      });

      it(`${era}: record-decision and explain-code`, async () => {
        const client = await connect(server.url, reader, era);
        try {
          const record = textOf(
            await client.getPrompt({
              name: 'record-decision',
              arguments: { decision: 'Use PGlite for local development databases', project: 'Apollo Lander' },
            }),
          );
          assert.match(record, /devstream_store_memory with content_type "decision" in project "Apollo Lander"/);
          assert.match(record, /"keywords": \[\s*"pglite",\s*"local",\s*"development",\s*"databases"\s*\]/);
          const explain = textOf(
            await client.getPrompt({
              name: 'explain-code',
              arguments: { question: 'how is a bird described', repo: 'wren' },
            }),
          );
          assert.match(explain, /Question: how is a bird described/);
          assert.match(explain, /ANSWER/);
        } finally {
          await client.close();
        }
      });

      it(`${era}: completions name projects and repos by prefix; bad arguments are -32602 naming them`, async () => {
        const client = await connect(server.url, reader, era);
        try {
          const projects = await client.complete({
            ref: { type: 'ref/prompt', name: 'resume' },
            argument: { name: 'project', value: 'ap' },
          });
          assert.deepEqual(projects.completion.values, ['Apollo Lander']);
          const all = await client.complete({
            ref: { type: 'ref/prompt', name: 'resume' },
            argument: { name: 'project', value: '' },
          });
          assert.deepEqual(all.completion.values, ['Apollo Lander', 'Zephyr']);
          const wildcard = await client.complete({
            ref: { type: 'ref/prompt', name: 'resume' },
            argument: { name: 'project', value: '%' },
          });
          assert.deepEqual(wildcard.completion.values, [], 'a LIKE wildcard is a character');
          const repos = await client.complete({
            ref: { type: 'ref/prompt', name: 'explain-code' },
            argument: { name: 'repo', value: 'W' },
          });
          assert.deepEqual(repos.completion.values, ['wren']);

          await assert.rejects(
            client.getPrompt({ name: 'resume', arguments: {} }),
            (e: { code?: number; message: string }) => {
              assert.equal(e.code, -32602);
              assert.match(e.message, /project/);
              return true;
            },
          );
          await assert.rejects(
            client.getPrompt({ name: 'resume', arguments: { project: 'Apollo Lander', since: 'yesterday' } }),
            /since/,
          );
          await assert.rejects(client.getPrompt({ name: 'nope' }), /Unknown prompt: nope/);
        } finally {
          await client.close();
        }
      });
    }
  });
}
