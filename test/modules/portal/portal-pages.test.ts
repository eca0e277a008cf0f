// The portal's pages through their routes (no browser: test/e2e/portal.test.ts drives them in Chromium): what the
// overview shows and never shows, the language switch kept in the session, another customer's subscription a 404
// like a missing one, forms refused without their CSRF token, a double submit acting once, a refusal (NOT_DUE) in
// words, and the records CSV holding exactly the rows and amounts of GET /admin/payments?userId=.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { readBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { apiHeaders, buildTestApp, TEST_SECRET_KEY } from '../../helpers/app.ts';
import { adminHeaders, getSubscription, setClock, subscribe } from '../../helpers/billing.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { type CookieJar, formOf, getPage, openPortal, postForm } from '../../helpers/portal.ts';

let database: TestDatabase;
let app: App;
let card: string;
let mobile: string;
let other: string;
let jar: CookieJar;

const admin = (method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: { ...adminHeaders, 'idempotency-key': randomUUID() }, ...(payload ? { payload } : {}) });

beforeAll(async () => {
  database = await createTestDatabase();
  // On the simulated clock: a monthly charge is then 28 days after the first (February), so a price increase asked
  // for at once is open to the customer's agreement (docs/architecture.md, invariant 13: within 30 days of the charge).
  app = await buildTestApp(database.url, { env: { CLOCK: 'simulated' } });
  await setClock(app, new Date('2030-02-10T10:00:00+09:00'));
  card = await subscribe(app, { userId: 'pages-user', amount: 9900, orderName: '프리미엄 월간' });
  mobile = await subscribe(app, { userId: 'pages-user', method: 'MOBILE', amount: 5500, itemCode: 'ITEM01', orderName: '휴대폰 요금제' });
  other = await subscribe(app, { userId: 'other-user', amount: 7700, orderName: '다른 고객의 구독' });
  // A partial gateway refund of the card's first payment and an external refund of the phone's.
  const payments = (await admin('GET', '/admin/payments?userId=pages-user&limit=100')).json().items as Array<{ id: string; subscriptionId: string }>;
  const cardPayment = payments.find((p) => p.subscriptionId === card)!;
  const mobilePayment = payments.find((p) => p.subscriptionId === mobile)!;
  expect((await admin('POST', `/admin/payments/${cardPayment.id}/cancel`, { amount: 1000, reason: '부분 환불' })).statusCode).toBe(200);
  expect(
    (await admin('POST', `/admin/payments/${mobilePayment.id}/refunds/external`, { amount: 5500, reason: '계좌이체 환불', reference: 'KB-0212' })).statusCode,
  ).toBe(201);
  ({ jar } = await openPortal(app, { userId: 'pages-user', returnUrl: undefined }));
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** The customer's billing keys in plain text and the phone's full number: what no page or file may show. */
async function secretsOf(userId: string): Promise<string[]> {
  const keyring = createKeyring(app.config.encryptionKeys);
  const rows = await app.db.billingKey.findMany({ where: { userId } });
  const phones = rows.flatMap((row) => (row.phoneNumber ? [row.phoneNumber, row.phoneNumber.replace(/\D/g, '')] : []));
  return [...rows.map((row) => readBillingKey(keyring, row)), ...phones];
}

/** No billing key, full phone number, operator's note (refund reasons, an external refund's reference) or other customer. */
async function expectNothingPrivate(text: string) {
  const secrets = await secretsOf('pages-user');
  expect(secrets.length).toBeGreaterThanOrEqual(3);
  for (const secret of secrets) expect(text).not.toContain(secret);
  for (const note of ['부분 환불', '계좌이체 환불', 'KB-0212', 'other-user', '다른 고객의 구독']) expect(text).not.toContain(note);
}

describe('overview', () => {
  it('shows each subscription and the payments in Korean first, never a billing key, a full phone number or another customer', async () => {
    const page = await getPage(app, jar, '/portal');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toContain("script-src 'none'");
    const html = page.body;
    expect(html).toContain('<html lang="ko">');
    expect(html).toMatch(/<h1>구독 관리<\/h1>/);
    for (const text of [
      '프리미엄 월간',
      '휴대폰 요금제',
      '9,900원',
      '5,500원',
      '매월',
      '이용 중',
      '다음 결제일',
      '결제 내역 다운로드 (CSV)',
      '1,000원 (환불 완료)',
    ])
      expect(html).toContain(text);
    const sub = await getSubscription(app, mobile);
    const key = await app.db.billingKey.findUniqueOrThrow({ where: { id: sub.billingKey.id } });
    expect(key.phoneNumber).toBeTruthy();
    expect(html).not.toContain(key.phoneNumber!);
    expect(html).toContain(`${key.phoneNumber!.replace(/\D/g, '').slice(0, 3)}-****-${key.phoneNumber!.replace(/\D/g, '').slice(-4)}`);
    expect(html).not.toContain('다른 고객의 구독');
    expect(html).not.toContain('pages-user');
    expect(html).not.toMatch(/\b(ACTIVE|SUCCEEDED|CARD|MOBILE)\b/);
    await expectNothingPrivate(html);
  });

  it('switches to English and keeps it in the session; the switch goes back to the page it was on', async () => {
    const page = await getPage(app, jar, `/portal/subscriptions/${card}`);
    const switched = await postForm(app, jar, '/portal/language', {
      _csrf: formOf(page.body, '/portal/language')._csrf,
      locale: 'en',
      next: `/portal/subscriptions/${card}`,
    });
    expect([switched.statusCode, switched.headers.location]).toEqual([303, `/portal/subscriptions/${card}`]);
    const english = await getPage(app, jar, '/portal');
    expect(english.body).toContain('<html lang="en">');
    expect(english.body).toContain('<h1>Your subscriptions</h1>');
    expect(english.body).toContain('9,900 KRW');
    expect(english.body).toContain('Download records (CSV)');
    // Errors speak the session's language too.
    const missing = await getPage(app, jar, `/portal/subscriptions/${other}`);
    expect([missing.statusCode, missing.body.includes('There is no such page or subscription.')]).toEqual([404, true]);
    const back = await postForm(app, jar, '/portal/language', {
      _csrf: formOf(english.body, '/portal/language')._csrf,
      locale: 'ko',
      next: 'https://evil.example/',
    });
    expect(back.headers.location).toBe('/portal');
    expect((await getPage(app, jar, '/portal')).body).toContain('<html lang="ko">');
  });
});

describe('another customer’s subscription', () => {
  it('is a 404 page, the same as one that does not exist, on every page and action', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const path of ['', '/cancel']) {
      const theirs = await getPage(app, jar, `/portal/subscriptions/${other}${path}`);
      const none = await getPage(app, jar, `/portal/subscriptions/${missing}${path}`);
      expect([theirs.statusCode, none.statusCode]).toEqual([404, 404]);
      const plain = (html: string) => html.replace(/name="_csrf" value="[^"]+"/g, '');
      expect(plain(theirs.body)).toBe(plain(none.body).replaceAll(missing, other));
      expect(theirs.body).not.toContain('다른 고객의 구독');
    }
    const overview = await getPage(app, jar, '/portal');
    const { _csrf } = formOf(overview.body, '/portal/language');
    for (const action of ['payment-method', 'cancel', 'keep', 'consent', 'decline', 'withdraw']) {
      const response = await postForm(app, jar, `/portal/subscriptions/${other}/${action}`, { _csrf, idempotencyKey: randomUUID() });
      expect([action, response.statusCode]).toEqual([action, 404]);
    }
    expect(await app.db.registration.count({ where: { targetSubscriptionId: other } })).toBe(0);
  });
});

