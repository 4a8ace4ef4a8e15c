#!/usr/bin/env node
// The devstream-hub command. Runs the compiled build when there is one (Docker image),
// otherwise the TypeScript sources through tsx (a checkout after `npm ci`).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/main.ts', import.meta.url).href);
}
