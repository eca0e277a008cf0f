// The console's record pages in a real browser (headless Chromium from Debian's `chromium` package, driven by
// playwright-core, as test/e2e/console-pages.test.ts): the action boxes' headings and sentences (Cancel subscription
// and Refund in the destructive style, never looking like Pause), the Audit page with the filters and keyset pages of
// GET /admin/audit, a PAST_DUE subscription's explanation, each page checked with axe-core and against a 1280 px
// window. With CONSOLE_SCREENSHOTS set, full-page pictures of these pages are written there.
// Without Chromium these tests are skipped with a note; .ci/run sets REQUIRE_BROWSER_TESTS=1, which turns a missing
// Chromium into a failure, so CI always runs them.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { formatKst } from '../../src/modules/console/korea-time.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxFault } from '../helpers/checkout.ts';
import { adminGet } from '../helpers/settlement.ts';
import { browserTests, expectAccessible, expectFitsWindow, signInToConsole } from '../helpers/browser.ts';

const OPERATOR = 'dana';
const kst = (local: string) => new Date(`${local}+09:00`);
const SCREENSHOT_DIR = process.env.CONSOLE_SCREENSHOTS ? path.resolve(process.env.CONSOLE_SCREENSHOTS) : undefined;

let app: App;
let baseUrl: string;
let browser: Browser;
/** Every URL any page asked for: checked against the service's origin at the end. */
const requested: string[] = [];
const ids = { active: '', paused: '', pastDue: '', paymentId: '' };

interface Entry {
  id: string;
  at: string;
  actor: string;
  action: string;
  entityType: string;
  entityId: string;
}

const adminPost = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': randomUUID() }, payload });

/** Three subscriptions: one paused then resumed, one paused, one declined into PAST_DUE; a refund recorded outside the gateway. */
async function seed() {
  await setClock(app, kst('2027-03-10T09:00:00'));
  ids.active = await subscribe(app, { userId: 'records-active', amount: 30_000, orderName: 'Records plan' });
  ids.paused = await subscribe(app, { userId: 'records-paused', amount: 12_900 });
  ids.pastDue = await subscribe(app, { userId: 'records-past-due', amount: 9_900, orderName: 'Declined plan' });
  for (const [url, reason] of [
    [`/admin/subscriptions/${ids.active}/pause`, 'customer on holiday'],
    [`/admin/subscriptions/${ids.active}/resume`, 'back home'],
    [`/admin/subscriptions/${ids.paused}/pause`, 'customer asked'],
  ] as const) {
    expect((await adminPost(url, { reason })).statusCode).toBe(200);
  }
  ids.paymentId = (await paymentsOf(app, ids.active))[0]!.id;
  expect((await adminPost(`/admin/payments/${ids.paymentId}/refunds/external`, { amount: 5_000, reason: 'paid back by bank transfer' })).statusCode).toBe(201);
  // The declined one: its second cycle, charged when due through the admin route (a charging pass would charge the
  // others too), declined by the gateway.
  await setClock(app, (await getSubscription(app, ids.pastDue)).nextChargeAt!);
  await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'LIMIT_EXCEEDED', message: 'over the card limit' });
  expect((await adminPost(`/admin/subscriptions/${ids.pastDue}/charge`, { reason: 'test setup' })).statusCode).toBe(402);
  expect((await getSubscription(app, ids.pastDue)).status).toBe('PAST_DUE');
}

browserTests('console record pages browser tests', { env: { CLOCK: 'simulated', ADMIN_TOKENS: `${OPERATOR}:${TEST_ADMIN_TOKEN}` } }, async (run) => {
  ({ app, baseUrl, browser } = run);
  if (SCREENSHOT_DIR) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await seed();
});

const signedIn = () => signInToConsole(browser, baseUrl, { viewport: { width: 1280, height: 800 }, requested });

/** With CONSOLE_SCREENSHOTS set: the page as `name`, full length. */
async function screenshot(page: Page, name: string) {
  if (SCREENSHOT_DIR) await page.screenshot({ path: path.join(SCREENSHOT_DIR, name), fullPage: true });
}

