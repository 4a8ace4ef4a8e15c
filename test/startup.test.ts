import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { sql, type Kysely } from 'kysely';
import { freePort } from '../support/free-port.js';
import { openDb, preparePgliteTemplates } from '../src/db/client.js';
import { LOCK_FILE } from '../src/db/data-dir-lock.js';
import { loadMigrations, migrate, type Migration } from '../src/db/migrate.js';
import { buildTemplate, seedFromTemplate, type Template } from '../src/db/pglite-template.js';
import type { Database } from '../src/db/schema.js';
import { WEB_ROOT } from '../src/http/dashboard.js';
import { postgresBackend, once } from './helpers/backends.js';
import { childEnv, ROOT } from './helpers/service.js';

/**
 * Every row of the catalogs that make up a database's schema (tables, columns, defaults,
 * constraints, indexes, functions, types, operators, triggers, extensions, dependencies, …) as
 * JSON text, OIDs included; only the columns that change by themselves (planner statistics,
 * freeze horizons) are left out.
 */
async function catalog(db: Kysely<Database>): Promise<string[]> {
  const volatile: Record<string, string[]> = {
    pg_class: ['relpages', 'reltuples', 'relallvisible', 'relallfrozen', 'relfrozenxid', 'relminmxid'],
    pg_database: ['datfrozenxid', 'datminmxid'],
    pg_authid: ['rolpassword'],
  };
  const tables = [
    'pg_namespace',
    'pg_class',
    'pg_attribute',
    'pg_attrdef',
    'pg_constraint',
    'pg_index',
    'pg_proc',
    'pg_type',
    'pg_trigger',
    'pg_extension',
    'pg_database',
    'pg_operator',
    'pg_opclass',
    'pg_opfamily',
    'pg_amop',
    'pg_amproc',
    'pg_am',
    'pg_cast',
    'pg_collation',
    'pg_depend',
    'pg_description',
    'pg_rewrite',
    'pg_sequence',
    'pg_inherits',
    'pg_language',
    'pg_authid',
    'pg_ts_config',
    'pg_ts_dict',
    'pg_enum',
    'pg_policy',
    'pg_init_privs',
  ];
  const query = tables
    .map(
      (t) =>
        `select '${t} ' || (to_jsonb(x)${(volatile[t] ?? []).map((c) => ` - '${c}'`).join('')})::text as row from ${t} x`,
    )
    .join(' union all ');
  const { rows } = await sql.raw<{ row: string }>(`${query} order by 1`).execute(db);
  return rows.map((r) => r.row);
}

/** The cluster's identity, made by initdb: every copy of one template has the template's. */
async function systemId(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ id: string }>`select system_identifier::text as id from pg_control_system()`.execute(db);
  return rows[0]!.id;
}

/** The same identity read from a (stopped) cluster's files: the first 8 bytes of global/pg_control. */
function systemIdOfFolder(dataDir: string): string {
  return readFileSync(join(dataDir, 'global', 'pg_control'))
    .readBigUInt64LE(0)
    .toString();
}

