#!/usr/bin/env node
/**
 * `npm test`: `node --test` over plain-JavaScript copies of the test files (scripts/transpile.js:
 * src/, test/ and support/, each file transpiled again only when its text changed), not through
 * tsx. Arguments: the .ts test files (as the shell expands test/*.test.ts) and any options of
 * `node --test` (--test-name-pattern=…, --test-concurrency=…). Test names, fixtures and stack
 * traces are the .ts files' (inline source maps); one file can still run through tsx:
 * `node --import tsx --test test/x.test.ts`.
 *
 * Why: the suite is CPU-bound on a 2-CPU machine, and on Node 20 tsx's loader thread costs every
 * test process 1-2 s of CPU to load the service's modules (src/app.ts: 2.4-2.9 s through tsx,
 * 1.0-1.2 s as JavaScript). If the copy cannot be written (a read-only checkout), the files run
 * through tsx.
 */
import { spawn } from 'node:child_process';
import { join, relative, resolve } from 'node:path';
import { outForDisplay, output, ROOT, transpile } from './transpile.js';

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith('-'));
const options = args.filter((a) => a.startsWith('-'));
if (files.length === 0 || files.some((f) => !f.endsWith('.ts'))) {
  console.error('usage: node scripts/test.js [node --test options] <test files (.ts)>…');
  process.exit(2);
}

const FOLDERS = ['src', 'test', 'support'];
const outside = files.filter((f) => !FOLDERS.some((folder) => relative(join(ROOT, folder), resolve(f)).match(/^[^.]/)));
if (outside.length > 0) {
  console.error(`npm test: not under ${FOLDERS.join('/, ')}/: ${outside.join(', ')}`);
  process.exit(2);
}

let command;
try {
  await transpile(FOLDERS);
  command = ['--enable-source-maps', '--test', ...options, ...files.map((f) => output(relative(ROOT, resolve(f))))];
} catch (error) {
  if (error && typeof error === 'object' && 'errors' in error) throw error; // a syntax error: esbuild's report
  console.warn(`npm test: running the files through tsx (could not write ${outForDisplay()}: ${error.message})`);
  command = ['--import', 'tsx', '--test', ...options, ...files];
}

const child = spawn(process.execPath, command, { stdio: 'inherit' });
// Ctrl-C reaches the runner itself (the terminal's process group); a SIGTERM to this process is passed on.
process.on('SIGTERM', () => child.kill('SIGTERM'));
process.on('SIGINT', () => {});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
