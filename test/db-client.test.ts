import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

const databaseUrl = process.env.DATABASE_URL;

// Kysely ends its pg pool only once one of its own queries has taken it: a process that used only
// runPrepared (bench/research/time2.ts) printed its figures, closed the database and never exited.
test(
  'close() ends the Postgres pool even when only runPrepared used it: the process exits',
  { skip: databaseUrl ? false : 'no DATABASE_URL' },
  async () => {
    const script = `
    import { CompiledQuery } from 'kysely';
    import { openDb, runPrepared } from './src/db/client.ts';
    const db = await openDb({ databaseUrl: process.env.DATABASE_URL });
    const rows = await runPrepared(db.kysely, CompiledQuery.raw('select 1 as x'));
    await db.close();
    console.log(JSON.stringify(rows));
  `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('..', import.meta.url),
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const hung = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(hung);
    assert.equal(out.trim(), '[{"x":1}]');
    assert.equal(code, 0, 'the process exited by itself after close()');
  },
);
