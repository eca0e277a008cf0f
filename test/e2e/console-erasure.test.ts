// The console's customer pages in a real browser (headless Chromium from Debian's `chromium` package, driven by
// playwright-core, as test/e2e/console-pages.test.ts): a customer found from the navigation's Customers page, the
// "Erase customer" box of the Subscription page leading to the confirmation page (what is erased and kept, what blocks
// it, in words), the erasure submitted with a reason and the customer's page under the pseudonym after it, the Audit
// and Erasures pages saying the erasure in words. In English and in Korean; every page is checked with axe-core, fits a
// phone's 360 px window, and asks nothing of another origin. Without Chromium these tests are skipped with a note;
// REQUIRE_BROWSER_TESTS=1 (CI) turns a missing Chromium into a failure.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { setClock, subscribe } from '../helpers/billing.ts';
import { browserTests, expectAccessible, signInToConsole } from '../helpers/browser.ts';

const OPERATOR = 'jimin';
const kst = (local: string) => new Date(`${local}+09:00`);
const PHONE = { width: 360, height: 740 };

let app: App;
let baseUrl: string;
let browser: Browser;
const requested: string[] = [];
/** The customers of the file: one erased in English, one in Korean, one left alone. */
const USERS = { en: 'erase-me-en-4821', ko: 'erase-me-ko-7310', kept: 'keep-me-5512' };
const subscriptions: Record<keyof typeof USERS, string> = { en: '', ko: '', kept: '' };

browserTests('console erasure browser tests', { env: { CLOCK: 'simulated', ADMIN_TOKENS: `${OPERATOR}:${TEST_ADMIN_TOKEN}` } }, async (run) => {
  ({ app, baseUrl, browser } = run);
  await setClock(app, kst('2026-11-03T10:00:00'));
  for (const key of Object.keys(USERS) as Array<keyof typeof USERS>) {
    subscriptions[key] = await subscribe(app, { userId: USERS[key], orderName: `Plan of ${key}`, amount: 9900 });
  }
});

const signedIn = (viewport = PHONE) => signInToConsole(browser, baseUrl, { viewport, requested });