describe('forms', () => {
  it('are refused without their CSRF token (a page in words), and nothing is done', async () => {
    const page = await getPage(app, jar, '/portal');
    const form = formOf(page.body, `/portal/subscriptions/${card}/payment-method`);
    const refused: Array<Record<string, string>> = [{ idempotencyKey: form.idempotencyKey }, { _csrf: 'forged', idempotencyKey: form.idempotencyKey }];
    for (const fields of refused) {
      const response = await postForm(app, jar, `/portal/subscriptions/${card}/payment-method`, fields);
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('이 양식은 더 이상 유효하지 않습니다');
      expect(response.body).not.toContain('FST_CSRF');
    }
    expect(await app.db.registration.count({ where: { targetSubscriptionId: card } })).toBe(0);
  });

  it('submitted twice act once: one payment-method registration, both answers sending the browser to its window', async () => {
    const page = await getPage(app, jar, '/portal');
    const form = formOf(page.body, `/portal/subscriptions/${card}/payment-method`);
    const [first, second] = await Promise.all([
      postForm(app, jar, `/portal/subscriptions/${card}/payment-method`, form),
      postForm(app, jar, `/portal/subscriptions/${card}/payment-method`, form),
    ]);
    expect([first.statusCode, second.statusCode]).toEqual([303, 303]);
    expect(first.headers.location).toMatch(/\/sandbox\/window\?/);
    expect(second.headers.location).toBe(first.headers.location);
    const registrations = await app.db.registration.findMany({ where: { targetSubscriptionId: card } });
    expect(registrations).toHaveLength(1);
    expect(registrations[0]!.returnUrl).toBe(`http://localhost:3000/portal/subscriptions/${card}/payment-method/result`);
  });

  it('a refusal of the service is a sentence in the session’s language (a MOBILE method with nothing owed: NOT_DUE)', async () => {
    const page = await getPage(app, jar, '/portal');
    const response = await postForm(
      app,
      jar,
      `/portal/subscriptions/${mobile}/payment-method`,
      formOf(page.body, `/portal/subscriptions/${mobile}/payment-method`),
    );
    expect(response.statusCode).toBe(409);
    expect(response.body).toContain('휴대폰 결제수단은 결제할 금액이 있을 때');
    expect(response.body).not.toContain('NOT_DUE');
    expect(response.body).not.toContain('A MOBILE window');
  });
});