/** The entity ids and actions of the Audit table's rows, in order. */
const auditRows = (page: Page) =>
  page.locator('#audit > tbody > tr').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-action')} ${row.getAttribute('data-id')}`));
const expected = (entries: Entry[]) => entries.map((e) => `${e.action} ${e.id}`);

describe('the action boxes', () => {
  it('on the Subscription page each has a heading and a sentence; Cancel subscription is destructive and unlike Pause', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/subscriptions/${ids.active}`);
      for (const name of ['Charge now', 'Pause', 'Cancel subscription']) {
        const heading = page.getByRole('heading', { level: 3, name, exact: true });
        await expect(heading.count(), name).resolves.toBe(1);
        // The box the heading names holds a sentence of what it does and its button.
        const box = page.getByRole('form', { name, exact: true });
        await expect(box.locator('p.what').textContent()).resolves.toMatch(/\w+ .{20,}\./);
      }
      const pause = page.getByRole('form', { name: 'Pause', exact: true });
      const cancel = page.getByRole('form', { name: 'Cancel subscription', exact: true });
      expect(await cancel.getAttribute('class')).toBe('action danger');
      expect(await pause.getAttribute('class')).toBe('action');
      await expect(cancel.getByRole('button').textContent()).resolves.toBe('Cancel subscription');
      // Not alike on the screen either: the cancel button is drawn in another colour than the pause button.
      const colour = async (form: typeof pause) =>
        page.evaluate<string>(`getComputedStyle(document.querySelector('form[action="${await form.getAttribute('action')}"] button')).backgroundColor`);
      expect(await colour(cancel)).not.toBe(await colour(pause));
      expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
      await expectAccessible(page);
      await expectFitsWindow(page);
      await screenshot(page, 'console-subscription-actions.png');

      // A paused subscription offers Resume, with its own heading.
      await page.goto(`${baseUrl}/console/subscriptions/${ids.paused}`);
      await expect(page.getByRole('heading', { level: 3, name: 'Resume', exact: true }).count()).resolves.toBe(1);
      await expect(page.getByRole('heading', { level: 3, name: 'Pause', exact: true }).count()).resolves.toBe(0);
    } finally {
      await context.close();
    }
  });

  it('on the Payment page Refund and Record external refund have headings and the destructive style', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/payments/${ids.paymentId}`);
      for (const name of ['Refund', 'Record external refund']) {
        await expect(page.getByRole('heading', { level: 3, name, exact: true }).count(), name).resolves.toBe(1);
        expect(await page.getByRole('form', { name, exact: true }).getAttribute('class')).toBe('action danger');
      }
      // The refund box's hint names what remains (30,000 − 5,000 refunded outside the gateway), written as everywhere.
      await expect(page.getByRole('form', { name: 'Refund', exact: true }).locator('small').textContent()).resolves.toBe(
        'Won; leave empty for the rest (25,000 KRW)',
      );
      await expectAccessible(page);
      await expectFitsWindow(page);
      await screenshot(page, 'console-payment-actions.png');
    } finally {
      await context.close();
    }
  });
});

