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
  signIn,
  closeDashboard,
} from './helpers/browser.js';
import { WREN_COMMIT, wren, wrenText } from './helpers/graph-fixture.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

const ADMIN_TOKEN = 'dashboard-graphs-admin-token-0123456789';
const COMBINE_HEADERS = 'source/utils/combine.ts::combineHeaders';
const HEADER_SETS = 'source/utils/combine.ts::combineHeaderSets';

// PGlite when npm test runs without a database; Postgres in the DATABASE_URL pass (as test/dashboard.test.ts).
const backend = backends.at(-1)!;

describe(`dashboard: code graphs in headless Chromium (${backend.name})`, { skip: dashboardSkip }, () => {
  let database: TestDb;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let foreign: string[];
  let key: string;
  let graphId: string;
  /** Paths of everything the page loaded, to see when the graph library's chunk came. */
  const loaded: string[] = [];
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  /** The neighbourhood graph's container, once cytoscape has drawn into it. */
  const drawnGraph = async () => {
    const canvas = page.locator('.hood-canvas[data-node-count]');
    await canvas.waitFor();
    return canvas;
  };

  before(async () => {
    database = await backend.open();
    server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
    const created = await rest(server.url, 'POST', '/api/v1/keys', { name: 'graphs-reader', scopes: ['read'] }, admin);
    assert.equal(created.status, 201);
    key = created.body.token;
    // The wren fixture, uploaded as the analyzer does.
    const uploaded = await rest(server.url, 'POST', '/api/v1/graphs?repo=wren', wrenText, admin);
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    graphId = uploaded.body.graphId;

    browser = await launchChromium();
    ({ page, foreign } = await openPage(browser, server.url));
    // A missing element fails the test in 10 s rather than 30: waits are for behaviour, not timing.
    page.setDefaultTimeout(10_000);
    page.on('request', (request) => loaded.push(new URL(request.url()).pathname));
  });
  after(() => closeDashboard(browser, server, database));

  test('a read-only key signs in; the repo list shows wren with its commit, freshness and counts', async () => {
    await page.goto(server.url);
    await signIn(page, key);
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();

    await page.getByRole('link', { name: 'Code graphs' }).click();
    await page.getByRole('heading', { name: 'Code graphs', level: 1 }).waitFor();
    const row = page.getByRole('row', { name: /^wren / });
    await row.waitFor();
    const cells = await row.getByRole('cell').allInnerTexts();
    assert.deepEqual(cells, [WREN_COMMIT.slice(0, 10), '1', cells[2], cells[3], '64', '75']);
    // Relative to this machine's clock, so any relative time will do; the exact one is the cell's datetime.
    assert.match(
      cells[2]!,
      /^(\d+ \w+ ago|in \d+ \w+|now|yesterday|tomorrow|(last|next) \w+)$/,
      'analyzed: a relative time',
    );
    assert.match(cells[3]!, /^(now|\d+ minutes? ago)$/, 'uploaded minutes ago at most');
    assert.equal(await row.locator('.commit').getAttribute('title'), WREN_COMMIT);
    assert.equal(await row.locator('time').first().getAttribute('datetime'), new Date(wren.analyzedAt).toISOString());
    await page.screenshot({ path: `${ARTIFACTS}graphs-list.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'graphs-list: WCAG 2.1 AA (axe-core)');
  });

  test('symbol search in the repo lists ranked symbols as links, exact match first', async () => {
    await page.getByRole('link', { name: 'wren', exact: true }).click();
    await page.getByRole('heading', { name: 'wren', level: 1 }).waitFor();
    assert.match(
      await page.locator('.graphs > .meta').innerText(),
      /commit 25344fbd02 · analyzed .+ · 64 nodes, 75 edges · 1 commit kept/,
    );
    await page.getByLabel('Symbol', { exact: true }).fill('combineHeaders');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText(/\d+ symbols? for “combineHeaders”/).waitFor();
    const results = page.locator('ol.symbols > li');
    assert.match(await results.first().innerText(), /^combineHeaders function source\/utils\/combine\.ts:28 exact$/);
    await page.locator('ol.symbols').getByRole('link', { name: 'combineHeaderSets' }).waitFor();
    assert.equal(new URL(page.url()).hash, `#/graphs/repo/${graphId}/combineHeaders`, 'the query is in the route');
  });

  test('a context packet for a question renders with its token count and its nodes as links', async () => {
    const task = 'how are headers combined';
    await page.getByLabel('Question', { exact: true }).fill(task);
    await page.getByRole('button', { name: 'Resolve' }).click();
    const cost = page.getByText(/≈ \d+ tokens of a \d+-token budget/);
    await cost.waitFor();
    const expected = await rest(
      server.url,
      'POST',
      '/api/v1/context',
      { task, repo: 'wren' },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(expected.status, 200);
    assert.match(
      await cost.innerText(),
      new RegExp(
        `≈ ${expected.body.approxTokens} tokens of a ${expected.body.budget}-token budget · intent exploratory · commit 25344fbd02`,
      ),
    );
    const text = await page.getByLabel('Packet text').innerText();
    assert.equal(text, expected.body.packet);
    // combineHeaderSets calls combineHeaders: either answers "how are headers combined" (issue 21's ranking lifts the caller).
    assert.match(text, /^ANSWER combineHeader(s|Sets) \(symbol\) — source\/utils\/combine\.ts:\d+$/m);
    await page.locator('ul.idmap').getByRole('link', { name: COMBINE_HEADERS, exact: true }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}graphs.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'graphs: WCAG 2.1 AA (axe-core)');
    assert.equal(
      loaded.some((path) => path.includes('cytoscape')),
      false,
      'the graph library is not loaded before a node page needs it',
    );
  });

  test('a node page: summaries, code, callers and callees, the neighbourhood drawn and listed, impact', async () => {
    await page.locator('ol.symbols').getByRole('link', { name: 'combineHeaders', exact: true }).click();
    await page.getByRole('heading', { name: 'combineHeaders', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).hash, `#/graphs/node/${graphId}/${encodeURIComponent(COMBINE_HEADERS)}`);
    const summaries = page.getByRole('region', { name: 'Summaries' });
    assert.match(
      await summaries.innerText(),
      /No summaries in this graph \(structure only\)/,
      'the wren fixture has none',
    );
    assert.match(
      await page.getByRole('region', { name: 'Code' }).innerText(),
      /const result = new globalThis\.Headers\(first\)/,
    );

    // Two callers and the test file that imports it.
    const callers = page.getByRole('list', { name: 'Callers (3)' });
    assert.deepEqual((await callers.getByRole('link').allInnerTexts()).sort(), [
      'Client.constructor',
      'combineHeaderSets',
      'headers.test.ts',
    ]);
    assert.match(await page.getByRole('region', { name: 'Callees (0)' }).innerText(), /None\./);

    const graph = await drawnGraph();
    assert.equal(await graph.getAttribute('data-node-count'), '4', 'the node and its three callers');
    assert.ok((await graph.locator('canvas').count()) > 0, 'cytoscape drew on a canvas');
    assert.ok(
      loaded.some((path) => /\/assets\/cytoscape[^/]*\.js$/.test(path)),
      'the graph library came as its own chunk',
    );

    const impact = page.getByRole('region', { name: 'Impact' });
    await impact.getByText('4 dependents within 2 hops').waitFor();
    assert.deepEqual((await impact.getByRole('region', { name: 'Hop 1' }).getByRole('link').allInnerTexts()).sort(), [
      'Client.constructor',
      'combineHeaderSets',
      'headers.test.ts',
    ]);
    assert.deepEqual(await impact.getByRole('region', { name: 'Hop 2' }).getByRole('link').allInnerTexts(), [
      'mergeDeepInternal',
    ]);
  });

  test('following a caller lands on its page, with both sides of its neighbourhood; impact downstream', async () => {
    await page.getByRole('list', { name: 'Callers (3)' }).getByRole('link', { name: 'combineHeaderSets' }).click();
    const heading = page.getByRole('heading', { name: 'combineHeaderSets', level: 1 });
    await heading.waitFor();
    assert.equal(new URL(page.url()).hash, `#/graphs/node/${graphId}/${encodeURIComponent(HEADER_SETS)}`);
    assert.equal(
      await heading.evaluate((h) => h === h.ownerDocument.activeElement),
      true,
      'focus moves to the new node',
    );
    assert.deepEqual(await page.getByRole('list', { name: 'Callers (1)' }).getByRole('link').allInnerTexts(), [
      'mergeDeepInternal',
    ]);
    const callees = page.getByRole('list', { name: 'Callees (3)' });
    assert.deepEqual((await callees.getByRole('link').allInnerTexts()).sort(), [
      'combineHeaders',
      'headerEntries',
      'isRecord',
    ]);

    const graph = await drawnGraph();
    assert.equal(await graph.getAttribute('data-node-count'), '5', 'the node, one caller, three callees');
    await page
      .getByRole('region', { name: 'Impact' })
      .getByText(/^\d+ dependents? within 2 hops$/)
      .waitFor();
    await page.screenshot({ path: `${ARTIFACTS}node.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'node: WCAG 2.1 AA (axe-core)');

    await page.getByLabel('Direction').selectOption('downstream');
    const impact = page.getByRole('region', { name: 'Impact' });
    await impact.getByText(/^\d+ nodes? within 2 hops$/).waitFor();
    assert.deepEqual((await impact.getByRole('region', { name: 'Hop 1' }).getByRole('link').allInnerTexts()).sort(), [
      'combineHeaders',
      'headerEntries',
      'isRecord',
    ]);
  });

  test('clicking a node in the drawn graph opens it', async () => {
    const graph = await drawnGraph();
    // Where cytoscape drew combineHeaders, read from the instance it registers on its container.
    const at = await graph.evaluate((box, id) => {
      const cy = (
        box as unknown as {
          _cyreg: { cy: { getElementById(id: string): { renderedPosition(): { x: number; y: number } } } };
        }
      )._cyreg.cy;
      return cy.getElementById(id).renderedPosition();
    }, COMBINE_HEADERS);
    const bounds = (await graph.boundingBox())!;
    await page.mouse.click(bounds.x + at.x, bounds.y + at.y);
    await page.getByRole('heading', { name: 'combineHeaders', level: 1 }).waitFor();
    assert.equal(await (await drawnGraph()).getAttribute('data-node-count'), '4');

    await page.goBack();
    await page.getByRole('heading', { name: 'combineHeaderSets', level: 1 }).waitFor();
    assert.deepEqual(foreign, [], 'no request left the service');
  });

  test('at phone width (390×844) no graph page scrolls sideways: the table and code scroll inside themselves, ids wrap, the graph fits', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      // Signed in already, as the sign-in form leaves it (the key in this tab's session storage).
      await phone.addInitScript(`sessionStorage.setItem('devstream-hub.api-key', ${JSON.stringify(key)})`);
      phone.setDefaultTimeout(10_000);
      const away: string[] = [];
      phone.on('request', (request) => !request.url().startsWith(server.url) && away.push(request.url()));
      /** How far the page scrolls sideways (0: not at all). */
      const sideways = async () =>
        (await phone.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      /** The element's box is inside the screen's width. */
      const inside = async (what: string, locator: ReturnType<Page['locator']>) => {
        const box = (await locator.boundingBox())!;
        assert.ok(
          box.x >= 0 && box.x + box.width <= 390,
          `${what} is inside the screen (${box.x}–${box.x + box.width})`,
        );
      };

      await phone.goto(`${server.url}/#/graphs`);
      await phone.getByRole('row', { name: /^wren / }).waitFor();
      assert.ok((await sideways()) <= 0, `repo list: no horizontal scroll (${await sideways()} px)`);
      // The table keeps its columns and scrolls in its own box, which the keyboard can focus and scroll.
      const table = phone.getByRole('region', { name: 'Repositories and the commit each was analyzed at' });
      await inside('the table’s box', table);
      assert.ok(
        await table.evaluate((box) => box.scrollWidth > box.clientWidth),
        'the table is wider than the screen: it scrolls inside its box',
      );
      await phone.screenshot({ path: `${ARTIFACTS}graphs-list-phone.png`, fullPage: true });
      await table.focus();
      await phone.keyboard.press('ArrowRight');
      await phone.waitForFunction((box) => box!.scrollLeft > 0, await table.elementHandle());
      assert.deepEqual(await accessibilityViolations(phone), [], 'repo list at phone width: WCAG 2.1 AA (axe-core)');

      await phone.goto(`${server.url}/#/graphs/repo/${graphId}/combineHeaders`);
      await phone.getByText(/\d+ symbols? for “combineHeaders”/).waitFor();
      await phone.getByLabel('Question', { exact: true }).fill('how are headers combined');
      await phone.getByRole('button', { name: 'Resolve' }).click();
      await phone.locator('ul.idmap').getByRole('link', { name: COMBINE_HEADERS, exact: true }).waitFor();
      assert.ok(
        (await sideways()) <= 0,
        `repository with symbols and a packet: no horizontal scroll (${await sideways()} px)`,
      );
      await inside('the packet', phone.getByLabel('Packet text'));
      await phone.screenshot({ path: `${ARTIFACTS}graphs-phone.png`, fullPage: true });
      assert.deepEqual(await accessibilityViolations(phone), [], 'repository at phone width: WCAG 2.1 AA (axe-core)');

      await phone.goto(`${server.url}/#/graphs/node/${graphId}/${encodeURIComponent(HEADER_SETS)}`);
      const graph = phone.locator('.hood-canvas[data-node-count]');
      await graph.waitFor();
      await phone
        .getByRole('region', { name: 'Impact' })
        .getByText(/^\d+ dependents? within 2 hops$/)
        .waitFor();
      assert.ok((await sideways()) <= 0, `node page: no horizontal scroll (${await sideways()} px)`);
      await inside('the drawn graph', graph);
      await inside('the code', phone.getByRole('region', { name: 'Code' }).locator('pre'));
      await inside('the node id', phone.locator('.meta .node-id'));
      await phone.screenshot({ path: `${ARTIFACTS}node-phone.png`, fullPage: true });
      assert.deepEqual(await accessibilityViolations(phone), [], 'node page at phone width: WCAG 2.1 AA (axe-core)');
      assert.deepEqual(away, [], 'no request left the service');
    } finally {
      await phone.close();
    }
  });
});
