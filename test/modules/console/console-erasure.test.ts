// The console's customer pages through their routes (no browser; test/e2e/console-erasure.test.ts drives them in
// Chromium): a customer found by their exact userId with their subscriptions, one-time orders and payments; the
// erasure's confirmation page with its blockers in words; a submit without a reason or with a blocker refused with a
// coded page and nothing changed; an erasure done through the admin route's service and idempotency record, the
// customer's page under the pseudonym after it without the old userId; the erasure audit entries in words on the Audit
// page.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { apiHeaders, TEST_ADMIN_TOKEN } from '../../helpers/app.ts';
import { adminHeaders, paymentsOf, subscribe } from '../../helpers/billing.ts';
import { decideWindow, follow } from '../../helpers/checkout.ts';
import { consoleCookie, formFields, textOf } from '../../helpers/console.ts';
import { createErasure } from '../../helpers/erasure.ts';
import { useRunningApp } from '../../helpers/database.ts';

const running = useRunningApp({ CLOCK: 'simulated', ADMIN_TOKENS: `ops:${TEST_ADMIN_TOKEN}` });

async function consoleGet(url: string, status = 200): Promise<string> {
  const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
  const response = await running.app.inject({ method: 'GET', url, headers: { cookie } });
  expect(response.statusCode, response.body).toBe(status);
  return response.body;
}

/** A paid one-time order of `userId` through the public flow; its order id (the record's, not the orderId). */
async function paidOrder(userId: string): Promise<{ id: string; orderId: string }> {
  const created = await running.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: apiHeaders,
    payload: { userId, method: 'CARD', amount: 3000, orderName: 'Once' },
  });
  expect(created.statusCode, created.body).toBe(201);
  await follow(running.app, (await decideWindow(running.app, created.json().window)).redirectUrl, { json: true });
  return created.json() as { id: string; orderId: string };
}

describe('the Customer page', () => {
  it('finds a customer by their exact userId and lists their subscriptions, one-time orders and payments, each linked to its page', async () => {
    const userId = `customer-${randomUUID()}`;
    const subscription = await subscribe(running.app, { userId, orderName: 'Monthly plan' });
    const order = await paidOrder(userId);
    await subscribe(running.app, { userId: `${userId}-other`, orderName: 'Somebody else' });
    const payments = await paymentsOf(running.app, subscription);
    const orderPayment = await running.app.db.payment.findFirstOrThrow({ where: { oneTimeOrderId: order.id }, select: { id: true } });

    const html = await consoleGet(`/console/customers?userId=${encodeURIComponent(userId)}`);
    expect(html).toContain(`<h1>Customer ${userId}</h1>`);
    expect(html).toContain('aria-current="page">Customers</a>');
    expect(textOf(html, 'customer-subscriptions')).toContain('Monthly plan');
    expect(html).toContain(`href="/console/subscriptions/${subscription}"`);
    expect(html).not.toContain('Somebody else');
    expect(textOf(html, 'customer-orders')).toContain(order.orderId);
    // Both payments, the subscription's first charge and the order's, linked to their pages (the order's also from its row).
    const linked = new Set(html.match(/href="\/console\/payments\/[0-9a-f-]{36}"/g));
    expect(linked).toEqual(new Set([payments[0]!.id, orderPayment.id].map((id) => `href="/console/payments/${id}"`)));
    // The way to erase them: a box leading to the confirmation page, which changes nothing by itself.
    expect(html).toContain('action="/console/customers/erasure"');
    expect(html).toContain(`name="userId" value="${userId}"`);

    // Only the exact userId: a prefix finds nobody, and says so.
    const prefix = await consoleGet(`/console/customers?userId=${encodeURIComponent(userId.slice(0, -2))}`);
    expect(textOf(prefix, 'nothing')).toBe(`No subscription, one-time order or payment carries the userId ${userId.slice(0, -2)}.`);
    expect(prefix).not.toContain('action="/console/customers/erasure"');
  });

  it('speaks Korean in a Korean session, and the Subscription page has the "Erase customer" box', async () => {
    const userId = `customer-ko-${randomUUID()}`;
    const subscription = await subscribe(running.app, { userId });
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const page = await running.app.inject({ method: 'GET', url: `/console/subscriptions/${subscription}`, headers: { cookie } });
    expect(page.body).toContain('<h3 id="erase-box-heading">Erase customer</h3>');
    expect(page.body).toContain(`name="userId" value="${userId}"`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const switched = await running.app.inject({
      method: 'POST',
      url: '/console/locale',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, locale: 'ko', back: '/console/customers' }).toString(),
    });
    expect(switched.statusCode).toBe(303);
    const html = (await running.app.inject({ method: 'GET', url: `/console/customers?userId=${encodeURIComponent(userId)}`, headers: { cookie } })).body;
    expect(html).toContain(`<h1>고객 ${userId}</h1>`);
    expect(html).toContain('<h3 id="erase-box-heading">고객 개인정보 삭제</h3>');
  });

  it('without a userId shows the search form only; the page needs a session', async () => {
    const html = await consoleGet('/console/customers');
    expect(html).toContain('<h1>Customer</h1>');
    expect(html).toContain('<label for="c-user">User ID</label>');
    const anonymous = await running.app.inject({ method: 'GET', url: '/console/customers?userId=x' });
    expect(anonymous.statusCode).toBe(303);
  });
});

