import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { backends, type TestDb } from './helpers/backends.js';
import {
  accessibilityViolations,
  ARTIFACTS,
  dashboardSkip,
  launchChromium,
  openPage,
  closeDashboard,
} from './helpers/browser.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

// Issue 18: a node page for a name no node has said only the error; scores showed as unrounded floats.

const FORMAT = 'src/util/strings.ts::formatMessage';
const PAD = 'src/util/strings.ts::pad';

const graph = {
  commitHash: 'dashnode1',
  analyzedAt: '2025-01-01T00:00:00.000Z',
  nodes: [
    // Scores as the analyzer writes them: sums of floats.
    {
      id: FORMAT,
      name: 'formatMessage',
      type: 'FUNCTION',
      filePath: 'src/util/strings.ts',
      startLine: 1,
      endLine: 3,
      score: 7.300000000000001,
      rawCode: 'function formatMessage(text) { return pad(text, 2); }',
    },
    {
      id: PAD,
      name: 'pad',
      type: 'FUNCTION',
      filePath: 'src/util/strings.ts',
      startLine: 5,
      endLine: 7,
      score: 6.325019119648292,
      rawCode: 'function pad(text, n) { return text.padStart(n); }',
    },
  ],
  edges: [{ from: FORMAT, to: PAD, type: 'CALLS' }],
};

// PGlite when npm test runs without a database; Postgres in the DATABASE_URL pass (as test/dashboard.test.ts).
const backend = backends.at(-1)!;

describe(`dashboard: a node page in headless Chromium (${backend.name})`, { skip: dashboardSkip }, () => {
  let database: TestDb;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let foreign: string[];
  let graphId: string;
  const nodePage = (node: string) => `${server.url}/#/graphs/node/${graphId}/${encodeURIComponent(node)}`;

  before(async () => {
    database = await backend.open();
    // AUTH=off on loopback: the page asks for no key.
    server = await startServer(database);
    const uploaded = await rest(server.url, 'POST', '/api/v1/graphs?repo=strings', graph);
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    graphId = uploaded.body.graphId;
    browser = await launchChromium();
    ({ page, foreign } = await openPage(browser, server.url));
    page.setDefaultTimeout(10_000);
  });
  after(() => closeDashboard(browser, server, database));

  test('a score shows rounded to two decimals, trimmed; the exact value on hover', async () => {
    await page.goto(nodePage(FORMAT));
    await page.getByRole('heading', { name: 'formatMessage', level: 1 }).waitFor();
    const meta = page.locator('.node > .meta');
    assert.match(await meta.innerText(), /· score 7\.3 ·/);
    assert.doesNotMatch(await meta.innerText(), /7\.30000/);
    assert.equal(await meta.locator('.score').getAttribute('title'), '7.300000000000001');

    await page.getByRole('list', { name: 'Callees (1)' }).getByRole('link', { name: 'pad' }).click();
    await page.getByRole('heading', { name: 'pad', level: 1 }).waitFor();
    assert.match(await page.locator('.node > .meta').innerText(), /· score 6\.33 ·/);
  });

  test('a name no node has: "not found, did you mean" with the suggestions as links, one of which opens', async () => {
    await page.goto(nodePage('formatMesage'));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /“formatMesage” not found, did you mean/);
    const suggestions = page.getByRole('list', { name: 'Suggestions' });
    const link = suggestions.getByRole('link', { name: FORMAT, exact: true });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), `#/graphs/node/${graphId}/${encodeURIComponent(FORMAT)}`);
    assert.equal(
      await page.getByRole('heading', { name: 'formatMessage', level: 1 }).count(),
      0,
      'no node is shown in its place',
    );
    await page.screenshot({ path: `${ARTIFACTS}node-not-found.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'node not found: WCAG 2.1 AA (axe-core)');

    await link.click();
    await page.getByRole('heading', { name: 'formatMessage', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).hash, `#/graphs/node/${graphId}/${encodeURIComponent(FORMAT)}`);

    // Nothing close: not found, no list, and the search for the text is offered.
    await page.goto(nodePage('zzzqqq'));
    await page
      .getByRole('alert')
      .filter({ hasText: /^“zzzqqq” not found\.$/ })
      .waitFor();
    assert.equal(await page.getByRole('list', { name: 'Suggestions' }).count(), 0);
    assert.equal(
      await page.getByRole('link', { name: 'Search the repository for “zzzqqq”' }).getAttribute('href'),
      `#/graphs/repo/${graphId}/zzzqqq`,
    );

    // An exact name still opens its node.
    await page.goto(nodePage('PAD'));
    await page.getByRole('heading', { name: 'pad', level: 1 }).waitFor();
    assert.deepEqual(foreign, [], 'no request left the service');
  });
});
