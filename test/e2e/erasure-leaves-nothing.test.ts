// What an erasure leaves behind (docs/operating.md "A customer asks to be forgotten"): a customer whose personal data
// reached every table through the public routes (test/helpers/full-history-customer.ts), the whole database scanned
// for their userId, name and phone number in every stored form (test/helpers/personal-data-scan.ts) before and after
// the erasure, and every surface that showed them read again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders, startTestApp, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { adminHeaders, subscribe } from '../helpers/billing.ts';
import { consoleCookie } from '../helpers/console.ts';
import { createPortalSession, getPage, openPortal } from '../helpers/portal.ts';
import { importCsv } from '../helpers/settlement.ts';
import { waitFor } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { buildFullHistory, eraseCustomer, SETTLED_UNTIL, type ErasureView, type FullHistory } from '../helpers/full-history-customer.ts';
import { describeHits, formsInText, placeOf, placesOf, scanForPersonalData, type Needle, type ScanResult } from '../helpers/personal-data-scan.ts';

let database: TestDatabase;
let app: App;
let client: pg.Client;
let history: FullHistory;
let before: ScanResult;
/** A console session's Cookie header. */
let cookie: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated', WEBHOOK_RETRY_DELAYS: '50ms,50ms,50ms' } }));
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  history = await buildFullHistory(app);
  before = await scan(history.subject.needles);
  cookie = await consoleCookie(app, TEST_ADMIN_TOKEN);
});

/**
 * The whole database but the `sandbox` schema: the built-in sandbox plays the gateway, and keeps the customer's
 * window and key as a gateway does on its side; what the gateway keeps is its own (the erasure asks it to delete the
 * billing key where it can), not a table of this service.
 */
const scan = (needles: Needle[]) => scanForPersonalData(client, needles, { excludeSchemas: ['sandbox'] });

afterAll(async () => {
  await history?.close();
  await client?.end();
  await app?.close();
  await database?.drop();
});

/**
 * Where the customer's data lives once they have done everything a customer can: the inventory the erasure must
 * clear (docs/operating.md "A customer asks to be forgotten" lists the same places and what happens to each).
 */
const INVENTORY = [
  'audit_events.actor',
  'audit_events.after',
  'audit_events.before',
  'audit_events.reason',
  'billing_keys.phoneNumber',
  'billing_keys.userId',
  'consents.reference',
  'events.snapshot',
  'external_refunds.reference',
  'idempotency_records.responseBody',
  'orders.userId',
  'portal_sessions.userId',
  'registrations.returnUrl',
  'registrations.userId',
  'registrations.userName',
  'registrations.userPhoneNumber',
  'settlement_lines.extra',
  'subscriptions.userId',
];

interface Surface {
  url: string;
  as: 'api' | 'admin' | 'csv' | 'console';
}

/**
 * Every surface that can show a customer: the merchant API's records and lists, the events feed, the admin routes'
 * records, lists, audit trail and exports (JSON and CSV), and the console's pages and CSV exports.
 */
