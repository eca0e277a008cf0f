// The operator console in a real browser (headless Chromium from Debian's `chromium` package, driven by
// playwright-core, as test/e2e/browser.test.ts): sign-in and sign-out, the session's limits, CSRF, and the pages'
// actions through the same services as the admin routes. Every page is checked with axe-core (injected from
// node_modules) and every request the pages make is recorded: none may leave the service's origin.
// Without Chromium these tests are skipped with a note; .ci/run sets REQUIRE_BROWSER_TESTS=1, which turns a missing
// Chromium into a failure, so CI always runs them.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders, startTestApp, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxFault, sandboxLedger } from '../helpers/checkout.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { browserTests, expectAccessible, expectFitsWindow, SKIPPED } from '../helpers/browser.ts';

const OPERATOR = 'alice';
const kst = (local: string) => new Date(`${local}+09:00`);
// The pictures of docs/console.md "Operator console": written into the directory CONSOLE_SCREENSHOTS names (`CONSOLE_SCREENSHOTS=docs` refreshes
// the committed ones); otherwise still taken, into a temporary directory removed after the run, so that a test run
// leaves no changed file behind.
const SCREENSHOT_DIR = process.env.CONSOLE_SCREENSHOTS ? path.resolve(process.env.CONSOLE_SCREENSHOTS) : undefined;
let screenshots: string;

let database: TestDatabase;
let app: App;
let baseUrl: string;
let browser: Browser;
/** Every URL any console page asked for, across the file: checked against the service's origins at the end. */
const requested: string[] = [];
const serviceOrigins = new Set<string>();

browserTests('console browser tests', { env: { CLOCK: 'simulated', ADMIN_TOKENS: `${OPERATOR}:${TEST_ADMIN_TOKEN}` } }, async (run) => {
  ({ database, app, baseUrl, browser } = run);
  serviceOrigins.add(baseUrl);
  screenshots = SCREENSHOT_DIR ?? mkdtempSync(path.join(tmpdir(), 'console-screenshots-'));
  await setClock(app, kst('2027-03-10T09:00:00'));
});
afterAll(() => {
  if (!SCREENSHOT_DIR && screenshots) rmSync(screenshots, { recursive: true, force: true });
});

