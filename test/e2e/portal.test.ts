// The customer portal in a real browser (headless Chromium from Debian's `chromium` package, driven by playwright-core,
// as test/e2e/console.test.ts), at a phone's width (360 px): a merchant's link opens the overview in Korean (and in
// English by the switch); leaving takes two clicks from the overview and one from a flow=cancel link, and no charge
// follows; a scheduled cancellation is undone; a withdrawal on day 3 refunds at the gateway; a price increase is
// agreed to or declined, a trial's conversion agreed to; a PAST_DUE card is replaced through the sandbox's window and
// the owed cycle is charged once; everything works with JavaScript off. Withdrawal is refused after use and on day 8
// (the reason said, a direct POST 409 in words); a MOBILE withdrawal across a Korean month boundary leaves the refund
// owed by the merchant until an operator records it; the next charges at the sandbox follow an agreement and a
// refusal; a trial's conversion is offered only within 30 days of its end; another customer's subscription is a 404, a
// POST without CSRF is refused and a form sent twice acts once; an ended session says so. Every page is checked with
// axe-core in both languages, fits 360 px, and no request leaves the service's origin.
// The pictures of docs/portal.md "Customer portal": written into the directory PORTAL_SCREENSHOTS names
// (`PORTAL_SCREENSHOTS=docs` refreshes the committed ones); otherwise taken into a temporary directory removed after.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { ko } from '../../src/modules/i18n/catalog.ko.ts';
import { apiHeaders, startTestApp } from '../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxFault, sandboxLedger } from '../helpers/checkout.ts';
import { browserTests, expectAccessible } from '../helpers/browser.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const PHONE = { width: 360, height: 780 };
const SHOP = 'https://shop.example';
const SCREENSHOT_DIR = process.env.PORTAL_SCREENSHOTS ? path.resolve(process.env.PORTAL_SCREENSHOTS) : undefined;
let screenshots: string;

let app: App;
let baseUrl: string;
let databaseUrl: string;
let browser: Browser;
/** Every URL any portal page asked for, across the file: checked against the service's origin at the end. */
const requested: string[] = [];

browserTests('portal browser tests', { env: { CLOCK: 'simulated', PORTAL_RETURN_ORIGINS: SHOP } }, async (run) => {
  ({ app, baseUrl, browser } = run);
  databaseUrl = run.database.url;
  screenshots = SCREENSHOT_DIR ?? mkdtempSync(path.join(tmpdir(), 'portal-screenshots-'));
  await setClock(app, kst('2027-03-10T09:00:00'));
});
afterAll(() => {
  if (!SCREENSHOT_DIR && screenshots) rmSync(screenshots, { recursive: true, force: true });
});

/** A portal link from the merchant API (the merchant's server side). */
async function portalLink(body: Record<string, unknown>): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/v1/portal-sessions', headers: apiHeaders, payload: body });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { url: string }).url;
}

/** A phone-sized browser that opened a portal link (the merchant redirected it there). */
async function opened(body: Record<string, unknown>, options: { javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: PHONE, ...options });
  context.on('request', (request) => requested.push(request.url()));
  const page = await context.newPage();
  await page.goto(await portalLink(body));
  return { context, page };
}