function surfaces(): Surface[] {
  const user = encodeURIComponent(history.subject.userId);
  const subscriptions = [history.cardSubscriptionId, history.mobileSubscriptionId];
  return [
    ...subscriptions.flatMap((id): Surface[] => [
      { url: `/api/v1/subscriptions/${id}`, as: 'api' },
      { url: `/api/v1/payments?subscriptionId=${id}&limit=100`, as: 'api' },
      { url: `/admin/subscriptions/${id}`, as: 'admin' },
      { url: `/console/subscriptions/${id}`, as: 'console' },
    ]),
    ...history.paymentIds.flatMap((id): Surface[] => [
      { url: `/api/v1/payments/${id}`, as: 'api' },
      { url: `/admin/payments/${id}`, as: 'admin' },
      { url: `/console/payments/${id}`, as: 'console' },
    ]),
    ...history.registrationIds.map((id): Surface => ({ url: `/api/v1/registrations/${id}`, as: 'api' })),
    { url: `/api/v1/orders/${history.orderId}`, as: 'api' },
    { url: `/api/v1/subscriptions?userId=${user}`, as: 'api' },
    { url: '/api/v1/subscriptions?limit=100', as: 'api' },
    { url: '/api/v1/events?limit=100', as: 'api' },
    { url: '/api/v1/events?limit=100&after=100', as: 'api' },
    { url: `/api/v1/webhook-endpoints/${history.endpointId}`, as: 'api' },
    { url: `/admin/subscriptions?userId=${user}`, as: 'admin' },
    { url: `/admin/payments?userId=${user}&limit=100`, as: 'admin' },
    { url: '/admin/subscriptions?limit=100', as: 'admin' },
    { url: '/admin/payments?limit=100', as: 'admin' },
    { url: '/admin/audit?limit=100', as: 'admin' },
    { url: '/admin/settlement-imports', as: 'admin' },
    { url: `/admin/settlement-imports/${history.settlementImportId}`, as: 'admin' },
    { url: '/admin/reconciliation/summary?from=2027-01-01&to=2027-04-30', as: 'admin' },
    ...(['admin', 'csv'] as const).flatMap((as): Surface[] =>
      [
        '/admin/reconciliation?from=2027-01-01&to=2027-04-30&limit=100',
        '/admin/reports/mrr?from=2027-01&to=2027-06',
        '/admin/reports/revenue?from=2027-01-01&to=2027-04-30',
        '/admin/reports/recovery?from=2027-01&to=2027-06',
      ].map((url) => ({ url, as })),
    ),
    ...[
      '/console',
      '/console/subscriptions',
      '/console/payments',
      '/console/subscriptions/export',
      '/console/payments/export',
      '/console/audit',
      '/console/reconciliation',
      '/console/reports',
      `/console/search?q=${history.cardSubscriptionId}`,
    ].map((url): Surface => ({ url, as: 'console' })),
  ];
}

async function fetchSurface(surface: Surface) {
  const headers = {
    api: apiHeaders,
    admin: adminHeaders,
    csv: { ...adminHeaders, accept: 'text/csv' },
    console: { cookie },
  }[surface.as];
  return app.inject({ method: 'GET', url: surface.url, headers });
}
async function read(surface: Surface) {
  const response = await fetchSurface(surface);
  expect(response.statusCode, `${surface.url}: ${response.body.slice(0, 300)}`).toBe(200);
  return response.body;
}

/** The subject's needles and the masked card and phone numbers the API showed for them. */
const needlesOf = (h: FullHistory): Needle[] => [
  ...h.subject.needles,
  ...(h.masked.cardNumber ? [{ label: 'masked card number', value: h.masked.cardNumber }] : []),
  ...(h.masked.phoneNumber ? [{ label: 'masked phone number', value: h.masked.phoneNumber }] : []),
];

/** Each surface showing any of the needles, with what it shows; or that it did not answer 200. */
async function surfacesShowing(needles: Needle[]): Promise<string[]> {
  const showing: string[] = [];
  for (const surface of surfaces()) {
    const response = await fetchSurface(surface);
    const found = [...new Set(formsInText(response.body, needles))];
    if (response.statusCode !== 200) showing.push(`${surface.as} ${surface.url}: answered ${response.statusCode}`);
    if (found.length > 0) showing.push(`${surface.as} ${surface.url}: ${found.join(', ')}`);
  }
  return showing;
}

