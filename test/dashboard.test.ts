import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../src/http/dashboard.js';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

/** Debian's Chromium (.ci/run installs it); CHROMIUM overrides the path. */
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const ADMIN_TOKEN = 'dashboard-admin-token-0123456789abcdef';

const skip = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`
  : !existsSync(`${WEB_ROOT}index.html`)
    ? 'the dashboard is not built (npm run build:web)'
    : false;

describe('web dashboard in headless Chromium', { skip }, () => {
  const backend = backends[0]!;
  let database: TestDb;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  const foreign: string[] = [];

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const task = (project: string, title: string, phase: string) => ({ title, description: `${title}.`, task_type: 'coding', priority: 6, phase_name: phase, project });

  before(async () => {
    database = await backend.open();
    server = await startServer(database, { auth: { mode: 'required', adminToken: ADMIN_TOKEN } });
    // Seeded over the public API: two plans, one with work done.
    const created = await rest(server.url, 'POST', '/api/v1/keys', { name: 'dashboard-user', scopes: ['read', 'write'] }, admin);
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
    assert.equal((await rest(server.url, 'PATCH', `/api/v1/tasks/${ids[0]}`, { status: 'completed' }, admin)).status, 200);
    for (const [content, project] of [
      ['We cache cart sessions in Redis for 30 minutes; the checkout reads them once.', 'Checkout'],
      ['The catalogue index is rebuilt nightly; partial updates go through the queue.', 'Search'],
    ] as const) {
      assert.equal((await rest(server.url, 'POST', '/api/v1/memories', { content, content_type: 'decision', project }, admin)).status, 201);
    }

    await mkdir(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-quic', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    // Everything the page loads comes from the service.
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url)) foreign.push(request.url());
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.dispose();
  });

  test('sign in: no key asks for one; a wrong key is refused; the right one shows the plans', async () => {
    await page.goto(server.url);
    const field = page.getByLabel('API key');
    await field.waitFor();
    await page.screenshot({ path: `${ARTIFACTS}signin.png` });
    await field.fill('dsh_not-a-real-key');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor();

    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Plans', level: 1 }).waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 1, 'the key is in session storage');
  });

  test('plans: each with status, priority, hours and progress bars for phases and tasks; filter by status', async () => {
    const checkout = page.getByRole('listitem', { name: 'Plan Checkout' });
    await checkout.waitFor();
    assert.match(await checkout.innerText(), /active|draft/);
    assert.match(await checkout.innerText(), /Tasks: 1 of 3/);
    assert.match(await checkout.innerText(), /Phases: 0 of 2/);
    assert.equal(await checkout.getByRole('progressbar', { name: 'Tasks done' }).getAttribute('value'), '1');
    await page.getByRole('listitem', { name: 'Plan Search' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}plans.png`, fullPage: true });

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

  test('signing out forgets the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 0);
  });
});
