// Our Toss window page in a real browser (docs/api.md "Gateways"), the service running against "the real Toss" (a
// second service's Toss sandbox on its own port, as in test/modules/registrations/toss-window.test.ts): the page loads
// Toss's script and calls requestBillingAuth with the registration's customerKey, successUrl and failUrl; it reads
// well (axe) on a phone; a script that does not load, or a window the customer closes, leaves a message and a button
// that tries again; without JavaScript it says the window needs it.
//
// The one request that leaves this machine is Toss's script (https://js.tosspayments.com/v2/standard), and the
// machine has no internet: Playwright answers it with a stub that records how it was called (or fails it, for the
// failure path). Everything else (our page, its CSP, the redirect back, the key issue) is the real service.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_SECRET_KEY } from '../../src/dev-secrets.ts';
import { TOSS_SDK_URL } from '../../src/modules/registrations/toss-window.page.ts';
import { apiHeaders, startTestApp } from '../helpers/app.ts';
import { browserTests, expectAccessible, SKIPPED, takePageProblems, type BrowserRun } from '../helpers/browser.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

// The Toss side starts first: the service is built with its address (browserTests reads `env` when it starts it).
const env: Record<string, string> = { TOSS_SECRET_KEY: TOSS_SANDBOX_SECRET_KEY, TOSS_CLIENT_KEY: TOSS_SANDBOX_CLIENT_KEY };
let tossSide: { database: TestDatabase; app: App; baseUrl: string } | undefined;
beforeAll(async () => {
  if (SKIPPED) return;
  const database = await createTestDatabase();
  tossSide = { database, ...(await startTestApp(database.url)) };
  env.TOSS_API_BASE_URL = `${tossSide.baseUrl}/sandbox/toss`;
});
afterAll(async () => {
  await tossSide?.app.close();
  await tossSide?.database.drop();
});

let run: BrowserRun;
browserTests('Toss window page browser tests', { env }, (ready) => {
  run = ready;
});

/** Stands in for Toss's SDK: records each requestBillingAuth call in window.tossCalls; the first is answered USER_CANCEL when window.cancelFirst. */
const SDK_STUB = `window.tossCalls = [];
window.TossPayments = function (clientKey) {
  return { payment: function (init) { return { requestBillingAuth: function (args) {
    window.tossCalls.push({ clientKey: clientKey, customerKey: init.customerKey, args: args });
    if (window.cancelFirst && window.tossCalls.length === 1) return Promise.reject({ code: 'USER_CANCEL', message: 'closed' });
    return new Promise(function () {});
  } }; } };
};`;

type TossCall = { clientKey: string; customerKey: string; args: Record<string, unknown> };

async function registerToss() {
  const response = await fetch(`${run.baseUrl}/api/v1/registrations`, {
    method: 'POST',
    headers: { ...apiHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'toss-browser-user', method: 'CARD', amount: 9900, orderName: '토스 플랜', gateway: 'TOSS', issueKeyOnly: true }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; window: { clientKey: string; customerKey: string; successUrl: string; failUrl: string; url: string } };
}

async function phone(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await run.browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
  return { context, page: await context.newPage() };
}

const serveStub = (context: BrowserContext) =>
  context.route(TOSS_SDK_URL, (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: SDK_STUB }));

const callsOf = async (page: Page, count: number): Promise<TossCall[]> => {
  await page.waitForFunction((n) => ((globalThis as unknown as { tossCalls?: unknown[] }).tossCalls ?? []).length >= n, count);
  return page.evaluate(() => (globalThis as unknown as { tossCalls: TossCall[] }).tossCalls);
};

describe('the Toss window page in a browser', () => {
  it('calls requestBillingAuth with the registration’s customerKey and redirects, reads well on a phone, and the redirect completes it', async () => {
    const registration = await registerToss();
    const { context, page } = await phone();
    try {
      await serveStub(context);
      await page.goto(registration.window.url);
      const [call] = await callsOf(page, 1);
      expect(call).toEqual({
        clientKey: registration.window.clientKey,
        customerKey: registration.window.customerKey,
        args: { method: 'CARD', successUrl: registration.window.successUrl, failUrl: registration.window.failUrl },
      });
      await expect(page.locator('[data-state="opening"]').isVisible()).resolves.toBe(true);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
      await expectAccessible(page);

      // Toss would now send the browser to successUrl with customerKey and authKey: the Toss side gives the authKey.
      const authorized = await fetch(`${tossSide!.baseUrl}/sandbox/toss/window/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...call!.args, clientKey: call!.clientKey, customerKey: call!.customerKey, decision: 'approve' }),
      });
      const { redirectUrl } = (await authorized.json()) as { redirectUrl: string };
      await page.goto(redirectUrl);
      await page.waitForURL(`${run.baseUrl}/result?**`);
      await expect(page.locator('#outcome').getAttribute('data-status')).resolves.toBe('success');
      expect(new URL(page.url()).searchParams.get('registrationId')).toBe(registration.id);
    } finally {
      await context.close();
    }
  });

  it('says so when Toss’s script does not load, and Try again loads it and opens the window', async () => {
    const registration = await registerToss();
    const { context, page } = await phone();
    try {
      await context.route(TOSS_SDK_URL, (route) => route.abort('internetdisconnected'));
      await page.goto(`${registration.window.url}?lang=en`);
      const unavailable = page.locator('[data-state="unavailable"]');
      await unavailable.waitFor({ state: 'visible' });
      await expect(unavailable.textContent()).resolves.toContain('could not be loaded');
      await expectAccessible(page);
      // The failed load is the one console error Chromium logs here, and it is the one this test asked for.
      const problems = takePageProblems();
      expect(problems.length).toBeGreaterThan(0);
      for (const problem of problems) expect(problem).toMatch(/Failed to load resource: net::ERR_INTERNET_DISCONNECTED \(https:\/\/js\.tosspayments\.com\//);

      await context.unroute(TOSS_SDK_URL);
      await serveStub(context);
      await page.getByRole('button', { name: 'Try again' }).click();
      const [call] = await callsOf(page, 1);
      expect(call).toMatchObject({ customerKey: registration.window.customerKey, args: { method: 'CARD' } });
      await expect(page.getByRole('button', { name: 'Try again' }).isVisible()).resolves.toBe(false);
    } finally {
      await context.close();
    }
  });

  it('a window the customer closes can be opened again; without JavaScript the page says the window needs it', async () => {
    const registration = await registerToss();
    const { context, page } = await phone();
    try {
      await serveStub(context);
      await page.addInitScript('window.cancelFirst = true');
      await page.goto(registration.window.url);
      const closed = page.locator('[data-state="closed"]');
      await closed.waitFor({ state: 'visible' });
      await expect(closed.textContent()).resolves.toContain('카드 등록 창이 닫혔습니다');
      await expectAccessible(page);
      await page.getByRole('button', { name: '카드 등록 창 열기' }).click();
      expect(await callsOf(page, 2)).toHaveLength(2);
    } finally {
      await context.close();
    }
    const noScript = await run.browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await noScript.newPage();
      await page.goto(registration.window.url);
      // Without script the document's <noscript> holds its text as elements (Chromium under Playwright still styles
      // noscript hidden when script is turned off through DevTools, so its text is read rather than its visibility).
      await expect(page.locator('noscript .problem').textContent()).resolves.toContain('카드 등록 창은 JavaScript가 있어야 열립니다');
      await expect(page.locator('#retry').isVisible()).resolves.toBe(false);
    } finally {
      await noScript.close();
    }
  });
});