describe('records.csv', () => {
  it('holds every payment and refund of GET /admin/payments?userId=, the same amounts, Korea time named in the header', async () => {
    const response = await getPage(app, jar, '/portal/records.csv');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.body.charCodeAt(0)).toBe(0xfeff);
    const [header, ...lines] = response.body.slice(1).split('\r\n').filter(Boolean);
    expect(header).toBe('구분,"일시 (KST, 한국 표준시)",상품,금액 (원),상태,결제수단,결제대행사,주문번호 (orderId),거래번호 (transactionId),ID,결제 ID');
    const rows = lines.map((line) => line.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/));
    const listed = (await admin('GET', '/admin/payments?userId=pages-user&limit=100')).json().items as Array<{
      id: string;
      amount: number;
      gateway: string;
      orderId: string;
      transactionId?: string;
      refunds: Array<{ id: string; amount: number }>;
    }>;
    const expected = listed.flatMap((p) => [
      ['결제', String(p.amount), p.orderId, p.transactionId ?? '', p.id, p.id],
      ...p.refunds.map((r) => ['환불', String(r.amount), p.orderId, '', r.id, p.id]),
    ]);
    expect(rows.map((r) => [r[0], r[3], r[7], r[8], r[9], r[10]])).toEqual(expected);
    // The payment company each payment went through, in words (these are Danal's).
    expect(listed.map((p) => p.gateway)).toEqual(listed.map(() => 'DANAL'));
    expect(new Set(rows.map((r) => r[6]))).toEqual(new Set(['다날']));
    expect(expected.filter((r) => r[0] === '환불')).toHaveLength(2);
    expect(rows.every((r) => /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(r[1]!))).toBe(true);
    expect(response.body).not.toContain(other);
    expect(response.body).not.toContain('다른 고객의 구독');
    // The masked card or phone of each payment's subscription (never the full number).
    const masked = Object.fromEntries(
      await Promise.all(
        [card, mobile].map(
          async (id) =>
            [
              id,
              (await getSubscription(app, id)).billingKey as { id: string; cardName?: string; cardNumber?: string; carrier?: string; phoneNumber?: string },
            ] as const,
        ),
      ),
    );
    const instruments = new Set(rows.map((r) => r[5]));
    expect(instruments).toEqual(
      new Set([`${masked[card]!.cardName} ${masked[card]!.cardNumber}`, `${masked[mobile]!.carrier} ${masked[mobile]!.phoneNumber}`]),
    );
    expect([...instruments].join()).toMatch(/\*{4}/);
    await expectNothingPrivate(response.body);
  });
});

