/**
 * The GitHub Actions recipe of docs/code-graphs.md ("In CI"), run as written: its
 * checkouts simulated (a small git repository to analyze; a copy of this working tree, as the team's
 * copy of this project would be checked out), its `run:` lines run by bash in the job's folders with
 * the step's environment, against a listening server that requires an API key.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { backends, once } from './helpers/backends.js';
import { createKey } from './helpers/keys.js';
import { rest, startServer } from './helpers/server.js';
import { childEnv, ROOT } from './helpers/service.js';

const run = promisify(execFile);
const ADMIN_TOKEN = 'ci-recipe-admin-token-0123456789abcdef';

type Yaml = string | Yaml[] | { [key: string]: Yaml };

/** `{ a: b, c: d }` (flat, as the recipe writes short maps). */
function flowMap(text: string): Record<string, string> {
  const inner = text.trim().replace(/^\{|\}$/g, '');
  return Object.fromEntries(
    inner
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const colon = part.indexOf(':');
        return [part.slice(0, colon).trim(), part.slice(colon + 1).trim()];
      }),
  );
}

/**
 * The YAML the recipe uses: block maps and lists by indentation, `key: value`, `# comments`, and
 * flat flow maps. Enough to read the recipe's structure without a YAML dependency.
 */
function parseYaml(text: string): Yaml {
  const lines = text
    .split('\n')
    .map((raw) => raw.replace(/\s+#.*$/, '').replace(/^\s*#.*$/, ''))
    .filter((line) => line.trim() !== '')
    .map((line) => ({ indent: line.length - line.trimStart().length, text: line.trim() }));
  let i = 0;
  const scalar = (value: string): Yaml => (value.startsWith('{') ? flowMap(value) : value.replace(/^"(.*)"$/, '$1'));
  const block = (indent: number): Yaml => {
    if (lines[i]!.text.startsWith('- ')) {
      const list: Yaml[] = [];
      while (i < lines.length && lines[i]!.indent === indent && lines[i]!.text.startsWith('- ')) {
        // A list item: its first line's text after "- " is at indent + 2, like the lines after it.
        lines[i] = { indent: indent + 2, text: lines[i]!.text.slice(2) };
        list.push(block(indent + 2));
      }
      return list;
    }
    const map: Record<string, Yaml> = {};
    while (i < lines.length && lines[i]!.indent === indent && !lines[i]!.text.startsWith('- ')) {
      const { text: line } = lines[i++]!;
      const colon = line.indexOf(':');
      const key = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      map[key] =
        value !== '' ? scalar(value) : i < lines.length && lines[i]!.indent > indent ? block(lines[i]!.indent) : '';
    }
    return map;
  };
  return block(lines[0]!.indent);
}

/** The recipe's steps, from the ```yaml block after "**In CI**". */
async function recipeSteps(): Promise<Array<Record<string, any>>> {
  const page = await readFile(join(ROOT, 'docs', 'code-graphs.md'), 'utf8');
  const at = page.indexOf('**In CI**');
  assert.ok(at >= 0, 'docs/code-graphs.md has its "In CI" recipe');
  const yaml = /```yaml\n([\s\S]*?)```/.exec(page.slice(at))?.[1];
  assert.ok(yaml, 'the recipe is a yaml block');
  const workflow = parseYaml(yaml) as any;
  const jobs = Object.values(workflow.jobs) as any[];
  assert.equal(jobs.length, 1);
  return jobs[0].steps;
}

/** `bash -e -c <line>` as GitHub Actions runs a `run:` line on Linux; resolves with its exit code and output. */
function bash(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** `${{ secrets.NAME }}` and `${{ vars.NAME }}` from `secrets`. */
const substitute = (value: string, secrets: Record<string, string>) =>
  value.replace(/\$\{\{\s*(?:secrets|vars)\.(\w+)\s*\}\}/g, (_, name: string) => {
    assert.ok(name in secrets, `the test provides ${name}`);
    return secrets[name]!;
  });

/** The repository the job analyzes: TypeScript and Python, in git with one commit. */
async function writeProject(dir: string): Promise<string> {
  const files: Record<string, string> = {
    'package.json': '{ "name": "shop", "private": true }\n',
    'src/cart.ts':
      '/** Adds up the prices of a cart. */\nexport function cartTotal(prices: number[]): number {\n  return prices.reduce((a, b) => a + b, 0);\n}\n',
    'tools/report.py': 'def monthly_report(rows):\n    """Sums the rows of a month."""\n    return sum(rows)\n',
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const git = (...args: string[]) =>
    run('git', [
      '-C',
      dir,
      '-c',
      'user.name=CI',
      '-c',
      'user.email=ci@example.com',
      '-c',
      'commit.gpgsign=false',
      ...args,
    ]);
  await git('init', '-q');
  await git('add', '.');
  await git('commit', '-q', '-m', 'shop');
  return (await git('rev-parse', 'HEAD')).stdout.trim();
}

/** This working tree as a checkout has it: the files git lists (tracked, and new ones not ignored). */
async function copyWorkingTree(to: string): Promise<void> {
  const { stdout } = await run('git', ['-C', ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter(Boolean)) {
    // git lists a deleted file until the deletion is staged.
    if (!(await stat(join(ROOT, file)).catch(() => null))?.isFile()) continue;
    await mkdir(dirname(join(to, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(to, file));
  }
}

/**
 * Never run: `npx devstream-hub` outside this checkout asks the npm registry for a package this
 * project does not publish, and would run whatever someone published under that name.
 */
function assertNoNpx(line: string): void {
  assert.doesNotMatch(line, /\bnpx\b/, 'the recipe runs no npx');
}

describe("docs/code-graphs.md's CI recipe", once, () => {
  let workspace: string;
  let steps: Array<Record<string, any>>;
  let analyzeStep: Record<string, any>;
  let head: string;

  before(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'dsh-ci-'));
    steps = await recipeSteps();
    const analyzeAt = steps.findIndex((s) => typeof s.run === 'string' && / analyze /.test(s.run));
    assert.ok(analyzeAt >= 0, 'a step runs analyze');
    analyzeStep = steps[analyzeAt]!;
    // Every step before it, as the runner would take them.
    for (const step of steps.slice(0, analyzeAt)) {
      const uses = typeof step.uses === 'string' ? step.uses : '';
      if (uses.startsWith('actions/checkout@')) {
        const path: string = step.with?.path ?? '.';
        if (step.with?.repository) {
          // The team's copy of this project, pinned: a full commit SHA, into a folder of its own.
          assert.match(step.with.ref ?? '', /^[0-9a-f]{40}$/, 'the analyzer is checked out at a full commit SHA');
          assert.notEqual(path, '.', 'beside the analyzed repository, not over it');
          assert.equal(step.with['persist-credentials'], 'false', 'no token left in its git config');
          await copyWorkingTree(join(workspace, path));
        } else {
          head = await writeProject(join(workspace, path));
        }
      } else if (uses.startsWith('actions/setup-node@')) {
        assert.ok(Number(step.with?.['node-version']) >= 20, 'a Node the project supports');
      } else if (typeof step.run === 'string') {
        assertNoNpx(step.run);
        let line: string = step.run;
        // From npm's cache: the test needs no registry (the recipe's flags stay as written).
        if (/^npm ci\b/.test(line)) line += ' --prefer-offline --no-audit --no-fund';
        const result = await bash(line, join(workspace, step['working-directory'] ?? '.'), childEnv({}));
        assert.equal(result.code, 0, `${line}\n${result.output}`);
      } else {
        assert.fail(`a step the test does not know: ${JSON.stringify(step)}`);
      }
    }
    assert.ok(head, 'the recipe checks out the repository it analyzes');
  });
  after(async () => {
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  test('no npx (this project is not on npm), and the key stays out of the command line', () => {
    for (const step of steps) {
      if (typeof step.run !== 'string') continue;
      assertNoNpx(step.run);
      assert.doesNotMatch(step.run, /--token/);
      if (/^npm ci\b/.test(step.run)) assert.match(step.run, /--ignore-scripts/, 'no install script runs in the job');
    }
    assert.match(
      analyzeStep.env?.DEVSTREAM_TOKEN ?? '',
      /secrets\./,
      'the key comes from a secret, through the environment',
    );
  });

  for (const backend of backends) {
    test(`the analyze step uploads the graph with the key from the environment (${backend.name})`, async () => {
      const database = await backend.open();
      const server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
      try {
        const token = await createKey(server.url, ADMIN_TOKEN, 'ci-analyzer', ['read', 'write']);
        const secrets = { DEVSTREAM_URL: server.url, DEVSTREAM_TOKEN: token };
        assertNoNpx(analyzeStep.run);
        const env = Object.fromEntries(
          Object.entries(analyzeStep.env ?? {}).map(([k, v]) => [k, substitute(String(v), secrets)]),
        );
        const result = await bash(
          analyzeStep.run,
          join(workspace, analyzeStep['working-directory'] ?? '.'),
          childEnv({ CI: 'true', GITHUB_REPOSITORY: 'acme/shop', GITHUB_REF_NAME: 'main', ...env }),
        );
        assert.equal(result.code, 0, result.output);
        assert.ok(!result.output.includes(secrets.DEVSTREAM_TOKEN), 'the key is not printed');

        const auth = { authorization: `Bearer ${secrets.DEVSTREAM_TOKEN}` };
        const graphs = await rest(server.url, 'GET', '/api/v1/graphs', undefined, auth);
        assert.equal(graphs.status, 200, JSON.stringify(graphs.body));
        assert.deepEqual(
          graphs.body.graphs.map((g: any) => [g.repo, g.latestCommit, g.commits]),
          [['acme/shop', head, 1]],
          'the graph of the checked-out commit arrived under the repository name',
        );
        /** The node id of the first symbol find_symbols finds for `query` in acme/shop. */
        const firstFound = async (query: string) => {
          const found = await rest(
            server.url,
            'POST',
            '/api/v1/tools/find_symbols',
            { query, repo: 'acme/shop' },
            auth,
          );
          assert.equal(found.status, 200, JSON.stringify(found.body));
          return found.body.symbols[0]?.nodeId;
        };
        assert.equal(await firstFound('prices of a cart'), 'src/cart.ts::cartTotal');
        assert.equal(
          await firstFound('monthly_report'),
          'tools/report.py::monthly_report',
          'Python too: the tree-sitter grammar works without install scripts',
        );
      } finally {
        await server.close();
        await database.dispose();
      }
    });
  }
});