describe('fresh PGlite data folders start from a template', once, () => {
  const dirs: string[] = [];
  const tempDir = async (prefix = 'dsh-startup-') => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  let template: string;
  let templateId: string;
  before(async () => {
    template = (await preparePgliteTemplates(await loadMigrations())).initdb; // what `npm ci` leaves (prepare)
    templateId = systemIdOfFolder(template);
  });
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test("a fresh folder is a copy of the template, with the catalogs PGlite's own initdb makes, before and after the migrations", async () => {
    const copied = await tempDir();
    const a = await openDb({ dataDir: copied });
    let copiedBefore: string[];
    let copiedAfter: string[];
    try {
      assert.equal(await systemId(a.kysely), templateId, 'the folder is a copy of the template');
      copiedBefore = await catalog(a.kysely);
      await migrate(a.kysely);
      copiedAfter = await catalog(a.kysely);
    } finally {
      await a.close();
    }

    // The same folder as PGlite makes it by itself (initdb), then opened the same way.
    const initdbd = await tempDir();
    await (await PGlite.create({ dataDir: initdbd, extensions: { vector } })).close();
    const b = await openDb({ dataDir: initdbd });
    try {
      assert.notEqual(await systemId(b.kysely), templateId, 'this one ran initdb');
      assert.deepEqual(copiedBefore, await catalog(b.kysely));
      await migrate(b.kysely);
      assert.deepEqual(copiedAfter, await catalog(b.kysely));
    } finally {
      await b.close();
    }
    assert.ok(
      copiedAfter.some((row) => row.startsWith('pg_class ') && row.includes('"relname": "semantic_memory"')),
      'the listing holds the schema',
    );
  });

  test('a folder holding only a stale lock file, or what a copy cut short left, is still fresh', async () => {
    const locked = await tempDir();
    await writeFile(
      join(locked, LOCK_FILE),
      JSON.stringify({ pid: 2 ** 22 + 1, startTime: '1', hostname: 'gone', startedAt: '2020-01-01T00:00:00Z' }),
    );
    const halfCopied = await tempDir();
    for (const entry of (await readdir(template)).filter((e) => e !== 'PG_VERSION').slice(0, 6)) {
      await cp(join(template, entry), join(halfCopied, entry), { recursive: true });
    }
    await writeFile(join(halfCopied, 'global', 'pg_control'), 'half-written');
    for (const dataDir of [locked, halfCopied]) {
      const db = await openDb({ dataDir });
      try {
        assert.equal(await systemId(db.kysely), templateId, dataDir);
        assert.equal((await migrate(db.kysely)).applied.length, (await loadMigrations()).length);
      } finally {
        await db.close();
      }
    }
  });

  test("a folder holding anything else is left to PGlite's initdb, which keeps those files", async () => {
    const dataDir = await tempDir();
    await writeFile(join(dataDir, 'notes.txt'), 'mine');
    const db = await openDb({ dataDir });
    try {
      assert.notEqual(await systemId(db.kysely), templateId);
    } finally {
      await db.close();
    }
    assert.equal(await readFile(join(dataDir, 'notes.txt'), 'utf8'), 'mine');
  });

  test('a folder migrated by an older version keeps its data and gets only the migrations it lacks, ending where a fresh one does', async () => {
    const all = await loadMigrations();
    const older = all.slice(0, 5);
    const dataDir = await tempDir();
    const first = await openDb({ dataDir });
    try {
      assert.deepEqual(
        (await migrate(first.kysely, older)).applied,
        older.map((m) => m.name),
      );
      await sql`insert into intervention_plans (id, title, expected_outcome) values ('0123456789ab', 'Kept', 'kept')`.execute(
        first.kysely,
      );
    } finally {
      await first.close();
    }
    const reopened = await openDb({ dataDir });
    let upgraded: string[];
    try {
      assert.deepEqual(
        (await migrate(reopened.kysely, all)).applied,
        all.slice(5).map((m) => m.name),
      );
      const kept = await sql<{
        n: number;
      }>`select count(*)::int as n from intervention_plans where title = 'Kept'`.execute(reopened.kysely);
      assert.equal(kept.rows[0]?.n, 1, 'the row written before the upgrade is there');
      upgraded = await catalog(reopened.kysely);
    } finally {
      await reopened.close();
    }
    const fresh = await openDb({ dataDir: await tempDir() });
    try {
      await migrate(fresh.kysely, all);
      const reference = await catalog(fresh.kysely);
      assert.deepEqual(upgraded, reference);
    } finally {
      await fresh.close();
    }
  });

  test("serve's fresh folder is a copy of a migrated template: the catalogs and schema_version rows that running the migrations gives, stamped with the copy's time", async () => {
    const migrations = await loadMigrations();
    const started = new Date();
    const a = await openDb({ dataDir: await tempDir(), premigrated: migrations });
    let copied: string[];
    let copiedRows: Array<{ version: number; name: string; checksum: string; applied_at: Date }>;
    try {
      assert.deepEqual((await migrate(a.kysely, migrations)).applied, [], 'nothing left to apply');
      copied = await catalog(a.kysely);
      copiedRows = await a.kysely.selectFrom('schema_version').selectAll().orderBy('version').execute();
    } finally {
      await a.close();
    }
    const b = await openDb({ dataDir: await tempDir() });
    try {
      assert.equal((await migrate(b.kysely, migrations)).applied.length, migrations.length, 'this one runs them');
      assert.deepEqual(copied, await catalog(b.kysely));
      const ranRows = await b.kysely.selectFrom('schema_version').selectAll().orderBy('version').execute();
      assert.deepEqual(
        copiedRows.map(({ applied_at: _, ...row }) => row),
        ranRows.map(({ applied_at: _, ...row }) => row),
      );
    } finally {
      await b.close();
    }
    for (const row of copiedRows)
      assert.ok(row.applied_at >= started, `${row.name} applied at ${row.applied_at.toISOString()}`);

    // One more migration: a template of its own, holding it.
    const extra: Migration = {
      version: 9998,
      name: '9998_startup_test',
      sql: 'create table startup_test_extra (id int)',
      checksum: 'startup-test-9998',
    };
    const longer = [...migrations, extra];
    const c = await openDb({ dataDir: await tempDir(), premigrated: longer });
    try {
      assert.deepEqual((await migrate(c.kysely, longer)).applied, []);
      const t = await sql<{ t: string | null }>`select to_regclass('startup_test_extra')::text as t`.execute(c.kysely);
      assert.equal(t.rows[0]?.t, 'startup_test_extra');
    } finally {
      await c.close();
      await rm((await preparePgliteTemplates(longer)).migrated, { recursive: true, force: true });
    }
    assert.ok(
      existsSync((await preparePgliteTemplates(migrations)).migrated),
      "the current migrations' template is kept",
    );
  });

  test('a missing template is built once, also when two callers ask at once; without a writable cache the folder is left as it was', async () => {
    const cacheDir = await tempDir('dsh-template-cache-');
    await mkdir(join(cacheDir, 'migrated-0123456789ab-0123456789ab'), { recursive: true }); // an older PGlite's
    await mkdir(join(cacheDir, 'migrated-aaaaaaaaaaaa-0123456789ab'), { recursive: true }); // same PGlite, other migrations
    const template: Template = {
      name: 'initdb-aaaaaaaaaaaa',
      build: async (dataDir) => (await PGlite.create({ dataDir, extensions: { vector } })).close(),
    };
    const [one, two] = await Promise.all([buildTemplate(cacheDir, template), buildTemplate(cacheDir, template)]);
    assert.equal(one, join(cacheDir, template.name));
    assert.equal(two, one);
    assert.deepEqual(
      (await readdir(cacheDir)).sort(),
      [template.name, 'migrated-aaaaaaaaaaaa-0123456789ab'],
      "no half-built folder; the older PGlite's removed",
    );
    assert.ok(existsSync(join(one, 'PG_VERSION')));

    const dataDir = await tempDir();
    assert.equal(await seedFromTemplate(dataDir, cacheDir, template), true);
    assert.equal(await seedFromTemplate(dataDir, cacheDir, template), false, 'a cluster is never overwritten');

    const blocked = join(cacheDir, 'a-file');
    await writeFile(blocked, '');
    const untouched = await tempDir();
    assert.equal(await seedFromTemplate(untouched, join(blocked, 'cache'), template), false);
    assert.deepEqual(await readdir(untouched), []);
  });

  test('PGlite runs with 32MB of shared buffers (its WASM heap holds all of them from the start) and keeps at most 128MB of WAL', async () => {
    const db = await openDb({ dataDir: await tempDir() });
    try {
      const { rows } = await sql<{ shared_buffers: string; max_wal_size: string; min_wal_size: string }>`
        select current_setting('shared_buffers') as shared_buffers, current_setting('max_wal_size') as max_wal_size,
               current_setting('min_wal_size') as min_wal_size`.execute(db.kysely);
      assert.deepEqual(rows[0], { shared_buffers: '32MB', max_wal_size: '128MB', min_wal_size: '32MB' });
    } finally {
      await db.close();
    }
  });
});

