#!/usr/bin/env node
// The devstream-hub command. Runs the compiled build when there is one (Docker image),
// otherwise the TypeScript sources as `npm start` does (scripts/start.js: transpiled once per
// change, without tsx's loader thread; a checkout after `npm ci`).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  await import(new URL('../scripts/start.js', import.meta.url).href);
}