/** The page is accessible (axe) and no wider than the phone's window: a wide table scrolls in its own box. */
async function expectGoodOnPhone(page: Page) {
  await expectAccessible(page);
  expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${page.url()} scrollWidth`).toBeLessThanOrEqual(PHONE.width);
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
const bodyText = (page: Page) => page.evaluate<string>('document.body.innerText');

describe('the Customer page', () => {
  it('is in the navigation; a userId finds the customer’s subscriptions and payments, linked to their pages', async () => {
    const { context, page } = await signedIn();
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Customers', exact: true }).click();
      await page.waitForURL(`${baseUrl}/console/customers`);
      await expect(heading(page)).resolves.toBe('Customer');
      await expectGoodOnPhone(page);
      await page.getByLabel('User ID').fill(USERS.kept);
      await page.getByRole('button', { name: 'Find' }).click();
      await page.waitForURL(/userId=keep-me-5512/);
      await expect(heading(page)).resolves.toBe(`Customer ${USERS.kept}`);
      await expect(page.getByRole('link', { name: 'Plan of kept' }).getAttribute('href')).resolves.toBe(`/console/subscriptions/${subscriptions.kept}`);
      expect(await page.locator('#customer-payments tbody tr').count()).toBe(1);
      await expectGoodOnPhone(page);
    } finally {
      await context.close();
    }
  });
});

describe('erasing a customer', () => {
  it('from the Subscription page: the confirmation lists what is erased, kept and blocking in words, refuses while a subscription is open, then erases', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/subscriptions/${subscriptions.en}`);
      await expectGoodOnPhone(page);
      await page.getByRole('button', { name: 'Review the erasure' }).click();
      await page.waitForURL(/\/console\/customers\/erasure\?userId=erase-me-en-4821$/);
      await expect(heading(page)).resolves.toBe(`Erase customer ${USERS.en}`);
      await expect(page.locator('#erasure-erased').textContent()).resolves.toContain('replaced by a pseudonym');
      await expect(page.locator('#erasure-kept').textContent()).resolves.toContain('Article 6 of the Act on the Consumer Protection in Electronic Commerce');
      // The open subscription blocks it, in words, linked to its page.
      const blocker = page.locator('#erasure-blockers li');
      await expect(blocker.count()).resolves.toBe(1);
      await expect(blocker.getByRole('link').textContent()).resolves.toBe('An open subscription (ACTIVE)');
      await expect(blocker.getByRole('link').getAttribute('href')).resolves.toBe(`/console/subscriptions/${subscriptions.en}`);
      await expectGoodOnPhone(page);

      // Refused while the subscription is open (the choice left at "Refuse"): the page again, 409, nothing changed.
      await page.getByLabel('Reason', { exact: true }).fill('customer asked by email (#4821)');
      const [refused] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Erase customer' }).click(),
      ]);
      expect(refused.status()).toBe(409);
      await page.waitForLoadState();
      await expect(page.getByRole('alert').textContent()).resolves.toContain('nothing was changed');
      await expectGoodOnPhone(page);

      // With the open subscription cancelled by the erasure: done, the customer's page under the pseudonym.
      await page.getByLabel('Cancel the open subscriptions now (cancel reason ERASED)').check();
      await page.getByLabel('Reason', { exact: true }).fill('customer asked by email (#4821)');
      await Promise.all([
        page.waitForURL(/\/console\/customers\?userId=erased_[a-z2-7]{20}&done=erase$/),
        page.getByRole('button', { name: 'Erase customer' }).click(),
      ]);
      const pseudonym = new URL(page.url()).searchParams.get('userId')!;
      await expect(page.getByRole('status').textContent()).resolves.toBe('The customer’s personal data was erased.');
      await expect(page.locator('#erased').textContent()).resolves.toContain('sealed until');
      await expect(page.getByRole('link', { name: 'Plan of en' }).getAttribute('href')).resolves.toBe(`/console/subscriptions/${subscriptions.en}`);
      expect(await bodyText(page)).not.toContain(USERS.en);
      await expectGoodOnPhone(page);

      // The old userId appears nowhere after: the subscription's page, the Erasures list, the Audit page.
      await page.goto(`${baseUrl}/console/subscriptions/${subscriptions.en}`);
      expect(await page.content()).not.toContain(USERS.en);
      await expect(page.locator('#subscription-status').textContent()).resolves.toContain('CANCELED');
      expect(await page.getByRole('button', { name: 'Review the erasure' }).count()).toBe(0);
      await page.getByRole('navigation').getByRole('link', { name: 'Erasures', exact: true }).click();
      await expect(heading(page)).resolves.toBe('Erasures');
      await expect(page.locator('#erasures tbody tr').first().textContent()).resolves.toContain(pseudonym);
      expect(await page.content()).not.toContain(USERS.en);
      await expectGoodOnPhone(page);
      await page.getByRole('link', { name: pseudonym }).click();
      await expect(heading(page)).resolves.toBe(`Erasure ${pseudonym}`);
      await expect(page.locator('#erasure-audit').textContent()).resolves.toContain('Customer’s personal data erased');
      await expectGoodOnPhone(page);
      await page.goto(`${baseUrl}/console/audit?entityType=erasure`);
      const row = page.locator('#audit tbody tr[data-action="customer.erasure"]');
      await expect(row.count()).resolves.toBe(1);
      await expect(row.locator('td.action').textContent()).resolves.toContain('Customer’s personal data erased');
      expect(await page.content()).not.toContain(USERS.en);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('in Korean: the Customer page, the confirmation with its blocker in words, and the result', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/customers?userId=${USERS.ko}`);
      await Promise.all([page.waitForURL(/userId=erase-me-ko-7310$/), page.getByRole('button', { name: '한국어' }).click()]);
      await page.waitForLoadState();
      await expect(heading(page)).resolves.toBe(`고객 ${USERS.ko}`);
      await expectGoodOnPhone(page);
      await page.getByRole('button', { name: '삭제 내용 확인' }).click();
      await page.waitForURL(/\/console\/customers\/erasure\?userId=/);
      await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ko');
      await expect(heading(page)).resolves.toBe(`고객 개인정보 삭제 ${USERS.ko}`);
      await expect(page.locator('#erasure-blockers li a').textContent()).resolves.toBe('해지되지 않은 구독 (이용 중 (ACTIVE))');
      await expectGoodOnPhone(page);

      await page.getByLabel('열린 구독을 지금 해지 (해지 사유 ERASED)').check();
      await page.getByLabel('사유', { exact: true }).fill('고객 요청 (상담 #7310)');
      await Promise.all([page.waitForURL(/done=erase$/), page.getByRole('button', { name: '고객 개인정보 삭제' }).click()]);
      await expect(page.getByRole('status').textContent()).resolves.toBe('고객의 개인정보를 삭제했습니다.');
      await expect(page.locator('#erased').textContent()).resolves.toContain('봉인되어 보관된 뒤 파기됩니다');
      expect(await bodyText(page)).not.toContain(USERS.ko);
      await expectGoodOnPhone(page);

      await page.goto(`${baseUrl}/console/erasures`);
      await expect(heading(page)).resolves.toBe('개인정보 삭제 기록');
      await expectGoodOnPhone(page);
      await page.goto(`${baseUrl}/console/audit?entityType=erasure`);
      await expect(page.locator('#audit tbody tr[data-action="customer.erasure"] td.action').first().textContent()).resolves.toContain('고객 개인정보 삭제');
      await expectAccessible(page);
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
