import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WEB_ROOT } from '../../src/http/dashboard.js';
import { once } from './backends.js';

/** Debian's Chromium (.ci/run installs it); CHROMIUM overrides the path. */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Where browser tests put their screenshots (gitignored; the good ones are copied to docs/screenshots). */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/**
 * Why the dashboard's browser tests cannot run here (for `describe`'s `skip`), or false when they can.
 * They run once, on the last backend there is: the page talks to the REST API, which its own tests run
 * on both backends; CI's Postgres pass, which follows the PGlite one, leaves them out (`once`).
 */
export const dashboardSkip: string | false = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`
  : !existsSync(`${WEB_ROOT}index.html`)
    ? 'the dashboard is not built (npm run build:web)'
    : once.skip;

/**
 * Headless Chromium as these machines allow it: without the background-networking flags it keeps
 * dialling Google's hosts, which the closed network refuses. Also makes the artifacts folder.
 */
export async function launchChromium(): Promise<Browser> {
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
      '--disable-quic',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A 1366×800 page; `foreign` collects every request it makes to anywhere but `origin`. */
export async function openPage(browser: Browser, origin: string): Promise<{ page: Page; foreign: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
  const foreign: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(origin)) foreign.push(request.url());
  });
  return { page, foreign };
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * The page's WCAG 2.1 A/AA violations found by axe-core (injected from node_modules, so nothing is
 * fetched), as `rule: selector …` lines, empty when there are none. Contrast, labels, names, roles,
 * landmarks and headings are all in it; keyboard use is tested by the tests themselves.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.addScriptTag({ path: AXE });
  const violations = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => r.violations.map((v) => ({ id: v.id, targets: v.nodes.map((n) => n.target.join(' ')) })))`,
  )) as Array<{ id: string; targets: string[] }>;
  return violations.map(
    (v) => `${v.id}: ${v.targets.slice(0, 5).join(', ')}${v.targets.length > 5 ? ` (+${v.targets.length - 5})` : ''}`,
  );
}

/** Signs in on the dashboard's sign-in form of `page` (already showing it) with the API key `key`. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The end of a dashboard suite: the browser, then the service, then its database, each if it was made. */
export async function closeDashboard(
  browser: { close(): Promise<unknown> } | undefined,
  server: { close(): Promise<unknown> } | undefined,
  database: { dispose(): Promise<unknown> } | undefined,
): Promise<void> {
  await browser?.close();
  await server?.close();
  await database?.dispose();
}
