// A customer whose personal data reaches every table, built only through the public routes and the sandbox gateway
// (docs/operating.md "A customer asks to be forgotten"), for the erasure's scan and figures tests; and a second
// customer beside it, never erased, whose data must stay.
//
// The customer's userId is an email address. Over four months of the simulated clock: a CARD registration whose
// returnUrl carries the userId URL-encoded, a CARD and a MOBILE registration with userName and userPhoneNumber (the
// MOBILE window answering the phone number as digits, as a carrier does), monthly charges, a declined charge and its
// retry, a one-time order, a gateway refund in full and a partial one, an external refund whose reference names the
// customer, a price increase with a consent whose reference holds the phone number, admin actions (pause, resume, a
// PATCH: audit entries with before and after; the pause's reason, as operators write them, names the userId), POSTs with Idempotency-Key (kept replies), a webhook endpoint with its
// deliveries, a portal session and a cancel in the portal (actor customer:<userId>), and a settlement file whose
// lines carry the buyer's name, phone and id in columns the parser keeps as `extra`.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DateTime } from 'luxon';
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders } from './app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock } from './billing.ts';
import { type createRegistration, decideWindow, follow, sandboxFault, sandboxLedger } from './checkout.ts';
import type { Needle } from './personal-data-scan.ts';
import { type CookieJar, formOf, getPage, openPortal, postForm } from './portal.ts';
import { importCsv } from './settlement.ts';
import { waitFor } from './service.ts';

export const kst = (local: string) => new Date(`${local}+09:00`);
const DAY = 86_400_000;

export interface Person {
  userId: string;
  name: string;
  /** As the merchant sent it (hyphens). */
  phone: string;
  needles: Needle[];
}

export interface FullHistory {
  subject: Person;
  /** Another customer, never erased: the scan must still find them and their rows keep their figures. */
  bystander: Person;
  cardSubscriptionId: string;
  mobileSubscriptionId: string;
  bystanderSubscriptionId: string;
  registrationIds: string[];
  /** The one-time order's id (GET /api/v1/orders/:id). */
  orderId: string;
  /** Every payment of the subject, recurring and one-time. */
  paymentIds: string[];
  billingKeyIds: string[];
  portalSessionId: string;
  endpointId: string;
  settlementImportId: string;
  /** The masked card number and masked phone number the API showed for the subject (stored forms too). */
  masked: { cardNumber?: string; phoneNumber?: string };
  /** Bodies the webhook receiver got, in arrival order. */
  webhookBodies: string[];
  /**
   * The settlement file rebuilt from the sandbox's ledger now, with the buyer columns on every line of the subject's
   * and the bystander's: the gateway still knows the buyer after an erasure. The history imported only the lines
   * traded before SETTLED_UNTIL; a file imported later brings the rest (the March and April charges) as new lines.
   */
  settlementFile(): Promise<Buffer>;
  close(): Promise<void>;
}

/** A Korean mobile number with random digits (010-XXXX-XXXX), so no other value in the database contains it by chance. */
function randomPhone(): string {
  const digits = [...randomBytes(8)].map((b) => String(b % 10)).join('');
  return `010-${digits.slice(0, 4)}-${digits.slice(4, 8)}`;
}

/** `email`: the userId is an email address, as many merchants' are (its URL-encoded form differs from it). */
function person(prefix: string, name: string, options: { email?: boolean } = {}): Person {
  const userId = options.email ? `${prefix}+${randomBytes(5).toString('hex')}@shop.example` : `${prefix}-${randomBytes(5).toString('hex')}`;
  const phone = randomPhone();
  return {
    userId,
    name,
    phone,
    needles: [
      { label: 'userId', value: userId },
      { label: 'name', value: name },
      { label: 'phone', value: phone, phone: true },
    ],
  };
}

const idem = () => ({ 'idempotency-key': randomUUID() });

async function expectStatus(response: { statusCode: number; body: string }, status: number, what: string) {
  expect(response.statusCode, `${what}: ${response.body}`).toBe(status);
}