async function newContext(options: { javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  context.on('request', (request) => requested.push(request.url()));
  return { context, page: await context.newPage() };
}

async function signIn(page: Page, token = TEST_ADMIN_TOKEN, base = baseUrl, next?: string) {
  await page.goto(`${base}/console/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  await page.getByLabel('Admin token').fill(token);
  // The form posts, and the answer (a redirect to the console, or the sign-in page with an error) replaces the page.
  await Promise.all([page.waitForEvent('framenavigated'), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.waitForLoadState();
}

/** A full-page PNG of the page as `name` in the screenshots' directory (see SCREENSHOT_DIR). */
async function screenshot(page: Page, name: string) {
  const file = path.join(screenshots, name);
  await page.screenshot({ path: file, fullPage: true });
  expect(statSync(file).size).toBeGreaterThan(1_000);
}

/** axe-core in the page: no serious or critical violation. */
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

/** A subscription whose second cycle's charge is booked by the gateway but answered with nothing: UNKNOWN. */
async function unknownPayment(userId: string) {
  const subscriptionId = await subscribe(app, { userId, amount: 12_900, orderName: 'Console plan' });
  const due = (await getSubscription(app, subscriptionId)).nextChargeAt!;
  await setClock(app, due);
  await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'timeout', holdMs: 100 });
  // Charged through the admin route (not a charging pass, which would charge the other tests' subscriptions too).
  const charged = await fetch(`${baseUrl}/admin/subscriptions/${subscriptionId}/charge`, {
    method: 'POST',
    headers: { ...adminHeaders, 'content-type': 'application/json', 'idempotency-key': `unknown-${userId}` },
    body: JSON.stringify({ reason: 'test setup' }),
  });
  expect(((await charged.json()) as { code?: string }).code).toBe('PAYMENT_OUTCOME_UNKNOWN');
  const payment = (await paymentsOf(app, subscriptionId)).find((p) => p.status === 'UNKNOWN')!;
  const booked = (await sandboxLedger(app)).find((entry) => entry.orderId === payment.orderId)!;
  return { subscriptionId, payment, transactionId: booked.transactionId };
}

/** A subscription with its first payment SUCCEEDED (the registration's initial charge). */
async function paidSubscription(userId: string, amount = 30_000) {
  const subscriptionId = await subscribe(app, { userId, amount, orderName: 'Refundable plan' });
  const payment = (await paymentsOf(app, subscriptionId)).find((p) => p.status === 'SUCCEEDED')!;
  expect(payment).toBeDefined();
  return { subscriptionId, payment };
}

async function auditOf(entityId: string) {
  const response = await fetch(`${baseUrl}/admin/audit?entityId=${entityId}`, { headers: adminHeaders });
  return ((await response.json()) as { items: Array<{ actor: string; action: string; reason?: string }> }).items;
}

async function readPayment(id: string) {
  return (await (await fetch(`${baseUrl}/admin/payments/${id}`, { headers: adminHeaders })).json()) as {
    status: string;
    transactionId?: string;
    canceledAmount: number;
  };
}

/** The payment's `refunds`, as the admin route shows them (oldest first). */
async function refundsOf(id: string) {
  const body = (await (await fetch(`${baseUrl}/admin/payments/${id}`, { headers: adminHeaders })).json()) as {
    refunds: Array<{ id: string; channel: string; amount: number; reference?: string; requestedAt: string }>;
  };
  return body.refunds;
}

/** The fields a rendered form would post, read from the page (hidden ones included). */
async function formFields(page: Page, action: string): Promise<Record<string, string>> {
  // The form's successful controls, as the browser would send them (checked radios only).
  type Control = { name: string; value: string; type: string; checked: boolean };
  return page.locator(`form[action="${action}"]`).evaluate((form) => {
    const controls = Array.from((form as unknown as { elements: ArrayLike<Control> }).elements);
    return Object.fromEntries(controls.filter((c) => c.name && (c.type !== 'radio' || c.checked)).map((c) => [c.name, c.value]));
  });
}

describe('Needs attention, Payment page and its actions', () => {
  it('lists settlement lines an operator must look at (with their transactionId, linking to Reconciliation) and disabled webhook endpoints', async () => {
    // A gateway approval we never recorded: UNMATCHED.
    const file = '거래번호,주문번호,거래구분,거래금액,거래일시\r\nT-CONSOLE-UNMATCHED-1,O-CONSOLE-1,승인,30000,20270309100000\r\n';
    const imported = await fetch(`${baseUrl}/admin/settlement-imports`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'text/csv', 'idempotency-key': 'console-import' },
      body: file,
    });
    expect(imported.status).toBe(201);
    const created = await fetch(`${baseUrl}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { ...apiHeaders, 'content-type': 'application/json', 'idempotency-key': 'console-endpoint' },
      body: JSON.stringify({ url: 'https://hooks.example.test/billing' }),
    });
    const endpoint = (await created.json()) as { id: string };
    const disabled = await fetch(`${baseUrl}/api/v1/webhook-endpoints/${endpoint.id}`, {
      method: 'PATCH',
      headers: { ...apiHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'DISABLED' }),
    });
    expect(disabled.status).toBe(200);

    const { context, page } = await newContext();
    try {
      await signIn(page);
      await page.waitForURL(`${baseUrl}/console`);
      const line = page.locator('#attention tr[data-kind="Settlement line"]');
      await expect(line.textContent()).resolves.toContain('T-CONSOLE-UNMATCHED-1');
      await expect(line.textContent()).resolves.toContain('UNMATCHED');
      expect(await line.getByRole('link').getAttribute('href')).toBe('/console/reconciliation?status=UNMATCHED');
      const hook = page.locator(`#attention tr[data-id="${endpoint.id}"]`);
      await expect(hook.textContent()).resolves.toContain('https://hooks.example.test/billing');
      await hook.getByRole('link').click();
      await page.waitForURL(`${baseUrl}/console/search?q=${endpoint.id}`);
      await expect(page.locator(`#hits tr[data-id="${endpoint.id}"]`).textContent()).resolves.toContain('DISABLED');
    } finally {
      await context.close();
    }
  });

  it('resolves an UNKNOWN payment from Needs attention: the row links to the payment, Resolve runs the admin service with the operator named', async () => {
    const { payment, transactionId, subscriptionId } = await unknownPayment('console-resolve');
    const { context, page } = await newContext();
    try {
      await signIn(page);
      await page.waitForURL(`${baseUrl}/console`);
      const row = page.locator(`#attention tr[data-id="${payment.id}"]`);
      await expect(row.textContent()).resolves.toContain('Outcome unknown');
      // The subscription under attention is listed too, with its own page.
      expect(await page.locator(`#attention tr[data-id="${subscriptionId}"] a`).getAttribute('href')).toBe(`/console/subscriptions/${subscriptionId}`);
      await screenshot(page, 'console-needs-attention.png');
      await expectAccessible(page);

      await row.getByRole('link').click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(`Payment ${payment.orderId}`);
      await expect(page.locator('#payment-status').textContent()).resolves.toBe('UNKNOWN');
      await screenshot(page, 'console-payment.png');
      await expectAccessible(page);

      const resolve = page.locator(`form[action="/console/payments/${payment.id}/resolve"]`);
      await resolve.getByLabel('Succeeded').check();
      await resolve.getByLabel('Transaction ID').fill(transactionId);
      await resolve.getByLabel('Reason').fill('approved in the gateway console');
      await resolve.getByRole('button', { name: 'Resolve' }).click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}?done=resolve`);
      await expect(page.locator('#payment-status').textContent()).resolves.toBe('SUCCEEDED');
      // The timeline shows the audit entry with the operator and the reason, newest first.
      const first = page.locator('#timeline tbody tr[data-source="audit"]').first();
      await expect(first.textContent()).resolves.toMatch(/payment\.resolve_succeeded[\s\S]*admin:alice[\s\S]*approved in the gateway console/);
      expect(await readPayment(payment.id)).toMatchObject({ status: 'SUCCEEDED', transactionId });
      expect((await auditOf(payment.id)).map((a) => [a.actor, a.action, a.reason])).toEqual([
        [`admin:${OPERATOR}`, 'payment.resolve_succeeded', 'approved in the gateway console'],
      ]);
      expect(await getSubscription(app, subscriptionId)).toMatchObject({ needsAttention: false });
      // Needs attention no longer lists it.
      await page.goto(`${baseUrl}/console`);
      expect(await page.locator(`#attention tr[data-id="${payment.id}"]`).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('Resolve as Succeeded without a Transaction ID is refused by the service, in words on the page; nothing changes', async () => {
    const { payment } = await unknownPayment('console-resolve-missing');
    const { context, page } = await newContext();
    try {
      await signIn(page, TEST_ADMIN_TOKEN, baseUrl, `/console/payments/${payment.id}`);
      const resolve = page.locator(`form[action="/console/payments/${payment.id}/resolve"]`);
      await resolve.getByLabel('Succeeded').check();
      await resolve.getByLabel('Reason').fill('forgot the id');
      await resolve.getByRole('button', { name: 'Resolve' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toContain('transactionId is required to resolve as SUCCEEDED');
      expect(await readPayment(payment.id)).toMatchObject({ status: 'UNKNOWN' });
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('refunds part of a payment, then the rest with Amount left empty; too much is refused in words', async () => {
    const { payment } = await paidSubscription('console-refund', 30_000);
    const paid = await readPayment(payment.id);
    const { context, page } = await newContext();
    try {
      await signIn(page, TEST_ADMIN_TOKEN, baseUrl, `/console/payments/${payment.id}`);
      const refund = () => page.locator(`form[action="/console/payments/${payment.id}/refund"]`);
      // Written as operators write amounts, with a thousands separator: the browser lets it through, the server reads it.
      await refund().getByLabel('Amount').fill('10,000');
      await refund().getByLabel('Reason').fill('customer asked for part back');
      await refund().getByRole('button', { name: 'Refund' }).click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}?done=refund`);
      expect(await readPayment(payment.id)).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 10_000 });
      // Amounts read alike everywhere on the page (src/modules/console/money.ts): the timeline's gateway attempts carry
      // the charge's 30,000 KRW and the refund's 10,000 KRW, and no amount is written without its separator.
      const attempts = (await page.locator('#timeline tbody tr[data-source="attempt"]').allTextContents()).join('\n');
      expect(attempts).toContain('· 30,000 KRW ·');
      expect(attempts).toContain('· 10,000 KRW ·');
      expect(await page.locator('body').textContent()).not.toMatch(/\d{4} KRW/);
      await expectFitsWindow(page);

      await refund().getByLabel('Amount').fill('25000');
      await refund().getByLabel('Reason').fill('too much');
      await refund().getByRole('button', { name: 'Refund' }).click();
      const alert = await page.getByRole('alert').textContent();
      expect(alert).toMatch(/HTTP 422/);
      expect(alert).toContain('At most 20,000 KRW can be refunded');
      expect(await readPayment(payment.id)).toMatchObject({ canceledAmount: 10_000 });

      await page.goto(`${baseUrl}/console/payments/${payment.id}`);
      await refund().getByLabel('Reason').fill('the rest');
      await refund().getByRole('button', { name: 'Refund' }).click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}?done=refund`);
      expect(await readPayment(payment.id)).toMatchObject({ status: 'CANCELED', canceledAmount: 30_000 });
      // The gateway booked two cancellations of the transaction: 10,000 and the remaining 20,000.
      const cancels = (await sandboxLedger(app)).filter((e) => e.type === 'CANCEL' && e.originalTransactionId === paid.transactionId);
      expect(cancels.map((e) => Math.abs(e.amount))).toEqual([10_000, 20_000]);
      expect((await auditOf(payment.id)).filter((a) => a.actor === `admin:${OPERATOR}`).map((a) => a.reason)).toEqual([
        'the rest',
        'customer asked for part back',
      ]);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('a double submit of one rendered form acts once, and the second answers like the first', async () => {
    const { payment } = await paidSubscription('console-double', 20_000);
    const { context, page } = await newContext();
    try {
      await signIn(page, TEST_ADMIN_TOKEN, baseUrl, `/console/payments/${payment.id}`);
      await page.locator(`form[action="/console/payments/${payment.id}/refund"]`).getByLabel('Amount').fill('5000');
      await page.locator(`form[action="/console/payments/${payment.id}/refund"]`).getByLabel('Reason').fill('double click');
      const fields = await formFields(page, `/console/payments/${payment.id}/refund`);
      expect(fields.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      const post = () => page.request.post(`${baseUrl}/console/payments/${payment.id}/refund`, { form: fields, maxRedirects: 0 });
      const first = await post();
      const second = await post();
      for (const response of [first, second]) {
        expect(response.status()).toBe(303);
        expect(response.headers().location).toBe(`/console/payments/${payment.id}?done=refund`);
      }
      expect(await readPayment(payment.id)).toMatchObject({ canceledAmount: 5_000 });
      expect((await auditOf(payment.id)).filter((a) => a.reason === 'double click')).toHaveLength(1);
      // A fresh rendering carries a new key: refunding again is a new action.
      await page.reload();
      expect((await formFields(page, `/console/payments/${payment.id}/refund`)).idempotencyKey).not.toBe(fields.idempotencyKey);
    } finally {
      await context.close();
    }
  });

  it('records a refund made outside the gateway: listed under Refunds as EXTERNAL, CANCELED when nothing remains, a resubmit acts once, too much is refused in words', async () => {
    const { payment } = await paidSubscription('console-external-refund', 30_000);
    const paid = await readPayment(payment.id);
    const action = `/console/payments/${payment.id}/external-refund`;
    const { context, page } = await newContext();
    try {
      await signIn(page, TEST_ADMIN_TOKEN, baseUrl, `/console/payments/${payment.id}`);
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}`);
      const form = () => page.locator(`form[action="${action}"]`);
      expect(await page.locator('#refunds').count()).toBe(0);
      await expectAccessible(page);

      await form().getByLabel('Amount').fill('10000');
      await form().getByLabel('Reason').fill('paid back by bank transfer');
      await form().getByLabel('Reference').fill('KB-2027-0310-001');
      await form().getByRole('button', { name: 'Record external refund' }).click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}?done=external-refund`);
      await expect(page.locator('#payment-status').textContent()).resolves.toBe('SUCCEEDED');
      const [recorded] = await refundsOf(payment.id);
      // The Refunds table shows it, its times in Korea time (UTC+9, no daylight saving).
      const koreaTime = (iso: string) => new Date(Date.parse(iso) + 9 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
      const row = page.locator(`#refunds tr[data-id="${recorded!.id}"]`);
      const cells = await row.locator('td').allTextContents();
      expect(cells.map((c) => c.trim())).toEqual([
        'EXTERNAL',
        'SUCCEEDED',
        '10,000 KRW',
        'paid back by bank transfer',
        'KB-2027-0310-001',
        koreaTime(recorded!.requestedAt),
        koreaTime(recorded!.requestedAt),
      ]);
      expect(await readPayment(payment.id)).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 10_000 });
      // No gateway call: the sandbox booked no cancellation of the transaction.
      expect((await sandboxLedger(app)).filter((e) => e.type === 'CANCEL' && e.originalTransactionId === paid.transactionId)).toEqual([]);
      const audit = page.locator('#timeline tbody tr[data-source="audit"]').first();
      await expect(audit.textContent()).resolves.toMatch(/payment\.refund_external[\s\S]*admin:alice[\s\S]*paid back by bank transfer/);

      // More than what remains (20,000): the service's 422, in words; nothing changes.
      await form().getByLabel('Amount').fill('25000');
      await form().getByLabel('Reason').fill('too much');
      await form().getByRole('button', { name: 'Record external refund' }).click();
      const alert = await page.getByRole('alert').textContent();
      expect(alert).toContain('At most 20,000 KRW can be refunded');
      expect(alert).toContain('HTTP 422');
      expect(alert).toContain('AMOUNT_EXCEEDS_REMAINING');
      expect(await readPayment(payment.id)).toMatchObject({ canceledAmount: 10_000 });

      // The rest, without a Reference: CANCELED. The same rendered form posted again acts once and answers alike.
      await page.goto(`${baseUrl}/console/payments/${payment.id}`);
      await form().getByLabel('Amount').fill('20000');
      await form().getByLabel('Reason').fill('the rest, by bank transfer');
      const fields = await formFields(page, action);
      await form().getByRole('button', { name: 'Record external refund' }).click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}?done=external-refund`);
      await expect(page.locator('#payment-status').textContent()).resolves.toBe('CANCELED');
      // Nothing remains: neither refund is offered any more.
      expect(await form().count()).toBe(0);
      expect(await page.locator(`form[action="/console/payments/${payment.id}/refund"]`).count()).toBe(0);
      const again = await page.request.post(`${baseUrl}${action}`, { form: fields, maxRedirects: 0 });
      expect(again.status()).toBe(303);
      expect(again.headers().location).toBe(`/console/payments/${payment.id}?done=external-refund`);
      expect(await readPayment(payment.id)).toMatchObject({ status: 'CANCELED', canceledAmount: 30_000 });
      const refunds = await refundsOf(payment.id);
      // Both were recorded at the same instant of the test's clock: their order is not asserted.
      expect(refunds.map((r) => [r.channel, r.amount, r.reference]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
        ['EXTERNAL', 10_000, 'KB-2027-0310-001'],
        ['EXTERNAL', 20_000, undefined],
      ]);
      expect((await auditOf(payment.id)).map((a) => [a.actor, a.action, a.reason])).toEqual([
        [`admin:${OPERATOR}`, 'payment.refund_external', 'the rest, by bank transfer'],
        [`admin:${OPERATOR}`, 'payment.refund_external', 'paid back by bank transfer'],
      ]);
      expect(await page.locator('#refunds tbody tr[data-channel="EXTERNAL"]').count()).toBe(2);
      await expectFitsWindow(page);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('settles a refund whose outcome is unknown: listed under Needs attention, Settle refund as Succeeded', async () => {
    const { payment } = await paidSubscription('console-refund-unknown', 20_000);
    // The cancellation is booked by the gateway, then the answer is lost: the refund's outcome is unknown.
    await sandboxFault(app, { operation: 'CANCEL', kind: 'timeout', holdMs: 100 });
    const refund = await fetch(`${baseUrl}/admin/payments/${payment.id}/cancel`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json', 'idempotency-key': 'console-refund-unknown' },
      body: JSON.stringify({ reason: 'test setup' }),
    });
    expect(((await refund.json()) as { code?: string }).code).toBe('PAYMENT_OUTCOME_UNKNOWN');
    const { context, page } = await newContext();
    try {
      await signIn(page);
      await page.waitForURL(`${baseUrl}/console`);
      const row = page.locator(`#attention tr[data-id="${payment.id}"]`);
      await expect(row.textContent()).resolves.toContain('Refund outcome unknown');
      await row.getByRole('link').click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}`);
      // No second refund is offered while the first one's outcome is unknown.
      expect(await page.locator(`form[action="/console/payments/${payment.id}/refund"]`).count()).toBe(0);
      const settle = page.locator(`form[action="/console/payments/${payment.id}/refund-outcome"]`);
      await settle.getByLabel('Succeeded').check();
      await settle.getByLabel('Reason').fill('cancellation shown in the gateway console');
      await settle.getByRole('button', { name: 'Settle refund' }).click();
      await page.waitForURL(`${baseUrl}/console/payments/${payment.id}?done=refund-outcome`);
      await expect(page.locator('#payment-status').textContent()).resolves.toBe('CANCELED');
      expect(await readPayment(payment.id)).toMatchObject({ status: 'CANCELED', canceledAmount: 20_000 });
      expect((await auditOf(payment.id)).map((a) => [a.actor, a.reason])).toContainEqual([`admin:${OPERATOR}`, 'cancellation shown in the gateway console']);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('refuses a form without the CSRF token of this browser: 403 in words, nothing done', async () => {
    const { payment } = await paidSubscription('console-csrf', 20_000);
    const { context, page } = await newContext();
    try {
      await signIn(page, TEST_ADMIN_TOKEN, baseUrl, `/console/payments/${payment.id}`);
      const form = page.locator(`form[action="/console/payments/${payment.id}/refund"]`);
      await form.locator('input[name="_csrf"]').evaluate((input) => {
        (input as unknown as { value: string }).value = 'forged-token';
      });
      await form.getByLabel('Reason').fill('forged');
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        form.getByRole('button', { name: 'Refund' }).click(),
      ]);
      expect(response.status()).toBe(403);
      await expect(page.getByRole('alert').textContent()).resolves.toContain('This form is no longer valid');
      expect(await readPayment(payment.id)).toMatchObject({ canceledAmount: 0 });
      expect(await auditOf(payment.id)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('Subscription page and search', () => {
  it('search finds a payment by orderId and transactionId, and subscriptions by userId; the Subscription page pauses and resumes', async () => {
    const { subscriptionId, payment } = await paidSubscription('console-search-user', 15_000);
    const paid = await readPayment(payment.id);
    const { context, page } = await newContext();
    try {
      await signIn(page);
      await page.waitForURL(`${baseUrl}/console`);
      for (const q of [payment.orderId, paid.transactionId!]) {
        await page.getByLabel('Search').fill(q);
        await page.getByRole('button', { name: 'Search' }).click();
        await page.waitForURL(`${baseUrl}/console/search?q=**`);
        expect(await page.locator(`#hits tr[data-kind="Payment"][data-id="${payment.id}"]`).count()).toBe(1);
      }
      await page.getByLabel('Search').fill('console-search-user');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(`${baseUrl}/console/search?q=console-search-user`);
      await expectAccessible(page);
      await page.locator(`#hits tr[data-id="${subscriptionId}"]`).getByRole('link').click();
      await page.waitForURL(`${baseUrl}/console/subscriptions/${subscriptionId}`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Subscription Refundable plan');
      await expect(page.locator('#subscription-status').textContent()).resolves.toContain('ACTIVE');
      expect(await page.locator(`#payments a[href="/console/payments/${payment.id}"]`).count()).toBe(1);
      await expectAccessible(page);

      const pause = page.locator(`form[action="/console/subscriptions/${subscriptionId}/pause"]`);
      await pause.getByLabel('Reason').fill('customer on holiday');
      await pause.getByRole('button', { name: 'Pause' }).click();
      await page.waitForURL(`${baseUrl}/console/subscriptions/${subscriptionId}?done=pause`);
      await expect(page.locator('#subscription-status').textContent()).resolves.toContain('PAUSED');
      const resume = page.locator(`form[action="/console/subscriptions/${subscriptionId}/resume"]`);
      await resume.getByLabel('Reason').fill('back home');
      await resume.getByRole('button', { name: 'Resume' }).click();
      await page.waitForURL(`${baseUrl}/console/subscriptions/${subscriptionId}?done=resume`);
      await expect(page.locator('#subscription-status').textContent()).resolves.toContain('ACTIVE');
      const audit = page.locator('#timeline tbody tr[data-source="audit"]');
      await expect(audit.nth(0).textContent()).resolves.toContain('back home');
      await expect(audit.nth(1).textContent()).resolves.toContain('customer on holiday');
      await expectFitsWindow(page);
      expect((await auditOf(subscriptionId)).map((a) => [a.actor, a.reason])).toEqual([
        [`admin:${OPERATOR}`, 'back home'],
        [`admin:${OPERATOR}`, 'customer on holiday'],
      ]);
      // A Reason is required: the browser refuses an empty one (and the server, when sent anyway, 400).
      expect(await page.locator(`form[action="/console/subscriptions/${subscriptionId}/pause"] input[name="reason"]`).getAttribute('required')).toBe('');
    } finally {
      await context.close();
    }
  });
});