describe('erasures on the Audit page', () => {
  it('says customer.erasure, erasure.identity_revealed and erasure.identity_purged in words, in English and Korean, linked to the erasure', async () => {
    // The three entries as the erasure, the identity route and the retention pass write them (entityType erasure, the
    // erasure's id), stored directly: this reads how the page says them, whichever writes them.
    const erasureId = randomUUID();
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 29, 1, minute));
    await running.app.db.auditEvent.createMany({
      data: [
        { actor: 'admin:test', action: 'customer.erasure', entityType: 'erasure', entityId: erasureId, reason: 'asked by email', createdAt: at(1) },
        {
          actor: 'admin:test',
          action: 'erasure.identity_revealed',
          entityType: 'erasure',
          entityId: erasureId,
          reason: 'tax office request',
          createdAt: at(2),
        },
        { actor: 'retention', action: 'erasure.identity_purged', entityType: 'erasure', entityId: erasureId, createdAt: at(3) },
      ],
    });
    const url = `/console/audit?entityType=erasure&entityId=${erasureId}`;
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const read = async () => (await running.app.inject({ method: 'GET', url, headers: { cookie } })).body;
    const actions = (html: string) =>
      [...html.matchAll(/data-action="([^"]+)">[\s\S]*?<td class="action">([^<]*)<br>/g)].map(([, action, words]) => [action, words]);

    let html = await read();
    expect(actions(html)).toEqual([
      ['erasure.identity_purged', 'Sealed identity destroyed'],
      ['erasure.identity_revealed', 'Sealed identity revealed'],
      ['customer.erasure', 'Customer’s personal data erased'],
    ]);
    expect(html).toContain(`href="/console/erasures/${erasureId}"`);
    expect(html).toContain('<option value="erasure" selected>Erasure</option>');

    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    await running.app.inject({
      method: 'POST',
      url: '/console/locale',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, locale: 'ko', back: url }).toString(),
    });
    html = await read();
    expect(actions(html)).toEqual([
      ['erasure.identity_purged', '보관된 신원 정보 파기'],
      ['erasure.identity_revealed', '보관된 신원 정보 열람'],
      ['customer.erasure', '고객 개인정보 삭제'],
    ]);
  });
});