/** A registration through the hosted window and the success redirect; answers the subscription's id. */
async function register(app: App, terms: Record<string, unknown>, windowExtra: Record<string, unknown> = {}) {
  const response = await app.inject({ method: 'POST', url: '/api/v1/registrations', headers: { ...apiHeaders, ...idem() }, payload: terms });
  await expectStatus(response, 201, 'registration');
  const registration = response.json() as Awaited<ReturnType<typeof createRegistration>>;
  const window = await decideWindow(app, registration.window, 'approve', windowExtra);
  const done = await follow(app, window.redirectUrl, { json: true });
  await expectStatus(done, 200, 'billing success');
  const subscriptionId = (done.json() as { subscriptionId: string }).subscriptionId;
  return { registrationId: registration.id, subscriptionId };
}

/** A receiver on a free port that answers 200 and keeps each body. */
async function webhookReceiver(): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, bodies, server };
}

const admin = (app: App, method: 'POST' | 'PATCH', url: string, payload: object) =>
  app.inject({ method, url, headers: { ...adminHeaders, ...idem() }, payload });
const merchant = (app: App, url: string, payload: object) => app.inject({ method: 'POST', url, headers: { ...apiHeaders, ...idem() }, payload });

/** The lines the history's own import covers: traded before this instant. */
export const SETTLED_UNTIL = kst('2027-03-01T00:00:00');

/** Settlement CSV (the sandbox export's columns) with the buyer's name, phone and id for the lines of `owners`' orders. */
async function settlementCsv(app: App, owners: Map<string, Person>, until?: Date): Promise<Buffer> {
  const headers = ['거래일시', '거래구분', '결제수단', '거래번호', '취소번호', '주문번호', '거래금액', '가맹점ID', '구매자명', '구매자연락처', '구매자ID'];
  const charged = new Map<string, number>();
  const rows: string[][] = [];
  for (const entry of await sandboxLedger(app)) {
    if ((entry as { verification?: boolean }).verification || (until && new Date(entry.at) >= until)) continue;
    if (entry.type === 'CHARGE') charged.set(entry.transactionId, entry.amount);
    const original = entry.originalTransactionId ? charged.get(entry.originalTransactionId) : undefined;
    const type = entry.type === 'CHARGE' ? '승인' : original !== undefined && entry.amount < original ? '부분취소' : '취소';
    const buyer = entry.orderId ? owners.get(entry.orderId) : undefined;
    rows.push([
      DateTime.fromISO(entry.at, { zone: 'Asia/Seoul' }).toFormat('yyyy-MM-dd HH:mm:ss'),
      type,
      (entry as { method?: string }).method === 'MOBILE' ? '휴대폰' : '신용카드',
      entry.originalTransactionId ?? entry.transactionId,
      entry.type === 'CANCEL' ? entry.transactionId : '',
      entry.orderId ?? '',
      String(entry.type === 'CANCEL' ? -entry.amount : entry.amount),
      'TEST_MERCHANT',
      buyer?.name ?? '',
      // The carrier's lines write the number in its international form, the card company's as the merchant sent it.
      buyer ? ((entry as { method?: string }).method === 'MOBILE' ? `+82-${buyer.phone.slice(1)}` : buyer.phone) : '',
      buyer?.userId ?? '',
    ]);
  }
  return Buffer.from(`\ufeff${[headers, ...rows].map((row) => row.join(',')).join('\r\n')}\r\n`, 'utf8');
}

/** Every orderId (payments' and attempts') of a person's subscriptions and orders, mapped to the person. */
async function ordersOf(app: App, who: Person, subscriptionIds: string[], orderIds: string[], owners: Map<string, Person>) {
  for (const id of subscriptionIds) {
    for (const payment of await paymentsOf(app, id)) {
      owners.set(payment.orderId, who);
      for (const attempt of payment.attempts ?? []) owners.set(attempt.orderId, who);
    }
  }
  for (const id of orderIds) {
    const order = (await app.inject({ method: 'GET', url: `/api/v1/orders/${id}`, headers: apiHeaders })).json() as { orderId: string };
    owners.set(order.orderId, who);
  }
}

