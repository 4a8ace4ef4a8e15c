import { readFileSync } from 'node:fs';

/** This package's version, from package.json (two levels up from src/ or dist/). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
