import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ENV_VARS } from '../src/config.js';
import { ERROR_CODES } from '../src/errors.js';
import { tools } from '../src/operations/index.js';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

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

/** The real ky graph DevLens wrote: in ../shared beside the checkout (benchmarks and CI have it), not in a clone. */
const KY = new URL('../../shared/fixtures/graphs/ky/3419113b48e034fdcf8fa6bd3be3da7b3d0d758f.json', import.meta.url);
const noKy = existsSync(KY)
  ? false
  : `the README's example packet is rendered from DevLens's ky graph, and ${KY.pathname} is absent (it lives in ../shared beside the checkout)`;

describe("README.md's packet example is what the service answers", { skip: noKy }, () => {
  let database: TestDb;
  let server: TestServer;
  before(async () => {
    database = await backends[0]!.open();
    server = await startServer(database);
    const up = await rest(server.url, 'POST', '/api/v1/graphs?repo=ky', readFileSync(KY, 'utf8'));
    assert.equal(up.status, 201);
  });
  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  test("resolve_context with the arguments the README names renders the README's packet, line for line", async () => {
    // "A packet (`resolve_context {…}` on ky, …):" followed by the packet in a ```text block.
    const example = /A packet \(`resolve_context (\{[^`]+\})` on ky[^]*?```text\n([^]*?)```/.exec(readme);
    assert.ok(example, 'the README shows a packet after "A packet (`resolve_context {…}` on ky"');
    const args = JSON.parse(example[1]!);
    const answer = await rest(server.url, 'POST', '/api/v1/tools/resolve_context', { ...args, repo: 'ky' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.packet, example[2]!.trimEnd());
  });
});
