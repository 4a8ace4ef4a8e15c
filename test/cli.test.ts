import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { backends, postgresBackend } from './helpers/backends.js';
import { FakeOllama } from './helpers/fake-ollama.js';
import { WREN_COMMIT, WREN_FILE, WREN_FOLDER } from './helpers/graph-fixture.js';
import { startServer } from './helpers/server.js';
import { ROOT, runCli as cli, serve } from './helpers/service.js';

describe('the devstream-hub command', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-cli-'));
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test('serve is the default; data in the PGlite directory survives a restart', async () => {
    const dataDir = await tempDir();
    const first = await serve({ DATA_DIR: dataDir });
    const created = await fetch(`${first.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Survivor', description: 'd', task_type: 'coding', priority: 6, phase_name: 'P', project: 'Durable' }),
    });
    assert.equal(created.status, 201);
    const { task } = (await created.json()) as any;
    assert.equal(await first.stop(), 0, 'SIGTERM is a clean exit');

    const second = await serve({ DATA_DIR: dataDir });
    try {
      const listed = (await (await fetch(`${second.url}/api/v1/tasks?project=Durable`)).json()) as any;
      assert.equal(listed.total, 1);
      assert.equal(listed.tasks[0].id, task.id);
      assert.equal(listed.tasks[0].created_at, task.created_at);
    } finally {
      await second.stop();
    }
  });

  test('migrate applies pending migrations, then has nothing to do', async () => {
    const dataDir = await tempDir();
    const first = await cli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(first.code, 0, first.stderr);
    const names = (await readdir(join(ROOT, 'migrations'))).filter((f) => f.endsWith('.sql')).sort().map((f) => f.replace(/\.sql$/, ''));
    assert.ok(names.length >= 7);
    assert.ok(first.stdout.includes(`Applied ${names.length} migration(s) to embedded PGlite in ${dataDir}: ${names.join(', ')}; schema at ${names.length}`), first.stdout);
    const second = await cli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`Nothing to apply: .* schema version ${names.length}`));
  });

  test('bad configuration stops start-up with one message naming every bad variable', async () => {
    const r = await cli(['serve'], { PORT: 'x', LOG_LEVEL: 'chatty', DATABASE_URL: 'mysql://root:s3cret@db/x' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Invalid configuration/);
    assert.match(r.stderr, /PORT: /);
    assert.match(r.stderr, /LOG_LEVEL: /);
    assert.match(r.stderr, /DATABASE_URL: /);
    assert.doesNotMatch(r.stderr + r.stdout, /s3cret/);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/, 'no stack trace');
  });

  test('AUTH=off on a HOST other machines can reach is refused at start-up', async () => {
    const r = await cli(['serve'], { HOST: '0.0.0.0', AUTH: 'off', DATA_DIR: await tempDir() });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /AUTH: off is refused when HOST \(0\.0\.0\.0\) is reachable from other machines/);
  });

  test('keys: with embedded PGlite the CLI points at the REST routes instead of opening the data directory', async () => {
    const dataDir = await tempDir();
    const r = await cli(['keys', 'create', 'alice'], { DATA_DIR: dataDir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /POST \/api\/v1\/keys/);
    assert.deepEqual(await readdir(dataDir), [], 'the data directory was not touched');
    const usage = await cli(['keys', 'rotate'], { DATA_DIR: dataDir });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Unknown keys action "rotate"/);
  });

  test('keys create, list and revoke against Postgres; the token works until revoked', { skip: !postgresBackend && 'no Postgres' }, async () => {
    const database = await postgresBackend!.open();
    const env = { DATABASE_URL: database.url! };
    try {
      const created = await cli(['keys', 'create', 'ci-bot', '--scopes', 'read,write'], env);
      assert.equal(created.code, 0, created.stderr);
      const token = /^(dsh_\S+)$/m.exec(created.stdout)?.[1];
      assert.ok(token, created.stdout);
      const bad = await cli(['keys', 'create', 'other', '--scopes', 'read,root'], env);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /VALIDATION_ERROR: scopes\.1/);
      const dup = await cli(['keys', 'create', 'CI-BOT'], env);
      assert.equal(dup.code, 1);
      assert.match(dup.stderr, /CONFLICT/);
      const listed = await cli(['keys', 'list'], env);
      assert.match(listed.stdout, /^ci-bot\s+read,write\s+created .* last used never$/m);
      assert.ok(!listed.stdout.includes(token!), 'list shows no tokens');

      const server = await startServer(database, { auth: { mode: 'required', adminToken: undefined } });
      try {
        const headers = { authorization: `Bearer ${token}` };
        assert.equal((await fetch(`${server.url}/api/v1/tasks`, { headers })).status, 200);
        const revoked = await cli(['keys', 'revoke', 'ci-bot'], env);
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.equal((await fetch(`${server.url}/api/v1/tasks`, { headers })).status, 401);
        assert.equal((await cli(['keys', 'revoke', 'ci-bot'], env)).code, 1, 'nothing left to revoke');
      } finally {
        await server.close();
      }
    } finally {
      await database.dispose();
    }
  });

  test('an unknown command is refused with the usage text', async () => {
    const r = await cli(['frobnicate'], {});
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown command "frobnicate"/);
    assert.match(r.stderr, /Usage: devstream-hub/);
  });

  test('reembed embeds the memories that lack a vector of the model, then reports an embedder failure', async () => {
    const dataDir = await tempDir();
    const db = await openDb({ dataDir });
    await migrate(db.kysely);
    await db.kysely.insertInto('intervention_plans').values({ id: 'aaaaaaaaaaaa', title: 'P', expected_outcome: 'o', status: 'active', priority: 5 }).execute();
    await db.kysely
      .insertInto('semantic_memory')
      .values({
        id: 'bbbbbbbbbbbb', project_id: 'aaaaaaaaaaaa', task_id: null, content: 'stored while Ollama was down',
        content_type: 'context', content_format: 'text', keywords: [], importance_score: 0.5, content_hash: 'h',
        source: 'mcp_user_input', embedding: null, embedding_model: null, embedding_dims: null, created_by: null,
      })
      .execute();
    await db.close();

    const fake = await new FakeOllama().start();
    try {
      const env = { DATA_DIR: dataDir, EMBEDDING_PROVIDER: 'ollama', OLLAMA_HOST: fake.url };
      const ok = await cli(['reembed'], env);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /Queued 1 memory for nomic-embed-text/);
      assert.match(ok.stdout, /Embedded 1 with nomic-embed-text; 0 still queued/);
      assert.deepEqual(fake.calls.map((c) => c.input), [['search_document: stored while Ollama was down']]);

      await fake.stop();
      const down = await cli(['reembed', '--all'], env);
      assert.equal(down.code, 1);
      assert.match(down.stdout, /Queued 1 memory for nomic-embed-text \(all\)/);
      assert.match(down.stderr, /The embedder failed: Ollama is unreachable/);
    } finally {
      await fake.stop();
    }
    const reopened = await openDb({ dataDir });
    try {
      const row = await reopened.kysely.selectFrom('semantic_memory').select(['embedding_model', 'embedding_dims']).executeTakeFirstOrThrow();
      assert.deepEqual(row, { embedding_model: 'nomic-embed-text', embedding_dims: 768 });
    } finally {
      await reopened.close();
    }
  });

  test('upload sends a commit file or a DevLens graph folder to a server, gzip-compressed', async () => {
    const database = await backends.find((b) => b.name === 'pglite')!.open();
    const server = await startServer(database);
    try {
      const file = await cli(['upload', WREN_FILE, '--url', server.url, '--repo', 'wren-cli', '--branch', 'main'], {});
      assert.equal(file.code, 0, file.stderr);
      assert.match(file.stdout, /repo wren-cli \(graph [0-9a-f]{16}\), commit 25344fbd02fd.*64 nodes, 75 edges/);

      // The fixture's own folder, as DevLens writes it: meta.json (repoPath /home/dev/wren) and commits/<hash>.json.
      const fixtureFolder = await cli(['upload', WREN_FOLDER, '--url', server.url], {});
      assert.equal(fixtureFolder.code, 0, fixtureFolder.stderr);
      assert.match(fixtureFolder.stdout, /repo wren \(graph [0-9a-f]{16}\), commit 25344fbd02fd.*64 nodes, 75 edges/);

      // A folder whose newest file is the search index DevLens writes beside the commit file: skipped.
      const folder = await tempDir();
      await mkdir(join(folder, 'commits'));
      await copyFile(WREN_FILE, join(folder, 'commits', `${WREN_COMMIT}.json`));
      await writeFile(join(folder, 'commits', `${WREN_COMMIT}.search.json`), '{}');
      await writeFile(join(folder, 'meta.json'), JSON.stringify({ graphId: '090e362366e56fbb', repoPath: '/home/dev/wren-folder' }));
      const fromFolder = await cli(['upload', folder, '--url', server.url], {});
      assert.equal(fromFolder.code, 0, fromFolder.stderr);
      assert.match(fromFolder.stdout, /repo wren-folder .*64 nodes/);

      const listed = (await (await fetch(`${server.url}/api/v1/graphs`)).json()) as any;
      assert.deepEqual(listed.graphs.map((g: any) => g.repo).sort(), ['wren', 'wren-cli', 'wren-folder']);

      const noRepo = await cli(['upload', WREN_FILE, '--url', server.url], {});
      assert.equal(noRepo.code, 2);
      assert.match(noRepo.stderr, /--repo is required/);
      const refused = await cli(['upload', join(ROOT, 'package.json'), '--url', server.url, '--repo', 'not-a-graph'], {});
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /upload failed: 400 VALIDATION_ERROR: nodes/);
    } finally {
      await server.close();
      await database.dispose();
    }
  });
});
