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
import { rest, startServer, type TestServer } from './helpers/server.js';
import { testConfig } from '../support/test-config.js';

const ADMIN_TOKEN = 'dashboard-admin-token-0123456789abcdef';

// PGlite when npm test runs without a database; Postgres in the DATABASE_URL pass (not PGlite twice).
const backend = backends.at(-1)!;

describe(`web dashboard in headless Chromium (${backend.name})`, { skip: dashboardSkip }, () => {
  let database: TestDb;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  let foreign: string[];

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const task = (project: string, title: string, phase: string) => ({
    title,
    description: `${title}.`,
    task_type: 'coding',
    priority: 6,
    phase_name: phase,
    project,
  });

  before(async () => {
    database = await backend.open();
    server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
    // Seeded over the public API: two plans, one with work done.
    const created = await rest(
      server.url,
      'POST',
      '/api/v1/keys',
      { name: 'dashboard-user', scopes: ['read', 'write'] },
      admin,
    );
    assert.equal(created.status, 201);
    key = created.body.token;
    const ids: string[] = [];
    for (const [project, title, phase] of [
      ['Checkout', 'Design the cart', 'Design'],
      ['Checkout', 'Build the cart', 'Build'],
      ['Checkout', 'Test the cart', 'Build'],
      ['Search', 'Index the catalogue', 'Indexing'],
    ] as const) {
      const r = await rest(server.url, 'POST', '/api/v1/tasks', task(project, title, phase), admin);
      assert.equal(r.status, 201);
      ids.push(r.body.task.id);
    }
    assert.equal(
      (await rest(server.url, 'PATCH', `/api/v1/tasks/${ids[0]}`, { status: 'completed' }, admin)).status,
      200,
    );
    for (const [content, project] of [
      ['We cache cart sessions in Redis for 30 minutes; the checkout reads them once.', 'Checkout'],
      ['The catalogue index is rebuilt nightly; partial updates go through the queue.', 'Search'],
    ] as const) {
      assert.equal(
        (await rest(server.url, 'POST', '/api/v1/memories', { content, content_type: 'decision', project }, admin))
          .status,
        201,
      );
    }

    browser = await launchChromium();
    ({ page, foreign } = await openPage(browser, server.url));
  });
  after(() => closeDashboard(browser, server, database));

  test('sign in: no key asks for one; a wrong key is refused; the right one shows the plans', async () => {
    await page.goto(server.url);
    const field = page.getByLabel('API key');
    await field.waitFor();
    await page.screenshot({ path: `${ARTIFACTS}signin.png` });
    assert.deepEqual(await accessibilityViolations(page), [], 'signin: WCAG 2.1 AA (axe-core)');
    await field.fill('dsh_not-a-real-key');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor();

    await signIn(page, key);
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 1, 'the key is in session storage');
  });

  test('plans: each with status, priority, hours and progress bars for phases and tasks; filter by status', async () => {
    const checkout = page.getByRole('listitem', { name: 'Plan Checkout' });
    await checkout.waitFor();
    assert.match(await checkout.innerText(), /active|draft/);
    assert.match(await checkout.innerText(), /Tasks: 1 of 3/);
    assert.match(await checkout.innerText(), /Phases: 1 of 2/, 'Design: its one task is done');
    assert.equal(await checkout.getByRole('progressbar', { name: 'Tasks done' }).getAttribute('value'), '1');
    await page.getByRole('listitem', { name: 'Plan Search' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}plans.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'plans: WCAG 2.1 AA (axe-core)');

    await page.getByLabel('Status').selectOption('completed');
    await page.getByText('No plans with status completed yet.').waitFor();
    await page.getByLabel('Status').selectOption('');
    await checkout.waitFor();
    assert.deepEqual(foreign, [], 'no request left the service');
  });

  test('memory: a search shows its method and the ranks of each hit; a hit opens with its details', async () => {
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    await page.getByLabel('Search', { exact: true }).fill('cart sessions');
    await page.getByLabel('Type').selectOption('decision');
    await page.getByRole('button', { name: 'Search' }).click();
    const summary = page.getByText(/1 result by keyword search/);
    await summary.waitFor();
    assert.match(await summary.innerText(), /embeddings are disabled/, 'why it is keyword-only');
    const hit = page.getByRole('button', { name: /^Open memory/ });
    assert.match(await hit.innerText(), /Checkout · vector — · keyword #1/);
    await page.screenshot({ path: `${ARTIFACTS}memory.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'memory: WCAG 2.1 AA (axe-core)');
    await hit.click();
    const detail = page.getByRole('article');
    await detail.waitFor();
    assert.match(await detail.innerText(), /We cache cart sessions in Redis/);
    assert.match(await detail.innerText(), /none yet \(keyword search only\)/);
    await page.getByLabel('Project').fill('Search');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText(/0 results by keyword search/).waitFor();
    assert.deepEqual(foreign, [], 'no request left the service');
  });

  test('memory: a new memory is stored from the page and opens; deleting it asks first, then it is gone', async () => {
    await page.getByRole('button', { name: 'New memory' }).click();
    await page.getByLabel('Content').fill('Checkout retries card payments twice with a 2 s backoff, then gives up.');
    await page.getByLabel('Kind').selectOption('learning');
    await page.getByLabel('In project').fill('Checkout');
    await page.getByLabel('Keywords').fill('payments, retries');
    assert.deepEqual(await accessibilityViolations(page), [], 'new memory form: WCAG 2.1 AA (axe-core)');
    await page.getByRole('button', { name: 'Store' }).click();
    const stored = page.getByRole('status').filter({ hasText: /^Stored memory [0-9a-f]+ in Checkout\./ });
    await stored.waitFor();
    const id = /memory ([0-9a-f]+)/.exec(await stored.innerText())![1]!;
    const detail = page.getByRole('article', { name: `Memory ${id}` });
    assert.match(await detail.innerText(), /Checkout retries card payments twice/);
    assert.match(await detail.innerText(), /payments, retries/);
    assert.match(await detail.innerText(), /dashboard-user/, 'stored by the signed-in key');
    assert.equal((await rest(server.url, 'GET', `/api/v1/memories/${id}`, undefined, admin)).status, 200);

    await detail.getByRole('button', { name: 'Delete…' }).click();
    await detail.getByRole('button', { name: 'Keep' }).click();
    assert.equal(
      (await rest(server.url, 'GET', `/api/v1/memories/${id}`, undefined, admin)).status,
      200,
      'Keep deletes nothing',
    );
    await detail.getByRole('button', { name: 'Delete…' }).click();
    await detail.getByRole('button', { name: 'Delete', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deleted memory ${id}.` })
      .waitFor();
    await detail.waitFor({ state: 'detached' });
    assert.equal((await rest(server.url, 'GET', `/api/v1/memories/${id}`, undefined, admin)).status, 404);

    // Bad input is named by the service and shown; nothing is stored.
    await page.getByRole('button', { name: 'New memory' }).click();
    await page.getByLabel('Content').fill('x');
    await page.getByLabel('Keywords').fill('k'.repeat(101));
    await page.getByRole('button', { name: 'Store' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /VALIDATION_ERROR.*keywords\.0/ })
      .waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(foreign, [], 'no request left the service');
  });

  test('tasks board: columns by status; a task moves by menu with notes and by drag; changes from elsewhere show up by themselves', async () => {
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    const column = (status: string) => page.getByRole('list', { name: `${status} tasks` });
    await column('completed').getByRole('listitem', { name: 'Task Design the cart' }).waitFor();
    assert.equal(await page.getByLabel('Project').inputValue(), 'Checkout', 'the first plan by name is chosen');
    assert.deepEqual((await column('pending').getByRole('heading', { level: 3 }).allInnerTexts()).sort(), [
      'Build the cart',
      'Test the cart',
    ]);
    assert.equal(
      await page.getByRole('heading', { name: /^pending/, level: 2 }).innerText(),
      'Pending 2',
      'each column counts its tasks',
    );
    const card = await column('completed').getByRole('listitem', { name: 'Task Design the cart' }).innerText();
    assert.match(card, /P6/);
    assert.match(card, /coding/);
    assert.match(card, /phase Design/);
    assert.match(card, /Created/);
    assert.match(card, /Ended/, 'a completed task shows when it ended');

    // By menu, from the keyboard: Enter opens the dialog, Escape leaves everything as it was.
    await page.getByRole('button', { name: 'Move Build the cart' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Move “Build the cart”' });
    await dialog.waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'move dialog: WCAG 2.1 AA (axe-core)');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Move Build the cart' }).click();
    assert.equal(
      await dialog.getByLabel('New status').inputValue(),
      'active',
      'pending tasks are offered active first',
    );
    await dialog.getByLabel('Notes').fill('Started on the cart API; the Redis session cache is in place.');
    await dialog.getByRole('button', { name: 'Move' }).click();
    await page.getByRole('status').filter({ hasText: 'Moved “Build the cart” to active.' }).waitFor();
    assert.equal(
      await page.evaluate('document.activeElement?.textContent'),
      'Moved “Build the cart” to active.',
      'focus goes to what happened',
    );
    await column('active').getByRole('listitem', { name: 'Task Build the cart' }).waitFor();
    const tasks = async () =>
      (await rest(server.url, 'GET', '/api/v1/tasks?project=Checkout', undefined, admin)).body.tasks as Array<{
        id: string;
        title: string;
        status: string;
      }>;
    assert.equal((await tasks()).find((t) => t.title === 'Build the cart')?.status, 'active');
    const notes = await rest(
      server.url,
      'POST',
      '/api/v1/memories/search',
      { query: 'Redis session cache cart API', project: 'Checkout', content_type: 'decision' },
      admin,
    );
    assert.ok(
      notes.body.results.some(
        (hit: { content: string }) =>
          hit.content ===
          'Task status update: active. Notes: Started on the cart API; the Redis session cache is in place.',
      ),
      'the notes are stored as a decision memory',
    );

    // By drag: the drop opens the same dialog with the column's status chosen.
    await column('pending')
      .getByRole('listitem', { name: 'Task Test the cart' })
      .dragTo(page.locator('[data-status="completed"]'));
    const dragged = page.getByRole('dialog', { name: 'Move “Test the cart”' });
    assert.equal(await dragged.getByLabel('New status').inputValue(), 'completed');
    await dragged.getByRole('button', { name: 'Move' }).click();
    await column('completed').getByRole('listitem', { name: 'Task Test the cart' }).waitFor();
    assert.equal((await tasks()).find((t) => t.title === 'Test the cart')?.status, 'completed');

    // An agent moves a task over the API: the open board follows without a reload.
    const design = (await tasks()).find((t) => t.title === 'Design the cart')!;
    assert.equal(
      (await rest(server.url, 'PATCH', `/api/v1/tasks/${design.id}`, { status: 'failed' }, admin)).status,
      200,
    );
    await column('failed').getByRole('listitem', { name: 'Task Design the cart' }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: `${ARTIFACTS}tasks.png`, fullPage: true });
    assert.deepEqual(await accessibilityViolations(page), [], 'tasks: WCAG 2.1 AA (axe-core)');
    assert.deepEqual(foreign, [], 'no request left the service');
  });

  test('signing out forgets the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 0);
  });

  test('a read-only key sees everything and no controls that change anything', async () => {
    const created = await rest(
      server.url,
      'POST',
      '/api/v1/keys',
      { name: 'dashboard-reader', scopes: ['read'] },
      admin,
    );
    await signIn(page, created.body.token);
    await page.getByText('dashboard-reader · read').waitFor();
    await page.goto(`${server.url}/#/tasks/Checkout`);
    await page.getByRole('listitem', { name: 'Task Build the cart' }).waitFor();
    assert.equal(await page.getByRole('button', { name: /^Move / }).count(), 0);
    assert.equal(await page.locator('[draggable="true"]').count(), 0);
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByRole('heading', { name: 'Memory', level: 1 }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'New memory' }).count(), 0);
    await page.getByLabel('Search', { exact: true }).fill('cart sessions');
    await page.getByRole('button', { name: 'Search' }).click();
    await page
      .getByRole('button', { name: /^Open memory/ })
      .first()
      .click();
    await page.getByRole('article').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Delete…' }).count(), 0);
  });

  test('a key revoked while the board is open signs the page out at its next call', async () => {
    const created = await rest(
      server.url,
      'POST',
      '/api/v1/keys',
      { name: 'dashboard-shortlived', scopes: ['read'] },
      admin,
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, created.body.token);
    await page.getByText('dashboard-shortlived · read').waitFor();
    await page.goto(`${server.url}/#/tasks/Checkout`);
    await page.getByRole('listitem', { name: 'Task Build the cart' }).waitFor();
    assert.equal((await rest(server.url, 'DELETE', '/api/v1/keys/dashboard-shortlived', undefined, admin)).status, 200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('alert').filter({ hasText: 'refused the API key' }).waitFor();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 0, 'the refused key is forgotten');
  });

  test('behind a rate limit the board keeps its cards, says so and waits as long as Retry-After asks', async () => {
    const limited = await startServer(database, {
      limits: { ...testConfig().limits, rateLimitMax: 12, rateLimitWindowMs: 60_000 },
    });
    try {
      const { page: tab } = await openPage(browser, limited.url);
      // Timers run on Playwright's clock: the test moves time on instead of waiting for it.
      await tab.clock.install();
      const asked: string[] = [];
      tab.on('request', (request) => new URL(request.url()).pathname === '/api/v1/tasks' && asked.push(request.url()));
      let retryAfter = 0;
      tab.on(
        'response',
        (response) => response.status() === 429 && (retryAfter = Number(response.headers()['retry-after'])),
      );
      await tab.goto(`${limited.url}/#/tasks/Checkout`);
      await tab.getByRole('listitem', { name: 'Task Build the cart' }).waitFor();
      // This server runs with AUTH=off (loopback): no sign-in, and nothing to sign out of.
      await tab.getByText('no key (AUTH=off) · read, write, admin').waitFor();
      assert.equal(await tab.getByRole('button', { name: 'Sign out' }).count(), 0);
      const refused = tab.getByRole('alert').filter({ hasText: /^RATE_LIMITED: Rate limit exceeded/ });
      for (let i = 0; i < 20 && !(await refused.isVisible()); i++)
        await tab.getByRole('button', { name: 'Refresh' }).click();
      await refused.waitFor();
      const hint = tab.getByText(/Refreshing again in \d+ s/);
      await hint.waitFor();
      const wait = Number(/in (\d+) s/.exec(await hint.innerText())![1]);
      assert.ok(retryAfter > 10, `the service asked for more than the usual 10 s (${retryAfter} s)`);
      assert.ok(Math.abs(wait - retryAfter) <= 1, `waits out Retry-After: ${wait} s shown, ${retryAfter} s asked`);
      assert.ok(
        await tab.getByRole('listitem', { name: 'Task Build the cart' }).isVisible(),
        'the last cards stay on the board',
      );
      // Past the usual 10 s refresh, nothing is asked; past Retry-After, the board asks again.
      const before = asked.length;
      await tab.clock.runFor((wait - 2) * 1000);
      assert.equal(asked.length, before, 'no call while the service asked to wait');
      const again = tab.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/tasks');
      await tab.clock.runFor(3_000);
      await again;
      await tab.close();
    } finally {
      await limited.close();
    }
  });

  test('at phone width (390×844) no page scrolls sideways: the header and toolbar wrap, the board columns stack, a memory’s long URL wraps', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      /** How far the page scrolls sideways (0: not at all). */
      const sideways = async () =>
        (await phone.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
      await phone.goto(server.url);
      await signIn(phone, key);
      await phone.getByRole('listitem', { name: 'Plan Checkout' }).waitFor();
      assert.equal(await sideways(), 0, 'plans: no horizontal scroll');

      await phone.getByRole('link', { name: 'Tasks' }).click();
      await phone.getByRole('listitem', { name: 'Task Build the cart' }).waitFor();
      assert.equal(await sideways(), 0, 'tasks: no horizontal scroll');
      const boxes = await Promise.all(
        (await phone.locator('.column').all()).map(async (column) => (await column.boundingBox())!),
      );
      assert.equal(boxes.length, 5);
      for (const [i, box] of boxes.entries()) {
        assert.ok(
          box.x >= 0 && box.x + box.width <= 390,
          `column ${i} is inside the screen (${box.x}–${box.x + box.width})`,
        );
        assert.ok(box.width > 300, `column ${i} takes the width (${box.width} px)`);
        if (i > 0) assert.ok(box.y >= boxes[i - 1]!.y + boxes[i - 1]!.height, `column ${i} is below column ${i - 1}`);
      }
      await phone.screenshot({ path: `${ARTIFACTS}tasks-phone.png`, fullPage: true });
      assert.deepEqual(await accessibilityViolations(phone), [], 'tasks at phone width: WCAG 2.1 AA (axe-core)');

      // Still usable: the move dialog opens, fits the screen and cancels.
      await phone.getByRole('button', { name: 'Move Build the cart' }).click();
      const dialog = phone.getByRole('dialog', { name: 'Move “Build the cart”' });
      const box = (await dialog.boundingBox())!;
      assert.ok(box.x >= 0 && box.x + box.width <= 390, 'the dialog fits the screen');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await sideways(), 0);

      // A memory whose URL and keyword have no space to break at: the hit and the open memory wrap them.
      const runbook =
        'The eviction runbook: https://wiki.example.internal/engineering/checkout/runbooks/redis-session-cache-eviction-and-recovery, keyed checkout:session:{customerId}:{cartId}:v2.';
      const long = await rest(
        server.url,
        'POST',
        '/api/v1/memories',
        {
          content: runbook,
          content_type: 'code',
          project: 'Checkout',
          keywords: ['checkout.session.cache.redis.eviction.policy.v2'],
        },
        admin,
      );
      assert.equal(long.status, 201);
      await phone.getByRole('link', { name: 'Memory' }).click();
      await phone.getByLabel('Search', { exact: true }).fill('eviction runbook');
      await phone.getByRole('button', { name: 'Search' }).click();
      await phone.getByRole('button', { name: `Open memory ${long.body.memory_id}:` }).click();
      await phone.getByRole('article', { name: `Memory ${long.body.memory_id}` }).waitFor();
      assert.equal(await sideways(), 0, 'memory with a long URL open: no horizontal scroll');
      await phone.screenshot({ path: `${ARTIFACTS}memory-phone.png`, fullPage: true });
      assert.deepEqual(await accessibilityViolations(phone), [], 'memory at phone width: WCAG 2.1 AA (axe-core)');
    } finally {
      await phone.close();
    }
  });

  test('the page has an icon: linked from index.html, served, and no failed load in the console', async () => {
    const tab = await browser.newPage();
    try {
      const failures: string[] = [];
      tab.on('console', (message) => message.type() === 'error' && failures.push(message.text()));
      tab.on(
        'response',
        (response) => response.status() >= 400 && failures.push(`${response.status()} ${response.url()}`),
      );
      // Signed in already (the key in session storage, as the sign-in form leaves it): no 401 to count.
      await tab.addInitScript(`sessionStorage.setItem('devstream-hub.api-key', ${JSON.stringify(key)})`);
      await tab.goto(server.url);
      await tab.getByRole('listitem', { name: 'Plan Checkout' }).waitFor();
      const link = tab.locator('link[rel~="icon"]');
      assert.equal(await link.count(), 1, 'index.html links an icon');
      const icon = (await link.getAttribute('href'))!;
      const served = await fetch(new URL(icon, server.url));
      assert.equal(served.status, 200, 'the icon is served without a key');
      assert.match(served.headers.get('content-type') ?? '', /^image\/svg\+xml/);
      assert.match(await served.text(), /^<svg /);
      assert.equal(
        served.headers.get('cache-control'),
        'no-cache',
        'its name never changes: asked again, not kept for a year',
      );
      const script = (await tab.locator('script[src^="/assets/"]').getAttribute('src'))!;
      assert.equal(
        (await fetch(new URL(script, server.url))).headers.get('cache-control'),
        'public, max-age=31536000, immutable',
        'hashed names are kept',
      );
      assert.deepEqual(
        failures,
        [],
        'nothing failed to load (the browser asks for no /favicon.ico: 401 or 404 before)',
      );
    } finally {
      await tab.close();
    }
  });
});
