import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ENV_VARS } from '../src/config.js';
import { ERROR_CODES } from '../src/errors.js';
import { tools } from '../src/operations/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README.md stays true', () => {
  test('documents every error code with its HTTP status', () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      assert.ok(row, `error code ${code} is in the README's table`);
      assert.match(row!, new RegExp(`\\| ${status}`), `${code} is documented as ${status}`);
    }
  });

  test('documents every environment variable', () => {
    for (const name of ENV_VARS) assert.ok(readme.includes(`| \`${name}\` |`), `${name} is in the configuration table`);
  });

  test('documents every tool', () => {
    for (const op of tools) assert.ok(readme.includes(`| \`${op.name}\` |`), `${op.name} is in the tools table`);
  });

  test('shows the two set-up commands', () => {
    assert.ok(readme.includes('npm ci && npm start'));
    assert.ok(readme.includes('npm test'));
  });
});