describe('a PAST_DUE subscription', () => {
  it('says why and when it is tried again', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/subscriptions/${ids.pastDue}`);
      const section = page.getByRole('region', { name: 'Why the payment is past due' });
      await expect(section.textContent()).resolves.toContain('LIMIT_EXCEEDED “over the card limit”');
      const retry = (await getSubscription(app, ids.pastDue)).nextChargeAt!;
      await expect(section.locator('#past-due-next').textContent()).resolves.toBe(`It is tried again on ${formatKst(retry)} (retry 1 of 3).`);
      await expectAccessible(page);
      await expectFitsWindow(page);
      await screenshot(page, 'console-subscription-past-due.png');
    } finally {
      await context.close();
    }
  });
});

describe('the Audit page', () => {
  it('is in the navigation, lists GET /admin/audit’s entries, filters by entity and actor, pages like the other lists', async () => {
    const { context, page } = await signedIn();
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Audit', exact: true }).click();
      await page.waitForURL(`${baseUrl}/console/audit`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Audit');
      const all = await adminGet<{ items: Entry[] }>(app, '/admin/audit?limit=100');
      expect(all.items.length).toBeGreaterThanOrEqual(5);
      await expect(auditRows(page)).resolves.toEqual(expected(all.items.slice(0, 20)));
      await expectAccessible(page);
      await expectFitsWindow(page);
      await screenshot(page, 'console-audit.png');

      // One entry in full: time in Korea time, operator, action in words, entity linked, reason, what changed.
      const [resume] = all.items.filter((e) => e.action === 'subscription.resume');
      const row = page.locator(`#audit > tbody > tr[data-id="${resume!.id}"]`);
      const cells = await row.locator(':scope > td').allInnerTexts();
      expect(cells[0]!.trim()).toBe(formatKst(resume!.at));
      expect(cells[1]!.trim()).toBe(`admin:${OPERATOR}`);
      expect(cells[2]!.replace(/\s+/g, ' ').trim()).toBe('Resumed subscription.resume');
      expect(cells[4]!.trim()).toBe('back home');
      expect(await row.getByRole('link', { name: `Subscription ${ids.active}` }).getAttribute('href')).toBe(`/console/subscriptions/${ids.active}`);
      const status = row.locator('table.changes tr', { has: page.locator('th code', { hasText: /^status$/ }) });
      await expect(status.locator('td').allTextContents()).resolves.toEqual(['PAUSED', 'ACTIVE']);

      // Filters: entity type and id, as the admin route filters them.
      await page.getByLabel('Entity type').selectOption('subscription');
      await page.getByLabel('Entity ID').fill(ids.active);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/entityId=/);
      const ofActive = await adminGet<{ items: Entry[] }>(app, `/admin/audit?entityType=subscription&entityId=${ids.active}`);
      expect(ofActive.items.map((e) => e.action)).toEqual(['subscription.resume', 'subscription.pause']);
      await expect(auditRows(page)).resolves.toEqual(expected(ofActive.items));
      await expect(page.getByLabel('Entity type').inputValue()).resolves.toBe('subscription');

      // By actor, two rows a page: the first page, the next one with the same filter, and no more.
      await page.goto(`${baseUrl}/console/audit?actor=admin:${OPERATOR}&limit=2`);
      const byActor = await adminGet<{ items: Entry[] }>(app, `/admin/audit?actor=admin:${OPERATOR}&limit=100`);
      expect(byActor.items.length).toBeGreaterThan(2);
      const shown: string[] = [...(await auditRows(page))];
      while ((await page.getByRole('link', { name: 'Next page' }).count()) > 0) {
        await page.getByRole('link', { name: 'Next page' }).click();
        await page.waitForURL(/cursor=/);
        expect(new URL(page.url()).searchParams.get('actor')).toBe(`admin:${OPERATOR}`);
        shown.push(...(await auditRows(page)));
      }
      expect(shown).toEqual(expected(byActor.items));
      await expect(page.getByRole('link', { name: 'First page' }).count()).resolves.toBe(1);

      // Nobody by that name: nothing, said in words.
      await page.goto(`${baseUrl}/console/audit?actor=admin:nobody`);
      await expect(page.locator('main').textContent()).resolves.toContain('No audit entry matches these filters.');
      // An entity type the admin route refuses is refused here too.
      const refused = await page.goto(`${baseUrl}/console/audit?entityType=invoice`);
      expect(refused?.status()).toBe(400);
    } finally {
      await context.close();
    }
  });

  it('the reconciliation page shows the refunds outside the gateway in its summary', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/reconciliation?from=2027-03-10&to=2027-03-10`);
      const cells = await page.locator('#summary tr[data-row="external-refunds"] td').allTextContents();
      expect(cells).toEqual(['', '', '1', '5,000 KRW', '-5,000 KRW']);
      await expectAccessible(page);
      await expectFitsWindow(page);
      await screenshot(page, 'console-reconciliation-summary.png');
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