describe('the Erasures pages', () => {
  it('list the erasures newest first through GET /admin/erasures’s query, each linked to its page: the pseudonym, the identity kept or destroyed, never the identity', async () => {
    const sealed = await createErasure(running.app.db, {
      identity: { userId: 'vault-user-1', names: ['홍길동'], phoneNumbers: ['010-1234-5678'] },
      erasedAt: new Date('2026-11-20T01:00:00Z'),
      retainUntil: '2031-11-20',
    });
    const purged = await createErasure(running.app.db, {
      sealed: false,
      erasedAt: new Date('2026-11-21T01:00:00Z'),
      overrides: { identityPurgedAt: new Date('2026-11-22T03:00:00Z') },
    });
    const html = await consoleGet(`/console/erasures?pseudonym=${sealed.pseudonym}`);
    expect(html).toContain('<h1>Erasures</h1>');
    expect(html).toContain(`href="/console/erasures/${sealed.id}"`);
    expect(html).not.toContain(purged.pseudonym);
    expect(html).toContain('Sealed until 2031-11-20');
    for (const secret of ['vault-user-1', '홍길동', '010-1234-5678']) expect(html).not.toContain(secret);

    const all = await consoleGet('/console/erasures');
    expect(all.indexOf(purged.pseudonym)).toBeLessThan(all.indexOf(sealed.pseudonym));
    const one = await consoleGet(`/console/erasures/${purged.id}`);
    expect(one).toContain(`<h1>Erasure ${purged.pseudonym}</h1>`);
    expect(textOf(one, 'erasure-identity')).toBe('Destroyed on 2026-11-22 12:00:00');
    expect(one).toContain(`href="/console/customers?userId=${purged.pseudonym}"`);
    await consoleGet(`/console/erasures/${randomUUID()}`, 404);
  });
});

/** The form of the confirmation page as a browser would submit it, with `fields` (reason, cancelOpenSubscriptions). */
async function submitErasure(cookie: string, userId: string, fields: Record<string, string>, html?: string) {
  const page =
    html ?? (await running.app.inject({ method: 'GET', url: `/console/customers/erasure?userId=${encodeURIComponent(userId)}`, headers: { cookie } })).body;
  const payload = new URLSearchParams({ ...formFields(page, '/console/customers/erasure'), userId, ...fields }).toString();
  return {
    page,
    answer: await running.app.inject({
      method: 'POST',
      url: '/console/customers/erasure',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    }),
  };
}

/** What an erasure would change, read to show that a refusal changed nothing. */
const stateOf = async (userId: string) => ({
  erasures: await running.app.db.erasure.count(),
  subscriptions: await running.app.db.subscription.findMany({ where: { userId }, select: { id: true, status: true }, orderBy: { id: 'asc' } }),
  audit: await running.app.db.auditEvent.count({ where: { action: 'customer.erasure' } }),
});

