// The whole development flow in a real browser (headless Chromium from Debian's `chromium` package, driven by
// playwright-core; .ci/run installs it): the merchant creates a registration, the customer opens the sandbox
// window, clicks Approve, is sent back to our success route and lands on the result page; the subscription is
// then visible through the merchant API.
// Without Chromium (a fresh machine) these tests are skipped with a note saying why; .ci/run sets
// REQUIRE_BROWSER_TESTS=1, which turns a missing Chromium into a failure, so CI always runs them.
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { browserTests } from '../helpers/browser.ts';

let baseUrl: string;
let browser: Browser;

browserTests('browser tests', {}, (run) => {
  ({ baseUrl, browser } = run);
});

async function register(body: Record<string, unknown>) {
  const response = await fetch(`${baseUrl}/api/v1/registrations`, {
    method: 'POST',
    headers: { ...apiHeaders, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; window: { url: string } };
}

describe('registration in a browser', () => {
  it.each([
    ['a 303 redirect (GET)', ''],
    ['a form POST', '&redirect=POST'],
  ])('Approve in the sandbox window returns to the result page by %s and the subscription exists', async (_name, suffix) => {
    const registration = await register({ userId: `browser-user${suffix ? '-post' : ''}`, method: 'CARD', amount: 12900, orderName: '브라우저 플랜' });
    const page = await browser.newPage();
    try {
      await page.goto(registration.window.url + suffix);
      expect(await page.locator('dd', { hasText: '12,900 KRW' }).count()).toBe(1);
      await Promise.all([page.waitForURL(`${baseUrl}/result?**`), page.click('#approve')]);
      await expect(page.locator('#outcome').getAttribute('data-status')).resolves.toBe('success');
      await expect(page.locator('#outcome').textContent()).resolves.toBe('All set');

      const landed = new URL(page.url());
      expect(landed.searchParams.get('registrationId')).toBe(registration.id);
      const subscriptionId = landed.searchParams.get('subscriptionId')!;
      const subscription = await (await fetch(`${baseUrl}/api/v1/subscriptions/${subscriptionId}`, { headers: apiHeaders })).json();
      expect(subscription).toMatchObject({ id: subscriptionId, status: 'ACTIVE', amount: 12900, orderName: '브라우저 플랜' });
    } finally {
      await page.close();
    }
  });

  it('Decline returns to the result page with a plain-words failure and no subscription', async () => {
    const registration = await register({ userId: 'browser-decline', method: 'CARD', amount: 5000, orderName: 'Plan' });
    const page = await browser.newPage();
    try {
      await page.goto(registration.window.url);
      await Promise.all([page.waitForURL(`${baseUrl}/result?**`), page.click('#decline')]);
      await expect(page.locator('#outcome').getAttribute('data-status')).resolves.toBe('failed');
      await expect(page.locator('body').textContent()).resolves.toContain('Nothing was charged');
      const fetched = (await (await fetch(`${baseUrl}/api/v1/registrations/${registration.id}`, { headers: apiHeaders })).json()) as {
        status: string;
        subscriptionId?: string;
      };
      expect(fetched).toMatchObject({ status: 'FAILED' });
      expect(fetched.subscriptionId).toBeUndefined();
    } finally {
      await page.close();
    }
  });
});