describe('an action through the portal', () => {
  it('submitted twice acts once and answers alike; the audit entry names customer:<userId> and the portal session', async () => {
    const { jar: own, id: sessionId } = await openPortal(app, { userId: 'pages-user', flow: 'cancel', subscriptionId: card });
    const page = await getPage(app, own, `/portal/subscriptions/${card}/cancel`);
    expect(page.statusCode).toBe(200);
    const form = { ...formOf(page.body, `/portal/subscriptions/${card}/cancel`), reason: '가격이 부담돼요' };
    const [first, second] = await Promise.all([
      postForm(app, own, `/portal/subscriptions/${card}/cancel`, form),
      postForm(app, own, `/portal/subscriptions/${card}/cancel`, form),
    ]);
    expect([first.statusCode, first.headers.location]).toEqual([303, '/portal?done=canceled']);
    expect([second.statusCode, second.headers.location]).toEqual([303, '/portal?done=canceled']);
    expect(await getSubscription(app, card)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true });
    const audits = await app.db.auditEvent.findMany({ where: { entityId: card } });
    const cancels = audits.filter((a) => a.actor === 'customer:pages-user');
    expect(cancels).toHaveLength(1);
    expect(JSON.stringify(cancels[0])).toContain(sessionId);
    // The same form once more, after it acted: still the first answer, nothing new.
    const again = await postForm(app, own, `/portal/subscriptions/${card}/cancel`, form);
    expect([again.statusCode, again.headers.location]).toEqual([303, '/portal?done=canceled']);
    expect(await app.db.auditEvent.count({ where: { entityId: card, actor: 'customer:pages-user' } })).toBe(1);
  });
});