/** The page fits a 360 px wide phone: nothing pushes it sideways. */
async function expectFitsPhone(page: Page) {
  expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${page.url()} scrollWidth`).toBeLessThanOrEqual(PHONE.width);
}

/** A full-page PNG of the page as `name` in the screenshots' directory. */
async function screenshot(page: Page, name: string) {
  const file = path.join(screenshots, name);
  await page.screenshot({ path: file, fullPage: true });
  expect(statSync(file).size).toBeGreaterThan(1_000);
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

/** Clicks and waits for the page it leads to. */
async function clickTo(page: Page, name: string | RegExp, role: 'button' | 'link' = 'button') {
  await Promise.all([page.waitForEvent('framenavigated'), page.getByRole(role, { name, exact: typeof name === 'string' }).click()]);
  await page.waitForLoadState();
}

const charges = async () => (await sandboxLedger(app)).filter((e) => e.type === 'CHARGE');
const DAY = 24 * 3600_000;

/** What the sandbox charged for the subscription's latest payment (each attempt's amount). */
async function latestCharged(subscriptionId: string): Promise<number[]> {
  const latest = (await paymentsOf(app, subscriptionId)).at(-1)!;
  const orderIds = new Set(latest.attempts!.map((a) => a.orderId));
  return (await charges()).filter((c) => c.orderId !== undefined && orderIds.has(c.orderId)).map((c) => c.amount);
}

/**
 * A POST of the page's form fields to `action` without its button (a crafted request, as a stale page or another tab
 * would send): the page's own CSRF token and a new idempotency key, through a form the test builds in the page (by
 * the DevTools protocol, so the page's CSP stays in force). Answers the response's status once its page is loaded.
 */
async function postDirectly(
  page: Page,
  action: string,
  options: { withoutCsrf?: boolean; idempotencyKey?: string; fields?: Record<string, string> } = {},
): Promise<number> {
  const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
  const fields = { ...(options.withoutCsrf ? {} : { _csrf: csrf }), idempotencyKey: options.idempotencyKey ?? randomUUID(), ...options.fields };
  const script = `(() => {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = ${JSON.stringify(action)};
    for (const [name, value] of Object.entries(${JSON.stringify(fields)})) {
      const input = document.createElement('input');
      input.type = 'hidden'; input.name = name; input.value = value;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
  })()`;
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${baseUrl}${action}` && r.request().method() === 'POST'),
    page.waitForEvent('framenavigated'),
    page.evaluate(script),
  ]);
  await page.waitForLoadState();
  return response.status();
}

describe('payment method', () => {
  it('replaces a PAST_DUE card through the sandbox’s window, returns to the portal, and the owed cycle is charged once', async () => {
    // First in the file, while this is the only subscription: the sandbox's decline lands on its charge.
    await setClock(app, kst('2027-01-05T10:00:00'));
    const id = await subscribe(app, { userId: 'card-user', amount: 9900 });
    const due = new Date((await getSubscription(app, id)).nextChargeAt!);
    await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_EXPIRED' });
    await setClock(app, due);
    expect(await runPass(app)).toMatchObject({ declined: 1 });
    expect(await getSubscription(app, id)).toMatchObject({ status: 'PAST_DUE' });
    const { context, page } = await opened({ userId: 'card-user', flow: 'payment_method', subscriptionId: id });
    try {
      await clickTo(page, '결제수단 변경');
      expect(page.url()).toContain(`${baseUrl}/sandbox/window?`);
      await Promise.all([page.waitForURL(`${baseUrl}/portal/subscriptions/${id}/payment-method/result?**`), page.click('#approve')]);
      expect(await heading(page)).toBe('결제수단 변경');
      expect(await page.textContent('main')).toContain('결제수단이 변경되었습니다.');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-payment-method.png');

      const before = (await charges()).length;
      expect(await runPass(app)).toMatchObject({ succeeded: 1 });
      expect(await runPass(app)).toMatchObject({ succeeded: 0 });
      expect((await charges()).length).toBe(before + 1);
      const cycle1 = (await paymentsOf(app, id)).filter((p) => p.cycle === 1);
      expect(cycle1.map((p) => p.status)).toEqual(['SUCCEEDED']);
      expect(await getSubscription(app, id)).toMatchObject({ status: 'ACTIVE' });
    } finally {
      await context.close();
    }
  });
});

