import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { backends, type TestDb } from './helpers/backends.js';
import { dashboardSkip, launchChromium, openPage, closeDashboard } from './helpers/browser.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

// PGlite when npm test runs without a database; Postgres in the DATABASE_URL pass (not PGlite twice).
const backend = backends.at(-1)!;

describe(`dashboard plans: hours only where someone gave them (${backend.name})`, { skip: dashboardSkip }, () => {
  let database: TestDb;
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    database = await backend.open();
    server = await startServer(database);
    // Auto-created by its first task: no estimate, no time recorded.
    const created = await rest(server.url, 'POST', '/api/v1/tasks', {
      title: 'First',
      description: 'd',
      task_type: 'coding',
      priority: 5,
      phase_name: 'Start',
      project: 'Unplanned',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // A plan someone estimated (no tool sets hours: written as an import would).
    await database.db.kysely
      .insertInto('intervention_plans')
      .values({
        id: 'e0e0e0e0e0e0',
        title: 'Estimated',
        expected_outcome: 'o',
        status: 'active',
        priority: 5,
        estimated_hours: 40,
        actual_hours: 12,
      })
      .execute();
    browser = await launchChromium();
  });
  after(() => closeDashboard(browser, server, database));

  test('an auto-created plan shows no hours and no description; an estimated one shows its hours', async () => {
    const { page, foreign } = await openPage(browser, server.url);
    await page.goto(server.url);
    const unplanned = page.getByRole('listitem', { name: 'Plan Unplanned' });
    await unplanned.waitFor();
    const meta = (await unplanned.locator('.meta').innerText()).trim();
    assert.match(meta, /^active priority 7$/, 'no "0 of 100 h", no "0 h spent"');
    assert.doesNotMatch(await unplanned.innerText(), /Auto-created| h\b/);
    const estimated = page.getByRole('listitem', { name: 'Plan Estimated' });
    assert.match((await estimated.locator('.meta').innerText()).trim(), /^active priority 5 · 12 of 40 h$/);
    assert.deepEqual(foreign, [], 'no request left the service');
  });
});