describe('with JavaScript off', () => {
  it('Charge now is refused in words when nothing is due, and Cancel at the end of the period works: plain forms', async () => {
    const { subscriptionId } = await paidSubscription('console-no-js', 9_900);
    const { context, page } = await newContext({ javaScriptEnabled: false });
    try {
      await signIn(page, TEST_ADMIN_TOKEN, baseUrl, `/console/subscriptions/${subscriptionId}`);
      await page.waitForURL(`${baseUrl}/console/subscriptions/${subscriptionId}`);
      const charge = page.locator(`form[action="/console/subscriptions/${subscriptionId}/charge"]`);
      await charge.getByLabel('Reason').fill('customer asked to pay early');
      await charge.getByRole('button', { name: 'Charge now' }).click();
      const alert = await page.getByRole('alert').textContent();
      expect(alert).toMatch(/HTTP 4\d\d/);
      expect(alert).toMatch(/[A-Z_]{5,}/);
      expect((await paymentsOf(app, subscriptionId)).map((p) => p.kind)).toEqual(['INITIAL']);

      await page.goto(`${baseUrl}/console/subscriptions/${subscriptionId}`);
      const cancel = page.locator(`form[action="/console/subscriptions/${subscriptionId}/cancel"]`);
      await cancel.getByLabel('At the end of the period').check();
      await cancel.getByLabel('Reason').fill('customer is moving abroad');
      await cancel.getByRole('button', { name: 'Cancel subscription', exact: true }).click();
      await page.waitForURL(`${baseUrl}/console/subscriptions/${subscriptionId}?done=cancel`);
      await expect(page.locator('#subscription-status').textContent()).resolves.toContain('cancels at the end of the period');
      expect(await getSubscription(app, subscriptionId)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true });
      expect((await auditOf(subscriptionId)).map((a) => [a.actor, a.action, a.reason])).toEqual([
        [`admin:${OPERATOR}`, 'subscription.cancel_at_period_end', 'customer is moving abroad'],
      ]);
    } finally {
      await context.close();
    }
  });
});

