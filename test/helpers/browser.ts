// The browser tests' Chromium (Debian's `chromium` package, driven by playwright-core; .ci/run installs it) and their
// accessibility check. Without Chromium a browser test file is skipped with SKIP_NOTE; REQUIRE_BROWSER_TESTS=1 (set by
// .ci/run) turns a missing Chromium into a failure instead, so CI always runs them.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { WAIT_SAFETY_NET_MS } from '../setup/safety-nets.ts';
import { startTestApp, TEST_ADMIN_TOKEN } from './app.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUIRED = process.env.REQUIRE_BROWSER_TESTS === '1';
export const SKIPPED = !REQUIRED && !existsSync(CHROMIUM);
export const SKIP_NOTE = `Chromium not found at ${CHROMIUM}: install Debian's chromium package or set CHROMIUM_PATH (.ci/run requires it)`;

/**
 * Headless Chromium, with nothing of its own reaching the network (no QUIC, sync, component or background updates).
 * Every page waits on conditions (an element, a navigation, a load state); Playwright's own 30 s limit on each is
 * replaced by the suite's safety net, in every context and page this browser opens (newPage opens a context too).
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: WAIT_SAFETY_NET_MS,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(WAIT_SAFETY_NET_MS);
    context.on('page', watchPage);
    return context;
  };
  return browser;
}

/**
 * What went wrong in any page of any context since the last check: console errors (a CSP violation is one, e.g. an
 * inline <style> refused) and uncaught exceptions. browserTests fails a test that leaves anything here
 * (docs/console.md "Operator console": the pages run no inline script or style).
 */
const pageProblems: string[] = [];

function watchPage(page: Page): void {
  // A page answered with an error status (a refusal page, a 404 the test asks for) makes Chromium log "Failed to load
  // resource" for the document itself; the tests check those statuses themselves. Any other resource failing counts.
  const documents = new Set<string>();
  page.on('response', (response) => {
    if (response.request().isNavigationRequest() && response.frame() === page.mainFrame()) documents.add(response.url());
  });
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'error') return;
    if (message.text().startsWith('Failed to load resource: the server responded with a status of') && documents.has(message.location().url)) return;
    pageProblems.push(`console error on ${page.url()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => pageProblems.push(`uncaught exception on ${page.url()}: ${error.message}`));
}

/** The browser's problems collected since the last call, and none kept. */
export function takePageProblems(): string[] {
  return pageProblems.splice(0);
}

/** What a browser test file runs against: its own database, the service listening on it, and Chromium. */
export interface BrowserRun {
  database: TestDatabase;
  app: App;
  baseUrl: string;
  browser: Browser;
}

/**
 * A browser test file's setup and teardown, called once at its top. Unless Chromium is missing (then every test of the
 * file is skipped with SKIP_NOTE, said once on stderr as `name` skipped): a fresh database, the service listening on it
 * over HTTP (startTestApp with `options`), headless Chromium (launchChromium), then `ready` with all three for what the
 * file sets up itself. After the file the browser, the service and the database are closed, in that order.
 */
export function browserTests(name: string, options: Parameters<typeof startTestApp>[1], ready: (run: BrowserRun) => Promise<void> | void): void {
  let run: Partial<BrowserRun> = {};
  beforeAll(async () => {
    if (SKIPPED) {
      process.stderr.write(`${name} skipped: ${SKIP_NOTE}\n`);
      return;
    }
    const database = await createTestDatabase();
    run = { database };
    Object.assign(run, await startTestApp(database.url, options));
    run.browser = await launchChromium();
    await ready(run as BrowserRun);
  });
  beforeEach(({ skip }) => {
    skip(SKIPPED, SKIP_NOTE);
    takePageProblems();
  });
  // No page a test visited logged a console error (a CSP violation among them) or threw.
  afterEach(() => {
    expect(takePageProblems()).toEqual([]);
  });
  afterAll(async () => {
    await run.browser?.close();
    await run.app?.close();
    await run.database?.drop();
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core (from node_modules) finds no serious or critical violation on the page as it is now. */
export async function expectAccessible(page: Page): Promise<void> {
  // Evaluated through the DevTools protocol: the page's own CSP (no inline script) stays in force.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (
      globalThis as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }
    ).axe.run();
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id} (${v.nodes.length})`);
  });
  expect(violations).toEqual([]);
}

/**
 * The page as it is now fits a 1280×800 window: the document is no wider than the window (docs/console.md
 * "Operator console"); a wide table wraps its cells rather than pushing the page sideways.
 */
export async function expectFitsWindow(page: Page): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${page.url()} scrollWidth`).toBeLessThanOrEqual(1280);
}

/**
 * Signs in to the console with the test admin token in a new browser context (its window `viewport`, else Playwright's
 * default); every URL the context requests is pushed to `requested`.
 */
export async function signInToConsole(
  browser: Browser,
  baseUrl: string,
  options: { viewport?: { width: number; height: number }; requested: string[] },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ acceptDownloads: false, ...(options.viewport ? { viewport: options.viewport } : {}) });
  context.on('request', (request) => options.requested.push(request.url()));
  const page = await context.newPage();
  await page.goto(`${baseUrl}/console/login`);
  await page.getByLabel('Admin token').fill(TEST_ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/console`);
  return { context, page };
}