describe('a choice between agreeing and declining', () => {
  it('draws neither more prominently than the other (no "false hierarchy"): the same form, the same button', async () => {
    const increased = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${card}/price-change`,
      headers: { ...apiHeaders, 'idempotency-key': randomUUID() },
      payload: { amount: 12_900 },
    });
    expect(increased.statusCode).toBe(200);
    const html = (await getPage(app, jar, '/portal')).body;
    const formTag = (action: string) => new RegExp(`<form method="post" action="/portal/subscriptions/${card}/${action}"[^>]*>`).exec(html)?.[0];
    const agree = formTag('consent');
    const decline = formTag('decline');
    expect(agree).toBeDefined();
    expect(decline).toBeDefined();
    expect(agree!.replace('/consent"', '/X"')).toBe(decline!.replace('/decline"', '/X"'));
    expect(html).toContain('변경 금액에 동의');
    expect(html).toContain('동의하지 않음');
  });
});

describe('an unknown portal path', () => {
  it('is a 404 page in the session’s language (English when the session chose it), with the way back', async () => {
    const { jar: english } = await openPortal(app, { userId: 'pages-user', locale: 'en' });
    const response = await getPage(app, english, '/portal/no-such-page');
    expect(response.statusCode).toBe(404);
    expect(response.body).toContain('<html lang="en">');
    expect(response.body).toContain('There is no such page or subscription.');
    expect(response.body).toContain('href="/portal"');
    const korean = await getPage(app, jar, '/portal/no-such-page');
    expect(korean.statusCode).toBe(404);
    expect(korean.body).toContain('<html lang="ko">');
    // Without a session: Korean, with the page's own switch to English.
    const anonymous = await app.inject({ method: 'GET', url: '/portal/no-such-page' });
    expect(anonymous.statusCode).toBe(404);
    expect(anonymous.body).toContain('<html lang="ko">');
    expect(anonymous.body).toContain('href="?lang=en"');
    const switched = await app.inject({ method: 'GET', url: '/portal/no-such-page?lang=en' });
    expect(switched.statusCode).toBe(404);
    expect(switched.body).toContain('<html lang="en">');
    expect(switched.body).toContain('There is no such page or subscription.');
  });
});

describe('changing the payment method with a gateway whose window has no address', () => {
  it('is refused before any registration, PAYMENT_METHOD_CHANGE_NOT_OFFERED as a sentence in the session’s language', async () => {
    // The real gateway's configuration (its window opens only through its script on the merchant's page); it is never
    // called: the refusal comes first. The same database, so the same customer.
    const real = await buildTestApp(database.url, {
      env: { PAYMENT_API_BASE_URL: 'http://127.0.0.1:9', PAYMENT_SECRET_KEY: TEST_SECRET_KEY, PAYMENT_MERCHANT_ID: 'TEST_MERCHANT' },
    });
    try {
      const before = await real.db.registration.count();
      for (const [locale, sentence] of [
        ['ko', '이 결제사에서는 이 페이지에서 결제수단을 변경할 수 없습니다'],
        ['en', 'With this payment company the payment method cannot be changed on this page'],
      ] as const) {
        const { jar: session } = await openPortal(real, { userId: 'pages-user', locale });
        const page = await getPage(real, session, `/portal/subscriptions/${card}`);
        const action = `/portal/subscriptions/${card}/payment-method`;
        const response = await postForm(real, session, action, formOf(page.body, action));
        expect(response.statusCode).toBe(409);
        expect(response.body).toContain(sentence);
        expect(response.body).not.toContain('PAYMENT_METHOD_CHANGE_NOT_OFFERED');
      }
      expect(await real.db.registration.count()).toBe(before);
    } finally {
      await real.close();
    }
  });
});

describe('a price increase whose next charge is more than 30 days away', () => {
  it('says from when it can be agreed to and offers only "decline" until then (the consent would not count)', async () => {
    await setClock(app, new Date('2030-03-01T10:00:00+09:00'));
    const id = await subscribe(app, { userId: 'later-user', amount: 9900, orderName: '3월 가입' });
    const asked = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${id}/price-change`,
      headers: { ...apiHeaders, 'idempotency-key': randomUUID() },
      payload: { amount: 12_900 },
    });
    expect(asked.json()).toMatchObject({ pendingAmount: 12_900, nextChargeAt: new Date('2030-04-01T10:00:00+09:00').toISOString() });
    const { jar: later } = await openPortal(app, { userId: 'later-user' });
    const html = (await getPage(app, later, `/portal/subscriptions/${id}`)).body;
    expect(html).toContain('요금이 9,900원에서 12,900원(으)로 바뀝니다');
    expect(html).toContain('2030년 3월 2일부터 하실 수 있습니다');
    expect(html).not.toContain(`action="/portal/subscriptions/${id}/consent"`);
    const decline = formOf(html, `/portal/subscriptions/${id}/decline`);
    const declined = await postForm(app, later, `/portal/subscriptions/${id}/decline`, decline);
    expect([declined.statusCode, declined.headers.location]).toEqual([303, '/portal?done=declined']);
    expect((await getSubscription(app, id)).pendingAmount).toBeUndefined();
  });
});