describe('session limits', () => {
  let short: { app: App; baseUrl: string };
  beforeAll(async () => {
    if (SKIPPED) return;
    short = await startTestApp(database.url, { env: { CONSOLE_SESSION_TTL: '2s', RATE_LIMIT_AUTH_FAILURES: '3' } });
    serviceOrigins.add(short.baseUrl);
  });
  afterAll(async () => {
    await short?.app.close();
  });

  it('a session ends after CONSOLE_SESSION_TTL of real time: the server refuses it and asks for sign-in again', async () => {
    const { context, page } = await newContext();
    try {
      await signIn(page, TEST_ADMIN_TOKEN, short.baseUrl);
      await page.waitForURL(`${short.baseUrl}/console`);
      await page.waitForTimeout(2_300);
      await page.goto(`${short.baseUrl}/console`);
      expect(new URL(page.url()).pathname).toBe('/console/login');
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    } finally {
      await context.close();
    }
  });

  it('past RATE_LIMIT_AUTH_FAILURES wrong tokens the address is answered 429, even with the right token', async () => {
    const { context, page } = await newContext();
    try {
      for (let i = 0; i < 3; i += 1) {
        await signIn(page, `wrong_token_${i}_0123456789abcdef`, short.baseUrl);
        await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');
      }
      const refused = await page.goto(`${short.baseUrl}/console/login`);
      expect(refused?.status()).toBe(429);
      const direct = await fetch(`${short.baseUrl}/console/login`);
      expect(direct.status).toBe(429);
    } finally {
      await context.close();
    }
  });
});

describe('the pages make no request outside the service', () => {
  it('every request of every page went to the service’s origin', () => {
    expect(requested.length).toBeGreaterThan(20);
    expect(requested.filter((url) => !serviceOrigins.has(new URL(url).origin))).toEqual([]);
  });
});