export async function buildFullHistory(app: App): Promise<FullHistory> {
  const subject = person('erasure.subject', '탁예린', { email: true });
  const bystander = person('bystander-customer-long-id', '문서준');
  const receiver = await webhookReceiver();
  const registrationIds: string[] = [];

  await setClock(app, kst('2027-01-05T10:00:00'));
  const endpoint = await app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: apiHeaders, payload: { url: receiver.url } });
  await expectStatus(endpoint, 201, 'webhook endpoint');
  const endpointId = (endpoint.json() as { id: string }).id;

  const card = await register(app, {
    userId: subject.userId,
    method: 'CARD',
    amount: 9_900,
    orderName: '프리미엄 월간',
    userName: subject.name,
    userPhoneNumber: subject.phone,
    // The merchant's return page names its customer, URL-encoded as a query string carries it.
    returnUrl: `https://shop.example/return?customer=${encodeURIComponent(subject.userId)}`,
  });
  registrationIds.push(card.registrationId);

  // A one-time order, refunded in full at the gateway.
  const order = await merchant(app, '/api/v1/orders', { userId: subject.userId, method: 'CARD', amount: 15_000, orderName: '추가 상품' });
  await expectStatus(order, 201, 'order');
  const orderBody = order.json() as { id: string; window: Parameters<typeof decideWindow>[1] };
  const orderWindow = await decideWindow(app, orderBody.window, 'approve', { userName: subject.name, userPhoneNumber: subject.phone });
  await expectStatus(await follow(app, orderWindow.redirectUrl, { json: true }), 200, 'payment success');

  // Admin actions with before/after in the audit trail and replies kept by Idempotency-Key.
  await expectStatus(
    await admin(app, 'POST', `/admin/subscriptions/${card.subscriptionId}/pause`, { reason: `고객 ${subject.userId} 요청: 여행 중` }),
    200,
    'pause',
  );
  await expectStatus(await admin(app, 'POST', `/admin/subscriptions/${card.subscriptionId}/resume`, { reason: '고객 복귀' }), 200, 'resume');
  await expectStatus(
    await admin(app, 'PATCH', `/admin/subscriptions/${card.subscriptionId}`, { reason: '상품명 변경', orderName: '프리미엄 월간 (개정)' }),
    200,
    'patch',
  );

  // A price increase with the customer's consent; the merchant's reference to the evidence holds the phone number.
  await expectStatus(await merchant(app, `/api/v1/subscriptions/${card.subscriptionId}/price-change`, { amount: 12_900 }), 200, 'price change');
  await expectStatus(
    await merchant(app, `/api/v1/subscriptions/${card.subscriptionId}/consents`, {
      kind: 'PRICE_INCREASE',
      channel: 'sms',
      reference: `SMS 동의 회신 ${subject.phone}`,
    }),
    201,
    'consent',
  );

  // The next afternoon the other customer subscribes (due on other times than the subject's charges).
  await setClock(app, kst('2027-01-06T15:00:00'));
  const bystanderSub = await register(app, {
    userId: bystander.userId,
    method: 'CARD',
    amount: 7_700,
    orderName: '라이트 월간',
    userName: bystander.name,
    userPhoneNumber: bystander.phone,
  });

  // Two days later the MOBILE registration: the carrier's window answers the phone number as digits.
  await setClock(app, kst('2027-01-07T11:00:00'));
  const mobile = await register(
    app,
    {
      userId: subject.userId,
      method: 'MOBILE',
      amount: 5_500,
      orderName: '모바일 부가서비스',
      itemCode: 'ADDON01',
      interval: { unit: 'month', count: 1 },
      userName: subject.name,
      userPhoneNumber: subject.phone.replace(/-/g, ' '),
    },
    { userPhoneNumber: subject.phone.replace(/-/g, '') },
  );
  registrationIds.push(mobile.registrationId);

  const [firstCard] = await paymentsOf(app, card.subscriptionId);
  const [firstMobile] = await paymentsOf(app, mobile.subscriptionId);
  const orderPayment = (
    await app.inject({ method: 'GET', url: `/admin/payments?userId=${encodeURIComponent(subject.userId)}&limit=100`, headers: adminHeaders })
  )
    .json()
    .items.find((p: { kind: string }) => p.kind === 'ONE_TIME') as { id: string } | undefined;
  expect(orderPayment, 'the one-time order payment').toBeDefined();
  await expectStatus(await admin(app, 'POST', `/admin/payments/${orderPayment!.id}/cancel`, { reason: '주문 취소' }), 200, 'full refund');
  await expectStatus(await admin(app, 'POST', `/admin/payments/${firstCard!.id}/cancel`, { amount: 3_000, reason: '부분 환불' }), 200, 'partial refund');
  await expectStatus(
    await admin(app, 'POST', `/admin/payments/${firstMobile!.id}/refunds/external`, {
      amount: 1_000,
      reason: '계좌이체로 일부 환불',
      reference: `이체 ${subject.name} 국민 123-45`,
    }),
    201,
    'external refund',
  );

  // February: the CARD charge is declined, then retried a day later (RETRY_DELAYS' 1d) and approved; MOBILE charges.
  await setClock(app, (await getSubscription(app, card.subscriptionId)).nextChargeAt!);
  await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'LIMIT_EXCEEDED', message: '한도 초과' });
  expect(await runPass(app)).toMatchObject({ claimed: 1, declined: 1 });
  await setClock(app, (await getSubscription(app, card.subscriptionId)).nextChargeAt!);
  expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });
  // Then every charge due until mid-April, on each due time (MOBILE keeps to its window around the same day).
  for (const until of [kst('2027-02-08T12:00:00'), kst('2027-03-05T12:00:00'), kst('2027-03-08T12:00:00'), kst('2027-04-05T12:00:00')]) {
    await setClock(app, until);
    await runPass(app);
  }

  // The portal: a session for the customer, the MOBILE subscription cancelled there at the period's end.
  const portal = await openPortal(app, { userId: subject.userId });
  const jar: CookieJar = portal.jar;
  const confirm = await getPage(app, jar, `/portal/subscriptions/${mobile.subscriptionId}/cancel`);
  await expectStatus(confirm, 200, 'portal cancel page');
  const cancelAction = `/portal/subscriptions/${mobile.subscriptionId}/cancel`;
  await expectStatus(await postForm(app, jar, cancelAction, { ...formOf(confirm.body, cancelAction), reason: '잘 안 써요' }), 303, 'portal cancel');

  // The settlement file, its lines carrying the buyer's columns; imported and matched.
  const owners = new Map<string, Person>();
  await ordersOf(app, subject, [card.subscriptionId, mobile.subscriptionId], [orderBody.id], owners);
  await ordersOf(app, bystander, [bystanderSub.subscriptionId], [], owners);
  const imported = await importCsv(app, await settlementCsv(app, owners, SETTLED_UNTIL), '', idem());
  await expectStatus(imported, 201, 'settlement import');

  const subscriptions = await Promise.all([card.subscriptionId, mobile.subscriptionId].map((id) => getSubscription(app, id)));
  const cardView = subscriptions[0] as unknown as { billingKey: { cardNumber?: string } };
  const mobileView = subscriptions[1] as unknown as { billingKey: { phoneNumber?: string } };
  const paymentIds = (
    (await app.inject({ method: 'GET', url: `/admin/payments?userId=${encodeURIComponent(subject.userId)}&limit=100`, headers: adminHeaders })).json() as {
      items: Array<{ id: string }>;
    }
  ).items.map((p) => p.id);

  // Every event delivered to the receiver before anyone reads the tables.
  await waitFor('every webhook delivery done', async () => {
    const pending = await app.db.webhookDelivery.count({ where: { status: { not: 'SUCCEEDED' } } });
    return pending === 0 && (await app.db.webhookDelivery.count()) > 0;
  });

  return {
    subject,
    bystander,
    cardSubscriptionId: card.subscriptionId,
    mobileSubscriptionId: mobile.subscriptionId,
    bystanderSubscriptionId: bystanderSub.subscriptionId,
    registrationIds,
    orderId: orderBody.id,
    paymentIds,
    billingKeyIds: subscriptions.map((s) => s.billingKey.id),
    portalSessionId: portal.id,
    endpointId,
    settlementImportId: (imported.json() as { id: string }).id,
    masked: { cardNumber: cardView.billingKey.cardNumber, phoneNumber: mobileView.billingKey.phoneNumber },
    webhookBodies: receiver.bodies,
    settlementFile: () => settlementCsv(app, owners),
    close: async () => {
      receiver.server.closeAllConnections();
      await new Promise((resolve) => receiver.server.close(resolve));
    },
  };
}

export { DAY };

export interface ErasureView {
  id: string;
  pseudonym: string;
  status: string;
  erasedAt: string;
  retainUntil: string;
  counts: Record<string, number>;
}

/** POST /admin/customers/:userId/erasure (docs/operating.md "A customer asks to be forgotten"). */
export function eraseCustomer(app: App, userId: string, body: Record<string, unknown> = {}) {
  return app.inject({
    method: 'POST',
    url: `/admin/customers/${encodeURIComponent(userId)}/erasure`,
    headers: { ...adminHeaders, ...idem() },
    payload: { reason: '고객의 삭제 요청 (개인정보보호법 제21조)', ...body },
  });
}