describe('overview', () => {
  it('opens in Korean with each subscription and payment, switches to English in the session, and passes axe in both at 360 px', async () => {
    await setClock(app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(app, { userId: 'overview-user', amount: 9900, orderName: '프리미엄 월간 구독' });
    await subscribe(app, { userId: 'overview-user', amount: 29000, orderName: '팀 연간 구독', interval: { unit: 'year', count: 1 } });
    const { context, page } = await opened({ userId: 'overview-user', returnUrl: `${SHOP}/account` });
    try {
      expect(page.url()).toBe(`${baseUrl}/portal`);
      expect(await heading(page)).toBe('구독 관리');
      expect(await page.getAttribute('html', 'lang')).toBe('ko');
      const text = (await page.textContent('main'))!;
      for (const words of ['프리미엄 월간 구독', '9,900원', '매월', '팀 연간 구독', '29,000원', '매년', '이용 중', '결제 완료', '결제 내역 다운로드 (CSV)'])
        expect(text).toContain(words);
      // The next charge's Korea date.
      expect(text).toContain('2027년 4월 10일');
      expect(await page.getByRole('link', { name: '이전 사이트로 돌아가기' }).getAttribute('href')).toBe(`${SHOP}/account`);
      const [cookie] = (await context.cookies()).filter((c) => c.name === 'portal_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal' });
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-overview.png');

      await clickTo(page, 'English');
      expect(await heading(page)).toBe('Your subscriptions');
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      expect(await page.textContent('main')).toContain('9,900 KRW');
      await expectAccessible(page);
      await expectFitsPhone(page);
      // Kept in the session: the next page is English too.
      await page.goto(`${baseUrl}/portal/subscriptions/${id}`);
      expect(await heading(page)).toBe('Subscription');
      await expectAccessible(page);
      await clickTo(page, '한국어');
      expect(await heading(page)).toBe('구독 정보');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-subscription.png');
    } finally {
      await context.close();
    }
  });

  it('a link opened twice is a 410 page in its language that names nobody (axe in both languages)', async () => {
    await subscribe(app, { userId: 'twice-user', amount: 9900 });
    const url = await portalLink({ userId: 'twice-user' });
    const context = await browser.newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(url);
      expect(await heading(page)).toBe('구독 관리');
      const again = await page.goto(url);
      expect(again!.status()).toBe(410);
      expect(await heading(page)).toBe('사용할 수 없는 링크입니다');
      expect(await page.textContent('main')).not.toContain('twice-user');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-link-used.png');
      await clickTo(page, 'English', 'link');
      expect(await heading(page)).toBe('This link cannot be used');
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });
});

