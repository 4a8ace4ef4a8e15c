import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { openDb } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { once, postgresBackend } from './helpers/backends.js';
import { pglite } from './helpers/pglite.js';
import { freePort } from '../support/free-port.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { createKey } from './helpers/keys.js';
import { WREN_COMMIT, WREN_FILE, WREN_FOLDER } from './helpers/graph-fixture.js';
import { rest, startServer } from './helpers/server.js';
import { postTask } from './helpers/tasks.js';
import { tempDirs } from './helpers/temp-dirs.js';
import { ROOT, runCli as cli, serve } from './helpers/service.js';

describe('the devstream-hub command', () => {
  const tempDir = tempDirs('cli');

  test('serve is the default; data in the PGlite directory survives a restart', once, async () => {
    const dataDir = await tempDir();
    const first = await serve({ DATA_DIR: dataDir });
    const task = await postTask(first.url, 'Survivor', 'Durable', 6);
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

  test('migrate applies pending migrations, then has nothing to do', once, async () => {
    const dataDir = await tempDir();
    const first = await cli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(first.code, 0, first.stderr);
    const names = (await readdir(join(ROOT, 'migrations')))
      .filter((f) => f.endsWith('.sql'))
      .sort()
      .map((f) => f.replace(/\.sql$/, ''));
    assert.ok(names.length >= 7);
    assert.ok(
      first.stdout.includes(
        `Applied ${names.length} migration(s) to embedded PGlite in ${dataDir}: ${names.join(', ')}; schema at ${names.length}`,
      ),
      first.stdout,
    );
    const second = await cli(['migrate'], { DATA_DIR: dataDir });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`Nothing to apply: .* schema version ${names.length}`));
  });

  test('bad configuration stops start-up with one message naming every bad variable', once, async () => {
    const r = await cli(['serve'], { PORT: 'x', LOG_LEVEL: 'chatty', DATABASE_URL: 'mysql://root:s3cret@db/x' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Invalid configuration/);
    assert.match(r.stderr, /PORT: /);
    assert.match(r.stderr, /LOG_LEVEL: /);
    assert.match(r.stderr, /DATABASE_URL: /);
    assert.doesNotMatch(r.stderr + r.stdout, /s3cret/);
    assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/, 'no stack trace');
  });

  test('AUTH=off on a HOST other machines can reach is refused at start-up', once, async () => {
    const r = await cli(['serve'], { HOST: '0.0.0.0', AUTH: 'off', DATA_DIR: await tempDir() });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /AUTH: off is refused when HOST \(0\.0\.0\.0\) is reachable from other machines/);
  });

  test(
    'keys: with embedded PGlite the CLI points at the REST routes instead of opening the data directory',
    once,
    async () => {
      const dataDir = await tempDir();
      const r = await cli(['keys', 'create', 'alice'], { DATA_DIR: dataDir });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /POST \/api\/v1\/keys/);
      assert.deepEqual(await readdir(dataDir), [], 'the data directory was not touched');
      const usage = await cli(['keys', 'rotate'], { DATA_DIR: dataDir });
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /Unknown keys action "rotate"/);
    },
  );

  test(
    'keys create, list and revoke against Postgres; the token works until revoked',
    { skip: !postgresBackend && 'no Postgres' },
    async () => {
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
        const core = await cli(['keys', 'create', 'core-bot', '--profile', 'core'], env);
        assert.equal(core.code, 0, core.stderr);
        assert.match(core.stdout, /with scopes read and tool profile core\./);
        const badProfile = await cli(['keys', 'create', 'odd-bot', '--profile', 'most'], env);
        assert.equal(badProfile.code, 1);
        assert.match(badProfile.stderr, /VALIDATION_ERROR: profile/);
        const scoped = await cli(
          [
            'keys',
            'create',
            'contractor',
            '--scopes',
            'read,write',
            '--projects',
            'Shop Web, Payments',
            '--repos',
            'shop-web',
          ],
          env,
        );
        assert.equal(scoped.code, 0, scoped.stderr);
        assert.match(scoped.stdout, /limited to projects Shop Web, Payments and repos shop-web\./);
        const badProjects = await cli(['keys', 'create', 'odd-bot', '--projects', ','], env);
        assert.equal(badProjects.code, 1);
        assert.match(badProjects.stderr, /VALIDATION_ERROR: projects/);
        const listed = await cli(['keys', 'list'], env);
        assert.match(listed.stdout, /^ci-bot\s+read,write\s+tools all\s+created .* last used never$/m);
        assert.match(listed.stdout, /^contractor\s+read,write\s.* projects Shop Web,Payments {2}repos shop-web$/m);
        assert.match(listed.stdout, /^core-bot\s+read\s+tools core\s+created /m);
        assert.ok(!listed.stdout.includes('odd-bot'), 'the refused key was not made');
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
    },
  );

  test('an unknown command is refused with the usage text', once, async () => {
    const r = await cli(['frobnicate'], {});
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown command "frobnicate"/);
    assert.match(r.stderr, /Usage: devstream-hub/);
  });

  test(
    'reembed embeds the memories that lack a vector of the model, then reports an embedder failure',
    once,
    async () => {
      const dataDir = await tempDir();
      const db = await openDb({ dataDir });
      await migrate(db.kysely);
      await db.kysely
        .insertInto('intervention_plans')
        .values({ id: 'aaaaaaaaaaaa', title: 'P', expected_outcome: 'o', status: 'active', priority: 5 })
        .execute();
      await db.kysely
        .insertInto('semantic_memory')
        .values({
          id: 'bbbbbbbbbbbb',
          project_id: 'aaaaaaaaaaaa',
          task_id: null,
          content: 'stored while Ollama was down',
          content_type: 'context',
          content_format: 'text',
          keywords: [],
          importance_score: 0.5,
          content_hash: 'h',
          source: 'mcp_user_input',
          embedding_model: null,
          embedding_dims: null,
          created_by: null,
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
        assert.deepEqual(
          fake.calls.map((c) => c.input),
          [['search_document: stored while Ollama was down']],
        );

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
        const row = await reopened.kysely
          .selectFrom('semantic_memory')
          .select(['embedding_model', 'embedding_dims'])
          .executeTakeFirstOrThrow();
        assert.deepEqual(row, { embedding_model: 'nomic-embed-text', embedding_dims: 768 });
        const vector = await reopened.kysely
          .selectFrom('memory_vectors')
          .select(['memory_id', 'embedding_model', 'embedding_dims'])
          .executeTakeFirstOrThrow();
        assert.deepEqual(vector, {
          memory_id: 'bbbbbbbbbbbb',
          embedding_model: 'nomic-embed-text',
          embedding_dims: 768,
        });
      } finally {
        await reopened.close();
      }
    },
  );

  test('upload sends a commit file or a DevLens graph folder to a server, gzip-compressed', once, async () => {
    const database = await pglite.open();
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
      await writeFile(
        join(folder, 'meta.json'),
        JSON.stringify({ graphId: '090e362366e56fbb', repoPath: '/home/dev/wren-folder' }),
      );
      const fromFolder = await cli(['upload', folder, '--url', server.url], {});
      assert.equal(fromFolder.code, 0, fromFolder.stderr);
      assert.match(fromFolder.stdout, /repo wren-folder .*64 nodes/);

      const listed = (await (await fetch(`${server.url}/api/v1/graphs`)).json()) as any;
      assert.deepEqual(listed.graphs.map((g: any) => g.repo).sort(), ['wren', 'wren-cli', 'wren-folder']);

      const refused = await cli(
        ['upload', join(ROOT, 'package.json'), '--url', server.url, '--repo', 'not-a-graph'],
        {},
      );
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /upload failed: 400 VALIDATION_ERROR: nodes/);
    } finally {
      await server.close();
      await database.dispose();
    }
  });
  /** A commit file of one node, as small as the server accepts. */
  const COMMIT = JSON.stringify({
    commitHash: 'c0ffee0000000000000000000000000000000001',
    nodes: [{ id: 'file::a.ts', name: 'a.ts', type: 'FILE', filePath: 'a.ts' }],
    edges: [],
  });

  test(
    'a server that cannot be reached is named with the cause; a URL without a scheme is refused (exit 2)',
    once,
    async () => {
      const dir = await tempDir();
      await writeFile(join(dir, 'graph.json'), COMMIT);
      await writeFile(join(dir, 'a.ts'), 'export const a = 1;\n');
      const port = await freePort(); // free a moment ago: nothing listens there
      const dead = `http://127.0.0.1:${port}`;
      const refused = `could not reach ${dead} (connection refused, ECONNREFUSED)`;

      const upload = await cli(['upload', join(dir, 'graph.json'), '--url', dead, '--repo', 'x'], {});
      assert.equal(upload.code, 1);
      assert.equal(upload.stderr.trim(), `upload failed: ${refused}`);
      const analyze = await cli(['analyze', dir, '--upload', dead, '--quiet'], {});
      assert.equal(analyze.code, 1);
      assert.equal(analyze.stderr.trim(), `upload failed: ${refused}`);

      const schemeless = await cli(
        ['upload', join(dir, 'graph.json'), '--url', `127.0.0.1:${port}`, '--repo', 'x'],
        {},
      );
      assert.equal(schemeless.code, 2);
      assert.equal(
        schemeless.stderr.trim(),
        `--url must be an http(s) URL, such as http://127.0.0.1:${port} ("127.0.0.1:${port}" has no scheme)`,
      );
      const analyzeSchemeless = await cli(['analyze', dir, '--upload', `127.0.0.1:${port}`], {});
      assert.equal(analyzeSchemeless.code, 2);
      assert.equal(
        analyzeSchemeless.stderr.trim(),
        `--upload must be an http(s) URL, such as http://127.0.0.1:${port} ("127.0.0.1:${port}" has no scheme)`,
        'refused before analyzing',
      );
      const ftp = await cli(['analyze', dir, '--upload', 'ftp://127.0.0.1/'], {});
      assert.equal(ftp.code, 2);
      assert.match(
        ftp.stderr,
        /^--upload must be an http\(s\) URL, such as http:\/\/127\.0\.0\.1:7000 \("ftp:\/\/127\.0\.0\.1\/" is ftp, not http\(s\)\)$/m,
      );

      const help = await cli(['help'], {});
      assert.match(help.stdout, /take the server as an http\(s\) URL \(http:\/\/127\.0\.0\.1:7000\)/);
      assert.match(help.stdout, /DEVSTREAM_TOKEN/);
    },
  );

  test(
    'upload: --repo defaults to the meta.json of a graph folder, else to the folder the commit file is in; the key may come from DEVSTREAM_TOKEN',
    once,
    async () => {
      const ADMIN_TOKEN = 'cli-upload-admin-token-0123456789abcdef';
      const database = await pglite.open();
      const server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
      try {
        const env = { DEVSTREAM_TOKEN: await createKey(server.url, ADMIN_TOKEN, 'uploader', ['read', 'write']) };
        const root = await tempDir();

        // A commit file written by `analyze . --out graph.json` in a checkout: named after its folder, and said so.
        await mkdir(join(root, 'shop'));
        await writeFile(join(root, 'shop', 'graph.json'), COMMIT);
        const plain = await cli(['upload', join(root, 'shop', 'graph.json'), '--url', server.url], env);
        assert.equal(plain.code, 0, plain.stderr);
        assert.match(
          plain.stdout,
          /^Uploaded graph\.json to http:\/\/127\.0\.0\.1:\d+: repo shop \(graph [0-9a-f]{16}\)/,
        );
        assert.match(plain.stderr, /no --repo given: naming the repository "shop", after the folder graph\.json is in/);

        // A commit file inside a DevLens graph folder (commits/<hash>.json): its meta.json names the repo.
        const graph = join(root, '096fe8addf662bc7');
        await mkdir(join(graph, 'commits'), { recursive: true });
        await writeFile(
          join(graph, 'meta.json'),
          JSON.stringify({ graphId: '096fe8addf662bc7', repoPath: '/home/dev/inventory/' }),
        );
        await writeFile(join(graph, 'commits', 'c0ffee.json'), COMMIT);
        const inGraph = await cli(['upload', join(graph, 'commits', 'c0ffee.json'), '--url', server.url], env);
        assert.equal(inGraph.code, 0, inGraph.stderr);
        assert.match(inGraph.stdout, /repo inventory \(graph/);
        assert.equal(inGraph.stderr, '', 'nothing to say: meta.json named it');
        // Beside its meta.json, as the shared fixtures keep them.
        const flat = join(root, 'flat');
        await mkdir(flat);
        await writeFile(join(flat, 'meta.json'), JSON.stringify({ repoPath: 'C:\\src\\billing' }));
        await writeFile(join(flat, 'c0ffee.json'), COMMIT);
        const beside = await cli(['upload', join(flat, 'c0ffee.json'), '--url', server.url], env);
        assert.equal(beside.code, 0, beside.stderr);
        assert.match(beside.stdout, /repo billing \(graph/);

        const listed = await rest(server.url, 'GET', '/api/v1/graphs', undefined, {
          authorization: `Bearer ${env.DEVSTREAM_TOKEN}`,
        });
        assert.deepEqual(listed.body.graphs.map((g: any) => g.repo).sort(), ['billing', 'inventory', 'shop']);

        // A graph folder without meta.json names no repository: --repo is required there.
        const bare = join(root, 'bare');
        await mkdir(join(bare, 'commits'), { recursive: true });
        await writeFile(join(bare, 'commits', 'c0ffee.json'), COMMIT);
        for (const target of [bare, join(bare, 'commits', 'c0ffee.json')]) {
          const noRepo = await cli(['upload', target, '--url', server.url], env);
          assert.equal(noRepo.code, 2, noRepo.stdout);
          assert.match(noRepo.stderr, /^--repo is required: .* has no meta\.json naming the repository/);
        }
        const missing = await cli(['upload', join(root, 'nope.json'), '--url', server.url], env);
        assert.equal(missing.code, 2);
        assert.match(missing.stderr, /^upload: .*nope\.json: no such file or folder$/m);

        // Without the key the server refuses: the upload above passed on DEVSTREAM_TOKEN alone.
        const noKey = await cli(['upload', join(root, 'shop', 'graph.json'), '--url', server.url], {
          DEVSTREAM_TOKEN: '',
        });
        assert.equal(noKey.code, 1);
        assert.match(noKey.stderr, /upload failed: 401 /);
        const flag = await cli(
          ['upload', join(root, 'shop', 'graph.json'), '--url', server.url, '--token', env.DEVSTREAM_TOKEN],
          { DEVSTREAM_TOKEN: '' },
        );
        assert.equal(flag.code, 0, flag.stderr);
      } finally {
        await server.close();
        await database.dispose();
      }
    },
  );

  test('upload to a hub served under a path (a proxy at /hub) posts to that path', once, async () => {
    const database = await pglite.open();
    const server = await startServer(database);
    const target = new URL(server.url);
    const seen: string[] = [];
    // A reverse proxy that serves the hub under /hub/ and nothing else.
    const proxy = createHttpServer((req, res) => {
      seen.push(req.url ?? '');
      if (!req.url?.startsWith('/hub/')) {
        res.writeHead(404).end('not here');
        return;
      }
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url.slice(4),
          headers: { ...req.headers, host: target.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
    try {
      const root = await tempDir();
      await writeFile(join(root, 'graph.json'), COMMIT);
      const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/hub`;
      const r = await cli(['upload', join(root, 'graph.json'), '--url', url, '--repo', 'proxied'], {});
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        seen.map((u) => u.split('?')[0]),
        ['/hub/api/v1/graphs'],
      );
      const listed = await rest(server.url, 'GET', '/api/v1/graphs');
      assert.deepEqual(
        listed.body.graphs.map((g: any) => g.repo),
        ['proxied'],
      );
    } finally {
      proxy.close();
      await server.close();
      await database.dispose();
    }
  });
});