describe('before the erasure', () => {
  it('the scan finds the customer in every place of the inventory, and nowhere else', () => {
    console.info(`personal-data inventory (table.column [needle]: rows, forms):\n${describeHits(before.hits)}`);
    expect(placesOf(before.hits)).toEqual(INVENTORY);
  });

  it('the surfaces show the customer (the same reads find nothing after the erasure)', async () => {
    const showing = await surfacesShowing(needlesOf(history));
    console.info(`surfaces showing the customer before the erasure:\n${showing.join('\n')}`);
    const shown = (prefix: string) => showing.some((line) => line.startsWith(prefix));
    for (const prefix of [
      `api /api/v1/subscriptions/${history.cardSubscriptionId}`,
      `api /api/v1/registrations/${history.registrationIds[0]}`,
      `api /api/v1/orders/${history.orderId}`,
      'api /api/v1/events?limit=100',
      'admin /admin/payments?userId=',
      'admin /admin/audit',
      `console /console/subscriptions/${history.cardSubscriptionId}`,
      'console /console/subscriptions/export',
      'console /console/audit',
    ]) {
      expect(shown(prefix), prefix).toBe(true);
    }
  });

  it('finds each of userId, name and phone number', () => {
    expect(new Set(before.hits.map((h) => h.needle))).toEqual(new Set(['userId', 'name', 'phone']));
  });

  it('reads every column of every table that can hold text, by a second way of listing them', async () => {
    // information_schema, independently of the scanner's pg_catalog query: every column of a type that can hold text.
    // A partition's rows (the monthly events and deliveries, docs/production.md "Event partitions") are read through
    // its parent, the table the scanner reads: its columns count as the parent's.
    const { rows } = await client.query<{ place: string }>(
      `SELECT coalesce((SELECT p.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
                         WHERE c.relname = table_name AND c.relispartition), table_name) || '.' || column_name AS place
         FROM information_schema.columns
        WHERE table_schema = 'public'
          AND (data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'xml')
               OR (data_type = 'ARRAY' AND udt_name IN ('_text', '_varchar', '_bpchar', '_json', '_jsonb')))`,
    );
    const scanned = new Set(before.columns.map(placeOf));
    expect(rows.map((r) => r.place).filter((place) => !scanned.has(place))).toEqual([]);
    const tables = await client.query<{ table: string }>(`SELECT table_name AS "table" FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name NOT IN (SELECT relname FROM pg_class WHERE relispartition)`);
    console.info(
      `tables with no column that can hold text (ids, amounts, times only): ${tables.rows
        .map((r) => r.table)
        .filter((t) => !before.tables.includes(t))
        .sort()
        .join(', ')}`,
    );
  });
});