describe('leaving', () => {
  it('cancels in two clicks from the overview; after the period ends a charging pass charges nothing', async () => {
    await setClock(app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(app, { userId: 'leaving-user', amount: 12900, orderName: '베이직 월간' });
    const { context, page } = await opened({ userId: 'leaving-user' });
    try {
      await clickTo(page, '구독 해지', 'link');
      expect(await heading(page)).toBe('구독 해지');
      expect(await page.textContent('main')).toContain('2027년 4월 10일까지 지금처럼 이용하실 수 있고');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-cancel.png');
      await clickTo(page, '해지 확인');
      expect(page.url()).toBe(`${baseUrl}/portal?done=canceled`);
      expect(await page.textContent('main')).toContain('2027년 4월 10일에 해지됩니다');
      expect(await getSubscription(app, id)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true });
      await expectAccessible(page);

      // Other customers' subscriptions are due too: this one is not charged (no payment, so no gateway call, after the
      // first; docs/architecture.md, invariant 1: every call is written before it is made), and it ends.
      await setClock(app, kst('2027-04-10T12:00:00'));
      await runPass(app);
      expect(await getSubscription(app, id)).toMatchObject({ status: 'CANCELED' });
      const [first, ...later] = await paymentsOf(app, id);
      expect(later).toEqual([]);
      const orderIds = new Set(first!.attempts!.map((a) => a.orderId));
      expect((await charges()).filter((c) => c.orderId !== undefined && orderIds.has(c.orderId))).toHaveLength(1);
    } finally {
      await context.close();
    }
  });

  it('cancels in one click from a flow=cancel link, and "Keep subscription" undoes it (English)', async () => {
    await setClock(app, kst('2027-05-02T09:00:00'));
    const id = await subscribe(app, { userId: 'flow-user', amount: 9900 });
    const { context, page } = await opened({ userId: 'flow-user', flow: 'cancel', subscriptionId: id, locale: 'en' });
    try {
      expect(page.url()).toBe(`${baseUrl}/portal/subscriptions/${id}/cancel`);
      expect(await heading(page)).toBe('Cancel subscription');
      await expectAccessible(page);
      await page.getByLabel('Reason (optional)').fill('too expensive');
      await clickTo(page, 'Confirm cancellation');
      expect(await getSubscription(app, id)).toMatchObject({ cancelAtPeriodEnd: true });
      expect(await page.textContent('main')).toContain('Cancels on 2027-06-02');
      await clickTo(page, 'Keep subscription');
      expect(await page.textContent('main')).toContain('The cancellation is undone');
      expect(await getSubscription(app, id)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: false });
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('withdraws on day 3: cancelled now and the payment refunded in full at the gateway', async () => {
    await setClock(app, kst('2027-06-01T10:00:00'));
    const id = await subscribe(app, { userId: 'withdraw-user', amount: 15000, orderName: '온라인 강의' });
    await setClock(app, kst('2027-06-04T10:00:00'));
    const { context, page } = await opened({ userId: 'withdraw-user', flow: 'cancel', subscriptionId: id });
    try {
      const text = await page.textContent('main');
      expect(text).toContain('결제하신 15,000원 전액이 환불됩니다');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-withdrawal.png');
      await clickTo(page, '청약철회 (전액 환불)');
      expect(await page.textContent('main')).toContain('청약철회가 처리되었습니다');
      expect(await getSubscription(app, id)).toMatchObject({ status: 'CANCELED', cancelReason: 'WITHDRAWN' });
      const [payment] = await paymentsOf(app, id);
      expect(payment).toMatchObject({ status: 'CANCELED' });
      const refunds = (await sandboxLedger(app)).filter((e) => e.type === 'CANCEL' && e.originalTransactionId === payment!.transactionId);
      expect(refunds.map((r) => r.amount)).toEqual([15000]);
    } finally {
      await context.close();
    }
  });
});

describe('consent', () => {
  it('agrees to a price increase and declines another; agrees to a trial’s conversion', async () => {
    await setClock(app, kst('2027-07-01T10:00:00'));
    const agreed = await subscribe(app, { userId: 'consent-user', amount: 9900, orderName: '프로 월간' });
    const declined = await subscribe(app, { userId: 'consent-user', amount: 4900, orderName: '라이트 월간' });
    const trial = await subscribe(app, { userId: 'consent-user', amount: 7900, orderName: '체험 구독', trialDays: 14 });
    // Asked and agreed to within the 30 × 24 hours before the next charge (August 1st), so that the consent counts
    // there (docs/architecture.md, invariant 13).
    await setClock(app, kst('2027-07-05T10:00:00'));
    for (const [id, amount] of [
      [agreed, 12900],
      [declined, 5900],
    ] as const) {
      const changed = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/price-change`, headers: apiHeaders, payload: { amount } });
      expect(changed.statusCode, changed.body).toBe(200);
    }
    const { context, page } = await opened({ userId: 'consent-user', flow: 'consent', subscriptionId: agreed });
    try {
      expect(page.url()).toBe(`${baseUrl}/portal/subscriptions/${agreed}`);
      expect(await page.textContent('main')).toContain('요금이 9,900원에서 12,900원(으)로 바뀝니다. 동의하시면 2027년 8월 1일 결제부터');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-consent.png');
      await clickTo(page, '변경 금액에 동의');
      const after = await getSubscription(app, agreed);
      expect(after.consents.map((c) => c.kind)).toEqual(['PRICE_INCREASE']);
      // Agreed: the increase still waits for its charge, but nothing is asked again (the service would refuse it).
      const agreedCard = page.locator(`#sub-${agreed}`);
      expect(await agreedCard.textContent()).toContain(ko.portal.overview.priceIncreaseAgreed);
      expect(await agreedCard.getByRole('button', { name: '변경 금액에 동의' }).count()).toBe(0);
      expect(await agreedCard.getByRole('button', { name: '동의하지 않음' }).count()).toBe(0);

      await page.goto(`${baseUrl}/portal`);
      await Promise.all([page.waitForEvent('framenavigated'), page.locator(`#sub-${declined}`).getByRole('button', { name: '동의하지 않음' }).click()]);
      await page.waitForLoadState();
      expect(await page.textContent('main')).toContain('지금 금액으로 계속됩니다');
      expect(await getSubscription(app, declined)).toMatchObject({ amount: 4900 });
      expect((await getSubscription(app, declined)).pendingAmount).toBeUndefined();

      await Promise.all([page.waitForEvent('framenavigated'), page.locator(`#sub-${trial}`).getByRole('button', { name: '유료 전환에 동의' }).click()]);
      await page.waitForLoadState();
      expect((await getSubscription(app, trial)).consents.map((c) => c.kind)).toEqual(['TRIAL_CONVERSION']);
      expect(await page.locator(`#sub-${trial}`).getByRole('button', { name: '유료 전환에 동의' }).count()).toBe(0);
      await expectAccessible(page);

      // The next charges at the sandbox: the agreed one at the new amount, the declined one at the old.
      await setClock(app, kst('2027-08-01T12:00:00'));
      await runPass(app);
      expect(await latestCharged(agreed)).toEqual([12900]);
      expect(await latestCharged(declined)).toEqual([4900]);
    } finally {
      await context.close();
    }
  });

  it('offers a trial’s conversion only within 30 days of its end (the rule the service refuses by), and not again once agreed', async () => {
    await setClock(app, kst('2027-08-02T10:00:00'));
    const id = await subscribe(app, { userId: 'long-trial-user', amount: 7900, orderName: '긴 체험 구독', trialDays: 31 });
    const trialEnd = new Date((await getSubscription(app, id)).trialEnd!);
    await setClock(app, new Date(trialEnd.getTime() - 31 * DAY));
    const { context, page } = await opened({ userId: 'long-trial-user', flow: 'consent', subscriptionId: id });
    try {
      // 31 days from its end a consent would not count at its end: nothing offered, the end date said.
      expect(await page.getByRole('button', { name: '유료 전환에 동의' }).count()).toBe(0);
      expect(await page.textContent('main')).toContain('무료 체험 종료일');
      await setClock(app, new Date(trialEnd.getTime() - 29 * DAY));
      await page.reload();
      await clickTo(page, '유료 전환에 동의');
      expect(await page.textContent('main')).toContain(ko.portal.done.trialAgreed);
      expect(await page.getByRole('button', { name: '유료 전환에 동의' }).count()).toBe(0);
      expect((await getSubscription(app, id)).consents).toEqual([expect.objectContaining({ kind: 'TRIAL_CONVERSION', channel: 'PORTAL' })]);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });
});

describe('without JavaScript', () => {
  it('reads the overview, switches language and cancels in two clicks with plain forms', async () => {
    await setClock(app, kst('2027-09-01T10:00:00'));
    const id = await subscribe(app, { userId: 'nojs-user', amount: 9900 });
    const { context, page } = await opened({ userId: 'nojs-user' }, { javaScriptEnabled: false });
    try {
      expect(await heading(page)).toBe('구독 관리');
      await clickTo(page, 'English');
      expect(await heading(page)).toBe('Your subscriptions');
      await clickTo(page, 'Cancel subscription', 'link');
      await clickTo(page, 'Confirm cancellation');
      expect(await getSubscription(app, id)).toMatchObject({ cancelAtPeriodEnd: true });
      expect(await page.textContent('main')).toContain('Your cancellation is done.');
    } finally {
      await context.close();
    }
  });
});

describe('withdrawal refused', () => {
  /** The confirmation page offers no withdrawal and says `why`; a direct POST is 409 shown as the same sentence. */
  async function expectRefused(page: Page, id: string, why: string) {
    expect(await heading(page)).toBe('구독 해지');
    expect(await page.textContent('main')).toContain(why);
    expect(await page.getByRole('button', { name: '청약철회 (전액 환불)' }).count()).toBe(0);
    // Leaving itself is still offered.
    expect(await page.getByRole('button', { name: '해지 확인' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: '이전 사이트로 돌아가기' }).getAttribute('href')).toBe(`${SHOP}/account`);
    await expectAccessible(page);
    await expectFitsPhone(page);

    expect(await postDirectly(page, `/portal/subscriptions/${id}/withdraw`)).toBe(409);
    expect(await heading(page)).toBe(ko.portal.errors.heading);
    const text = (await page.textContent('main'))!;
    expect(text).toContain(why);
    expect(text).not.toContain('WITHDRAWAL_NOT_AVAILABLE');
    expect(await page.getByRole('link', { name: '이전 사이트로 돌아가기' }).getAttribute('href')).toBe(`${SHOP}/account`);
    await expectAccessible(page);
    expect(await getSubscription(app, id)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: false });
    const [payment] = await paymentsOf(app, id);
    expect(payment).toMatchObject({ status: 'SUCCEEDED' });
  }

  it('after the merchant recorded use, and on day 8: the option is not shown, the page says why, a direct POST is 409 in words', async () => {
    await setClock(app, kst('2027-10-01T10:00:00'));
    const late = await subscribe(app, { userId: 'refused-user', amount: 11000, orderName: '월간 뉴스레터' });
    const used = await subscribe(app, { userId: 'refused-user', amount: 8800, orderName: '전자책 구독' });
    await setClock(app, kst('2027-10-03T10:00:00'));
    const recorded = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${used}/usage`, headers: apiHeaders, payload: {} });
    expect(recorded.statusCode, recorded.body).toBe(200);
    const { context, page } = await opened({ userId: 'refused-user', flow: 'cancel', subscriptionId: used, returnUrl: `${SHOP}/account` });
    try {
      await expectRefused(page, used, ko.portal.cancel.withdrawalUSED);
      await screenshot(page, 'portal-withdrawal-refused.png');

      // Day 8 after the first payment (approved on October 1st): the 7 days have passed.
      await setClock(app, kst('2027-10-09T10:00:00'));
      await page.goto(`${baseUrl}/portal/subscriptions/${late}/cancel`);
      await expectRefused(page, late, ko.portal.cancel.withdrawalWINDOW_PASSED);
    } finally {
      await context.close();
    }
  });

  it('MOBILE across a Korean month boundary: cancelled now, the refund owed by the merchant (attention), cleared by an operator’s external refund', async () => {
    // Paid on October 31st (KST), withdrawn on November 2nd: within 7 days, but the gateway no longer cancels it.
    await setClock(app, kst('2027-10-31T10:00:00'));
    const id = await subscribe(app, { userId: 'mobile-withdraw-user', method: 'MOBILE', amount: 5500, itemCode: 'ITEM01', orderName: '모바일 요금제' });
    const [paid] = await paymentsOf(app, id);
    await setClock(app, kst('2027-11-02T10:00:00'));
    const { context, page } = await opened({ userId: 'mobile-withdraw-user', flow: 'cancel', subscriptionId: id });
    try {
      expect(await page.textContent('main')).toContain('결제하신 5,500원 전액이 환불됩니다');
      await clickTo(page, '청약철회 (전액 환불)');
      expect(page.url()).toBe(`${baseUrl}/portal?done=withdrawnRefundDue`);
      const text = (await page.textContent('main'))!;
      expect(text).toContain(ko.portal.done.withdrawnRefundDue);
      expect(text).toContain('청약철회 환불금 5,500원은(는) 판매자가 돌려드려야 할 금액입니다');
      expect(text).toContain(ko.words.attentionReason.WITHDRAWAL_REFUND_DUE);
      expect(text).not.toContain('WITHDRAWAL_REFUND_DUE');
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-withdrawal-refund-due.png');
      expect(await getSubscription(app, id)).toMatchObject({
        status: 'CANCELED',
        cancelReason: 'WITHDRAWN',
        needsAttention: true,
        attentionReason: 'WITHDRAWAL_REFUND_DUE',
        refundDue: 5500,
      });
      expect((await sandboxLedger(app)).filter((e) => e.type === 'CANCEL' && e.originalTransactionId === paid!.transactionId)).toEqual([]);

      // The operator refunds it outside the gateway and records it (the admin route): nothing is owed any more.
      const external = await app.inject({
        method: 'POST',
        url: `/admin/payments/${paid!.id}/refunds/external`,
        headers: { ...adminHeaders, 'idempotency-key': randomUUID() },
        payload: { amount: 5500, reason: '청약철회: 계좌 환불', reference: 'KB-1102' },
      });
      expect(external.statusCode, external.body).toBe(201);
      expect(await getSubscription(app, id)).toMatchObject({ status: 'CANCELED', needsAttention: false });
      await page.goto(`${baseUrl}/portal`);
      const after = (await page.textContent('main'))!;
      expect(after).not.toContain('판매자가 돌려드려야');
      expect(after).not.toContain(ko.words.attentionReason.WITHDRAWAL_REFUND_DUE);
      expect(after).toContain('5,500원 (환불 완료)');
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });
});

describe('whose it is, and forms', () => {
  it('user A cannot see or act on user B’s subscription (404 in words); a POST without its CSRF token is refused; a double submit acts once', async () => {
    await setClock(app, kst('2027-11-05T10:00:00'));
    const mine = await subscribe(app, { userId: 'user-a', amount: 9900, orderName: 'A의 구독' });
    const theirs = await subscribe(app, { userId: 'user-b', amount: 7700, orderName: 'B의 구독' });
    const { context, page } = await opened({ userId: 'user-a' });
    try {
      expect(await page.textContent('main')).not.toContain('B의 구독');
      const seen = await page.goto(`${baseUrl}/portal/subscriptions/${theirs}/cancel`);
      expect(seen!.status()).toBe(404);
      expect(await heading(page)).toBe(ko.portal.errors.notFoundHeading);
      expect(await page.textContent('main')).not.toContain('B의 구독');
      await expectAccessible(page);
      await screenshot(page, 'portal-not-found.png');
      expect(await postDirectly(page, `/portal/subscriptions/${theirs}/cancel`)).toBe(404);
      expect(await heading(page)).toBe(ko.portal.errors.notFoundHeading);
      expect(await getSubscription(app, theirs)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: false });

      await page.goto(`${baseUrl}/portal/subscriptions/${mine}/cancel`);
      expect(await postDirectly(page, `/portal/subscriptions/${mine}/cancel`, { withoutCsrf: true })).toBe(403);
      expect(await page.textContent('main')).toContain(ko.common.formExpired);
      expect(await getSubscription(app, mine)).toMatchObject({ cancelAtPeriodEnd: false });

      // The same form sent twice (a double tap arriving after the first answer, or a resubmission): one cancellation.
      // (Chromium itself sends a double-clicked form once, so the second is sent as the form's own fields.)
      await page.goto(`${baseUrl}/portal/subscriptions/${mine}/cancel`);
      const action = `/portal/subscriptions/${mine}/cancel`;
      const key = await page.locator(`form[action="${action}"] input[name="idempotencyKey"]`).inputValue();
      await clickTo(page, '해지 확인');
      expect(page.url()).toBe(`${baseUrl}/portal?done=canceled`);
      expect(await postDirectly(page, action, { idempotencyKey: key, fields: { reason: '' } })).toBe(303);
      expect(page.url()).toBe(`${baseUrl}/portal?done=canceled`);
      expect(await page.textContent('main')).toContain(ko.portal.done.canceled);
      expect(await getSubscription(app, mine)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true });
      expect(await app.db.auditEvent.count({ where: { entityId: mine, actor: 'customer:user-a' } })).toBe(1);
    } finally {
      await context.close();
    }
  });
});

describe('a session that ended', () => {
  it('after PORTAL_SESSION_TTL of real time its pages say so in words (both languages), naming nobody', async () => {
    await subscribe(app, { userId: 'short-session-user', amount: 9900 });
    // The same database served with a short session (real time, as the contract says).
    const short = await startTestApp(databaseUrl, { env: { PORTAL_SESSION_TTL: '2s' } });
    const context = await browser.newContext({ viewport: PHONE });
    try {
      const created = await short.app.inject({
        method: 'POST',
        url: '/api/v1/portal-sessions',
        headers: apiHeaders,
        payload: { userId: 'short-session-user' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const { id, url } = created.json() as { id: string; url: string };
      const page = await context.newPage();
      await page.goto(url);
      expect(await heading(page)).toBe('구독 관리');
      const { expiresAt } = await short.app.db.portalSession.findUniqueOrThrow({ where: { id } });
      // Waits on the condition (the real clock past the session's end), not a guessed time.
      while (Date.now() <= expiresAt!.getTime()) await sleep(Math.min(200, expiresAt!.getTime() - Date.now() + 1));
      const ended = await page.reload();
      expect(ended!.status()).toBe(401);
      expect(await heading(page)).toBe(ko.portal.errors.sessionEndedHeading);
      const text = (await page.textContent('main'))!;
      expect(text).toContain(ko.portal.errors.sessionEnded);
      expect(text).not.toContain('short-session-user');
      expect(await page.getByRole('button', { name: '해지 확인' }).count()).toBe(0);
      await expectAccessible(page);
      await expectFitsPhone(page);
      await screenshot(page, 'portal-session-ended.png');
      await clickTo(page, 'English', 'link');
      expect(await heading(page)).toBe('Your session has ended');
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      await expectAccessible(page);
    } finally {
      await context.close();
      await short.app.close();
    }
  });
});

describe('requests', () => {
  it('no portal page asked for anything outside the service', () => {
    const outside = requested.filter((url) => !url.startsWith(baseUrl) && !url.startsWith('data:'));
    expect(outside).toEqual([]);
  });
});