/** `node scripts/start.js <args>` in `root` to completion. */
function runStart(
  root: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/start.js', ...args], { cwd: root, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm start', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('is `node scripts/start.js serve`', once, async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node scripts/start.js serve');
  });

  const databases: Array<{
    name: string;
    env: () => Promise<{ env: Record<string, string>; dispose(): Promise<void> }>;
  }> = [
    {
      name: 'PGlite',
      env: async () => {
        const dir = await mkdtemp(join(tmpdir(), 'dsh-startup-serve-'));
        dirs.push(dir);
        return { env: { DATA_DIR: dir }, dispose: async () => {} };
      },
    },
  ];
  if (postgresBackend) {
    databases.push({
      name: 'Postgres',
      env: async () => {
        const t = await postgresBackend!.open({ migrate: false });
        await t.db.close();
        return { env: { DATABASE_URL: t.url! }, dispose: () => t.dispose().catch(() => {}) };
      },
    });
  }
  for (const database of databases) {
    // PGlite in the PGlite pass, Postgres where there is one (child services never read DATABASE_URL from here).
    test(
      `serves src/ as plain JavaScript on ${database.name}: migrated, dashboard and version found, SIGTERM exits 0`,
      database.name === 'PGlite' ? once : {},
      async () => {
        const { env, dispose } = await database.env();
        const port = await freePort();
        const child = spawn(process.execPath, ['scripts/start.js', 'serve'], {
          cwd: ROOT,
          env: childEnv({ ...env, PORT: String(port) }),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (c) => (output += c));
        child.stderr.on('data', (c) => (output += c));
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        const url = `http://127.0.0.1:${port}`;
        try {
          for (let ready = false; !ready;) {
            assert.equal(child.exitCode, null, `serve exited: ${output}`);
            ready = await fetch(`${url}/readyz`).then(
              (r) => r.ok,
              () => false,
            );
            if (!ready) await new Promise((r) => setTimeout(r, 100));
          }
          const readyz = (await (await fetch(`${url}/readyz`)).json()) as { schema_version: number };
          assert.equal(
            readyz.schema_version,
            (await loadMigrations()).at(-1)!.version,
            'the migrations were found and applied',
          );
          const page = await fetch(`${url}/`);
          await page.arrayBuffer();
          assert.equal(
            page.status,
            existsSync(join(WEB_ROOT, 'index.html')) ? 200 : 404,
            'the dashboard is looked for in web/dist',
          );
          const created = await fetch(`${url}/api/v1/tasks`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              title: 'Started',
              description: 'd',
              task_type: 'coding',
              priority: 5,
              phase_name: 'P',
              project: 'Start',
            }),
          });
          assert.equal(created.status, 201, await created.text());
        } finally {
          child.kill('SIGTERM');
          assert.equal(await exited, 0, output);
          await dispose();
        }
        assert.doesNotMatch(output, /through tsx/, 'the transpiled copy ran');
        const version = await runStart(ROOT, ['--version']);
        const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
        assert.equal(version.stdout.trim(), pkg.version, version.stderr);
      },
    );
  }

  test('an edit to src/ is what the next start runs', once, async () => {
    // A copy of the checkout (sharing node_modules), so that its src/ can be edited.
    const root = await mkdtemp(join(tmpdir(), 'dsh-startup-checkout-'));
    dirs.push(root);
    for (const entry of ['src', 'scripts', 'migrations', 'package.json', 'tsconfig.json'])
      await cp(join(ROOT, entry), join(root, entry), { recursive: true });
    await symlink(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    const first = await runStart(root, ['help']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /help {6}Show this text\n/);
    const main = join(root, 'src', 'main.ts');
    await writeFile(
      main,
      (await readFile(main, 'utf8')).replace('  help      Show this text', '  help      Show this text (edited)'),
    );
    const second = await runStart(root, ['help']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /help {6}Show this text \(edited\)\n/);
    const pristine = await runStart(ROOT, ['help']);
    assert.match(pristine.stdout, /help {6}Show this text\n/, "the checkout's own copy is its own");
  });
});