describe('after the erasure', () => {
  let erasure: ErasureView;
  let needles: Needle[];
  let after: ScanResult;
  /** Webhook bodies that arrived before the erasure; the rest came after it. */
  let deliveredBefore: number;

  beforeAll(async () => {
    needles = needlesOf(history);
    deliveredBefore = history.webhookBodies.length;
    const response = await eraseCustomer(app, history.subject.userId, { cancelOpenSubscriptions: true });
    expect(response.statusCode, response.body).toBe(201);
    erasure = response.json() as ErasureView;
    // The events the erasure wrote (the cancels, customer.erased) delivered before anything is read.
    await waitFor('the deliveries after the erasure', async () => (await app.db.webhookDelivery.count({ where: { status: { not: 'SUCCEEDED' } } })) === 0);
    after = await scan(needles);
  });

  const api = async (url: string) => {
    const body = await read({ url, as: 'api' });
    expect(formsInText(body, needles), url).toEqual([]);
    return { json: () => JSON.parse(body) };
  };

  it('answers the erasure with the pseudonym', () => {
    expect(erasure).toMatchObject({ status: 'COMPLETED', pseudonym: expect.stringMatching(/^erased_[a-z2-7]{20}$/i) });
  });

  it('the scan finds none of the customer’s values anywhere', () => {
    expect(describeHits(after.hits)).toBe('');
  });

  it('the other customer’s data stays where it was', async () => {
    const bystander = await scan(history.bystander.needles);
    expect(placesOf(bystander.hits)).toEqual(expect.arrayContaining(['registrations.userName', 'registrations.userPhoneNumber', 'subscriptions.userId']));
  });

  it('the merchant API shows the pseudonym or nothing', async () => {
    for (const id of [history.cardSubscriptionId, history.mobileSubscriptionId]) {
      const subscription = (await api(`/api/v1/subscriptions/${id}`)).json();
      expect(subscription).toMatchObject({ userId: erasure.pseudonym, status: 'CANCELED' });
      expect(subscription.billingKey).toMatchObject({ status: 'REVOKED' });
      await api(`/api/v1/payments?subscriptionId=${id}&limit=100`);
    }
    for (const id of history.paymentIds) await api(`/api/v1/payments/${id}`);
    // A registration and an order show their customer in the window's parameters.
    for (const id of history.registrationIds) expect((await api(`/api/v1/registrations/${id}`)).json().window).toMatchObject({ userId: erasure.pseudonym });
    expect((await api(`/api/v1/orders/${history.orderId}`)).json().window).toMatchObject({ userId: erasure.pseudonym });
    expect((await api(`/api/v1/subscriptions?userId=${encodeURIComponent(history.subject.userId)}`)).json().items).toEqual([]);
    const byPseudonym = (await api(`/api/v1/subscriptions?userId=${erasure.pseudonym}`)).json().items as Array<{ id: string }>;
    expect(byPseudonym.map((s) => s.id).sort()).toEqual([history.cardSubscriptionId, history.mobileSubscriptionId].sort());
  });

  it('the events feed, each event, and webhook bodies sent after the erasure show none of it', async () => {
    const events: Array<{ id: string; type: string; data: { object: { id: string; pseudonym?: string } } }> = [];
    let cursor: string | undefined;
    for (;;) {
      const body = (await api(`/api/v1/events?limit=100${cursor ? `&after=${cursor}` : ''}`)).json() as { items: typeof events; nextCursor?: string | null };
      events.push(...body.items);
      if (!body.nextCursor || body.items.length === 0) break;
      cursor = body.nextCursor;
    }
    expect(events.length).toBeGreaterThan(20);
    for (const event of events.slice(0, 10)) await api(`/api/v1/events/${event.id}`);
    expect(events.filter((e) => e.type === 'customer.erased').map((e) => e.data.object)).toEqual([
      expect.objectContaining({ id: erasure.id, pseudonym: erasure.pseudonym }),
    ]);
    // An old event sent again: its body is rendered now, from the erased rows.
    const old = events.find((e) => e.type === 'subscription.created')!;
    const resent = await app.inject({ method: 'POST', url: `/api/v1/events/${old.id}/resend`, headers: apiHeaders, payload: {} });
    expect(resent.statusCode, resent.body).toBeLessThan(300);
    await waitFor('the resent event delivered', async () => history.webhookBodies.slice(deliveredBefore).some((b) => b.includes(old.id)));
    const sentAfter = history.webhookBodies.slice(deliveredBefore);
    expect(sentAfter.some((b) => b.includes('customer.erased'))).toBe(true);
    expect(sentAfter.flatMap((body) => formsInText(body, needles))).toEqual([]);
  });

  it('no surface that showed the customer shows any of it: API, admin lists, records, audit, exports, console pages', async () => {
    expect(await surfacesShowing(needles)).toEqual([]);
  });

  it('lists by the old userId are empty; by the pseudonym they hold the same records', async () => {
    const user = encodeURIComponent(history.subject.userId);
    expect(JSON.parse(await read({ url: `/admin/subscriptions?userId=${user}`, as: 'admin' })).items).toEqual([]);
    expect(JSON.parse(await read({ url: `/admin/payments?userId=${user}`, as: 'admin' })).items).toEqual([]);
    const payments = JSON.parse(await read({ url: `/admin/payments?userId=${erasure.pseudonym}&limit=100`, as: 'admin' })).items as Array<{ id: string }>;
    expect(payments.map((p) => p.id).sort()).toEqual([...history.paymentIds].sort());
  });

  it('the console shows the pseudonym; searching or filtering by the old userId finds nothing of theirs', async () => {
    for (const id of [history.cardSubscriptionId, history.mobileSubscriptionId]) {
      expect(await read({ url: `/console/subscriptions/${id}`, as: 'console' })).toContain(erasure.pseudonym);
    }
    expect(await read({ url: `/console/search?q=${erasure.pseudonym}`, as: 'console' })).toContain(history.cardSubscriptionId);
    // The page repeats the words searched for, nothing more.
    const search = await read({ url: `/console/search?q=${encodeURIComponent(history.subject.userId)}`, as: 'console' });
    for (const id of [history.cardSubscriptionId, history.mobileSubscriptionId, ...history.paymentIds]) expect(search).not.toContain(id);
    expect(
      formsInText(
        search,
        needles.filter((n) => n.label !== 'userId'),
      ),
    ).toEqual([]);
  });

  it('the portal knows no such customer: a new session is 404 CUSTOMER_NOT_FOUND', async () => {
    const created = await createPortalSession(app, { userId: history.subject.userId });
    expect(created.statusCode, created.body).toBe(404);
    expect(created.json()).toMatchObject({ code: 'CUSTOMER_NOT_FOUND' });
  });

  it('a settlement file imported after the erasure matches the erased payments and keeps no buyer columns for them', async () => {
    const imported = await importCsv(app, await history.settlementFile(), '', { 'idempotency-key': 'settlement-after-erasure' });
    expect(imported.statusCode, imported.body).toBe(201);
    const items = JSON.parse(await read({ url: '/admin/reconciliation?from=2027-01-01&to=2027-04-30&limit=100', as: 'admin' })).items as Array<{
      paymentId?: string | null;
      status: string;
      tradeDate: string;
      transactionId?: string;
    }>;
    const erased = new Set(history.paymentIds);
    const late = items.filter((item) => item.paymentId && erased.has(item.paymentId) && item.tradeDate >= '2027-03-01');
    // The CARD charges of March and April and the MOBILE one of March: lines of the new file, each matched.
    expect(late.length).toBeGreaterThanOrEqual(3);
    expect(late.map((item) => item.status)).toEqual(late.map(() => 'MATCHED'));
    // The new file's lines (those traded from SETTLED_UNTIL on; the earlier ones were imported before and are stored
    // once): the erased customer's without the buyer's columns, the other customer's with theirs, as the file had them.
    const importId = (imported.json() as { id: string }).id;
    const { rows } = await client.query<{ erased: boolean; extra: Record<string, string> | null; tradedAt: Date }>(
      `SELECT l."transactionId" IN (SELECT "transactionId" FROM "payments" WHERE "id" = ANY ($2::uuid[]) AND "transactionId" IS NOT NULL) AS erased,
              l."extra", l."tradedAt"
         FROM "settlement_lines" l WHERE l."importId" = $1`,
      [importId, history.paymentIds],
    );
    expect(rows.every((row) => row.tradedAt >= SETTLED_UNTIL)).toBe(true);
    const erasedLines = rows.filter((row) => row.erased);
    const otherLines = rows.filter((row) => !row.erased);
    expect(erasedLines.length).toBeGreaterThanOrEqual(3);
    expect(erasedLines.map((row) => row.extra)).toEqual(erasedLines.map(() => null));
    expect(otherLines.length).toBeGreaterThan(0);
    for (const row of otherLines) expect(row.extra).toMatchObject({ 구매자명: history.bystander.name, 구매자ID: history.bystander.userId });
    expect(describeHits((await scan(needles)).hits)).toBe('');
  });

  it('a new registration with the same userId is a new customer with nothing of the old one', async () => {
    const id = await subscribe(app, { userId: history.subject.userId, amount: 4_400, orderName: '새 출발' });
    const mine = (
      await app.inject({ method: 'GET', url: `/api/v1/subscriptions?userId=${encodeURIComponent(history.subject.userId)}`, headers: apiHeaders })
    ).json();
    expect(mine.items.map((s: { id: string }) => s.id)).toEqual([id]);
    const payments = (
      await app.inject({ method: 'GET', url: `/admin/payments?userId=${encodeURIComponent(history.subject.userId)}&limit=100`, headers: adminHeaders })
    ).json().items as Array<{ id: string }>;
    expect(payments).toHaveLength(1);
    expect(history.paymentIds).not.toContain(payments[0]!.id);
    // Their portal shows the new subscription only.
    const portal = await openPortal(app, { userId: history.subject.userId, locale: 'en' });
    const overview = await getPage(app, portal.jar, portal.location);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('새 출발');
    for (const old of [history.cardSubscriptionId, history.mobileSubscriptionId]) expect(overview.body).not.toContain(old);
    expect(overview.body).not.toContain('프리미엄 월간');
    const records = await getPage(app, portal.jar, '/portal/records.csv');
    for (const old of history.paymentIds) expect(records.body).not.toContain(old);
  });
});