describe('erasing a customer from the console', () => {
  it('the confirmation page says what is erased and kept, and lists each blocker in words with a link to its page', async () => {
    const userId = `blocked-${randomUUID()}`;
    const subscription = await subscribe(running.app, { userId });
    const pending = await running.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: apiHeaders,
      payload: { userId, method: 'CARD', amount: 3000, orderName: 'Once' },
    });
    expect(pending.statusCode).toBe(201);

    const html = await consoleGet(`/console/customers/erasure?userId=${encodeURIComponent(userId)}`);
    expect(html).toContain(`<h1>Erase customer ${userId}</h1>`);
    expect(textOf(html, 'erasure-erased')).toContain('The userId, on every record: it is replaced by a pseudonym');
    expect(textOf(html, 'erasure-kept')).toContain('destroyed 5 years after the customer’s latest payment or refund');
    const blockers = [...html.matchAll(/<li data-kind="(\w+)"><a href="([^"]+)">([^<]+)<\/a>/g)].map(([, kind, href, text]) => ({ kind, href, text }));
    expect(blockers).toEqual([
      { kind: 'order', href: `/console/search?q=${pending.json().id}`, text: 'A one-time order not finished (PENDING)' },
      { kind: 'subscription', href: `/console/subscriptions/${subscription}`, text: 'An open subscription (ACTIVE)' },
    ]);
    // The form: CSRF, a key made now, the choice, a required reason.
    expect(formFields(html, '/console/customers/erasure').idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(html).toContain('name="reason" type="text" required');

    // Nobody to erase: an unknown userId is a 404 page, coded.
    const unknown = await consoleGet(`/console/customers/erasure?userId=nobody-${randomUUID()}`, 404);
    expect(unknown).toContain('<code>CUSTOMER_NOT_FOUND</code>');
  });

  it('without a reason: a coded 400 page and nothing changed; with a blocker: the page again, 409, listing it, nothing changed', async () => {
    const userId = `refused-${randomUUID()}`;
    await subscribe(running.app, { userId });
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const before = await stateOf(userId);

    const { answer: noReason } = await submitErasure(cookie, userId, { reason: '   ', cancelOpenSubscriptions: 'yes' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.body).toContain('<code>VALIDATION_ERROR</code>');
    expect(noReason.body).toContain('Reason');
    expect(await stateOf(userId)).toEqual(before);

    const { answer: blocked } = await submitErasure(cookie, userId, { reason: 'asked by email', cancelOpenSubscriptions: 'no' });
    expect(blocked.statusCode).toBe(409);
    expect(textOf(blocked.body, 'erasure-refused')).toBe('The erasure was refused and nothing was changed: something below blocks it.');
    expect(textOf(blocked.body, 'erasure-blockers')).toContain('An open subscription (ACTIVE)');
    expect(await stateOf(userId)).toEqual(before);
  });

  it('erases through the admin route’s service and idempotency record, then shows the customer under the pseudonym, the old userId nowhere', async () => {
    const userId = `erased-here-${randomUUID()}`;
    const subscription = await subscribe(running.app, { userId, orderName: 'Plan to forget' });
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const fields = { reason: 'asked by email (#4821)', cancelOpenSubscriptions: 'yes' };
    const { page, answer } = await submitErasure(cookie, userId, fields);
    expect(answer.statusCode, answer.body).toBe(303);
    const location = answer.headers.location as string;
    expect(location).toMatch(/^\/console\/customers\?userId=erased_[a-z2-7]{20}&done=erase$/);
    const pseudonym = new URL(location, 'http://console').searchParams.get('userId')!;

    // What the admin route would have done: the erasure row, the subscription canceled (ERASED) under the pseudonym,
    // the audit entry with the operator and the reason.
    const erasure = await running.app.db.erasure.findUniqueOrThrow({ where: { pseudonym } });
    expect(erasure).toMatchObject({ status: 'COMPLETED', reason: fields.reason, actor: 'admin:ops' });
    expect(
      await running.app.db.subscription.findUniqueOrThrow({ where: { id: subscription }, select: { userId: true, status: true, cancelReason: true } }),
    ).toEqual({
      userId: pseudonym,
      status: 'CANCELED',
      cancelReason: 'ERASED',
    });
    expect(await running.app.db.auditEvent.count({ where: { action: 'customer.erasure', entityId: erasure.id } })).toBe(1);

    // The same form again (a double submit) acts once and answers alike; so does the admin route sent the same key.
    const again = await submitErasure(cookie, userId, fields, page);
    expect([again.answer.statusCode, again.answer.headers.location]).toEqual([303, location]);
    const key = formFields(page, '/console/customers/erasure').idempotencyKey;
    const admin = await running.app.inject({
      method: 'POST',
      url: `/admin/customers/${encodeURIComponent(userId)}/erasure`,
      headers: { ...adminHeaders, 'idempotency-key': key },
      payload: { reason: fields.reason, cancelOpenSubscriptions: true },
    });
    expect([admin.statusCode, admin.headers['idempotent-replayed'], admin.json().pseudonym]).toEqual([201, 'true', pseudonym]);
    expect(await running.app.db.erasure.count({ where: { pseudonym } })).toBe(1);

    // The result: the customer's page under the pseudonym, erased, the records there, the old userId nowhere.
    const html = await consoleGet(location);
    expect(html).toContain('The customer’s personal data was erased.');
    expect(textOf(html, 'erased')).toContain(`sealed until ${erasure.retainUntil}`);
    expect(textOf(html, 'customer-subscriptions')).toContain('Plan to forget');
    expect(html).not.toContain('action="/console/customers/erasure"');
    for (const url of [
      location,
      `/console/subscriptions/${subscription}`,
      '/console/erasures',
      `/console/erasures/${erasure.id}`,
      '/console/audit?entityType=erasure',
    ]) {
      expect(await consoleGet(url), url).not.toContain(userId);
    }
    // Erased already: the confirmation page has nobody to erase, under either name.
    await consoleGet(`/console/customers/erasure?userId=${encodeURIComponent(userId)}`, 404);
    await consoleGet(`/console/customers/erasure?userId=${pseudonym}`, 404);
  });
});
