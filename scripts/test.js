#!/usr/bin/env node
/**
 * `npm test`: `node --test` over plain-JavaScript copies of the test files (scripts/transpile.js:
 * src/, test/ and support/, each file transpiled again only when its text changed), not through
 * tsx. Arguments: the .ts test files (as the shell expands test/*.test.ts), and any other argument
 * goes to `node --test` as it stands, in order (`--test-name-pattern=…` or `--test-name-pattern …`).
 * Stack traces point into the .ts files (inline source maps); a failure of a file as a whole is
 * named by its copy's path. A file that does not parse fails the tests that import it, with
 * esbuild's message, as under tsx. One file can also be run through tsx: `node --import tsx --test
 * test/x.test.ts`; so can coverage (`--experimental-test-coverage` leaves out node_modules, where the
 * copies are).
 *
 * Why: the suite is CPU-bound on a 2-CPU machine, and on Node 20 tsx's loader thread costs every
 * test process 1-2 s of CPU to load the service's modules (src/app.ts: 2.4-2.9 s through tsx,
 * 1.0-1.2 s as JavaScript). If the copy cannot be written (node_modules read-only), the files run
 * through tsx, and so do the services they start (DEVSTREAM_HUB_TSX=1, see start.js).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { outForDisplay, output, ROOT, transpile } from './transpile.js';

const FOLDERS = ['src', 'test', 'support'];
const args = process.argv.slice(2);
const isFile = (a) => !a.startsWith('-') && a.endsWith('.ts');
const files = args.filter(isFile);
if (files.length === 0) {
  console.error('usage: node scripts/test.js [node --test options] <test files (.ts)>…');
  process.exit(2);
}
const misplaced = files.filter((f) => {
  const path = relative(ROOT, resolve(f));
  return (
    !existsSync(f) ||
    !FOLDERS.some((folder) => path.startsWith(folder + sep)) ||
    path.startsWith(join('test', 'fixtures') + sep)
  );
});
if (misplaced.length > 0) {
  console.error(`npm test: no such test file under ${FOLDERS.join('/, ')}/: ${misplaced.join(', ')}`);
  process.exit(2);
}

let command;
let env = process.env;
try {
  const failed = await transpile(FOLDERS);
  for (const { file, message } of failed) console.warn(`npm test: ${file} does not transpile: ${message}`);
  command = [
    '--enable-source-maps',
    '--test',
    ...args.map((a) => (isFile(a) ? output(relative(ROOT, resolve(a))) : a)),
  ];
} catch (error) {
  console.warn(`npm test: running the files through tsx (could not write ${outForDisplay()}: ${error.message})`);
  command = ['--import', 'tsx', '--test', ...args];
  env = { ...process.env, DEVSTREAM_HUB_TSX: '1' };
}

const child = spawn(process.execPath, command, { stdio: 'inherit', env });
// A signal to this process alone (a CI runner cancelling) is passed on; a terminal's Ctrl-C reaches
// the runner too (the same process group), and a second SIGINT only stops it sooner.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
