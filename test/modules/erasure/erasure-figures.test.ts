// An erasure changes no figure (docs/operating.md "A customer asks to be forgotten"; docs/architecture.md, invariant
// 15): the reports (MRR, revenue by day and by month, recovery; JSON and CSV), the reconciliation (its items, JSON
// and CSV, its summary, the settlement imports) answer the same before and after it, and the erased customer's kept
// records keep every money amount, id, code and time: only the values that held personal data change.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { apiHeaders, startTestApp } from '../../helpers/app.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { buildFullHistory, eraseCustomer, type ErasureView, type FullHistory } from '../../helpers/full-history-customer.ts';
import { formsInText, type Needle } from '../../helpers/personal-data-scan.ts';

let database: TestDatabase;
let app: App;
let history: FullHistory;

/** Every report and reconciliation read, JSON and CSV: the figures an erasure must leave as they were. */
const FIGURES = [
  '/admin/reports/mrr?from=2026-12&to=2027-06',
  '/admin/reports/revenue?from=2027-01-01&to=2027-04-30',
  '/admin/reports/revenue?from=2027-01-01&to=2027-04-30&granularity=month',
  '/admin/reports/recovery?from=2026-12&to=2027-06',
  '/admin/reconciliation?from=2027-01-01&to=2027-04-30&limit=100',
  '/admin/reconciliation/summary?from=2027-01-01&to=2027-04-30',
  '/admin/settlement-imports',
];

async function figures(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const url of FIGURES) {
    for (const accept of ['application/json', 'text/csv']) {
      // The CSV variants exist for the reports and the reconciliation list; elsewhere the JSON answers either way.
      const response = await app.inject({ method: 'GET', url, headers: { ...adminHeaders, accept } });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      out[`${accept} ${url}`] = response.body;
    }
  }
  return out;
}

/** Each leaf of a JSON value by its path (arrays by index). */
function leaves(value: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) leaves(child, path ? `${path}.${key}` : key, out);
  } else {
    out.set(path, value);
  }
  return out;
}

async function adminJson(url: string): Promise<unknown> {
  const response = await app.inject({ method: 'GET', url, headers: adminHeaders });
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.json();
}

const recordUrls = () => [
  ...[history.cardSubscriptionId, history.mobileSubscriptionId].map((id) => `/admin/subscriptions/${id}`),
  ...history.paymentIds.map((id) => `/admin/payments/${id}`),
  ...history.registrationIds.map((id) => `/api/v1/registrations/${id}`),
  `/api/v1/orders/${history.orderId}`,
];

async function records(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const url of recordUrls()) {
    out[url] = url.startsWith('/api/') ? (await app.inject({ method: 'GET', url, headers: apiHeaders })).json() : await adminJson(url);
  }
  return out;
}

/** Counts and sums of every money table, straight from the database. */
async function ledger(): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM payments) AS payments, (SELECT sum(amount) FROM payments) AS amount,
              (SELECT sum("canceledAmount") FROM payments) AS canceled,
              (SELECT string_agg(status::text || ':' || amount, ',' ORDER BY id) FROM payments) AS "byPayment",
              (SELECT count(*) FROM payment_attempts) AS attempts,
              (SELECT string_agg(status::text || ':' || amount || ':' || coalesce("transactionId", '-') || ':' || coalesce("gatewayCode", '-'), ',' ORDER BY id) FROM payment_attempts) AS outcomes,
              (SELECT count(*) FROM external_refunds) AS external, (SELECT sum(amount) FROM external_refunds) AS "externalAmount",
              (SELECT count(*) FROM settlement_lines) AS lines, (SELECT sum(amount) FROM settlement_lines) AS "lineAmount",
              (SELECT count(*) FROM mrr_movements) AS movements,
              (SELECT count(*) FROM revenue_days) AS "revenueDays", (SELECT count(*) FROM mrr_months) AS "mrrMonths"`,
    );
    return rows[0] as Record<string, string>;
  } finally {
    await client.end();
  }
}

let before: {
  figures: Record<string, string>;
  records: Record<string, unknown>;
  bystander: unknown;
  ledger: Record<string, string>;
  bystanderPayments: number;
};
let after: typeof before;
let erasure: ErasureView;
let needles: Needle[];

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated', WEBHOOK_RETRY_DELAYS: '50ms,50ms,50ms' } }));
  history = await buildFullHistory(app);
  needles = [
    ...history.subject.needles,
    ...(history.masked.cardNumber ? [{ label: 'masked card number', value: history.masked.cardNumber }] : []),
    ...(history.masked.phoneNumber ? [{ label: 'masked phone number', value: history.masked.phoneNumber }] : []),
  ];
  // Their subscriptions end first, by the operator, so that the erasure itself has nothing to cancel: the figures
  // before and after then describe the same ledger.
  for (const id of [history.cardSubscriptionId, history.mobileSubscriptionId]) {
    const canceled = await app.inject({
      method: 'POST',
      url: `/admin/subscriptions/${id}/cancel`,
      headers: { ...adminHeaders, 'idempotency-key': `cancel-${id}` },
      payload: { reason: '고객 요청: 탈퇴' },
    });
    expect(canceled.statusCode, canceled.body).toBe(200);
  }
  before = {
    figures: await figures(),
    records: await records(),
    bystander: await adminJson(`/admin/subscriptions/${history.bystanderSubscriptionId}`),
    ledger: await ledger(),
    bystanderPayments: ((await adminJson(`/admin/payments?userId=${history.bystander.userId}&limit=100`)) as { items: unknown[] }).items.length,
  };
  const response = await eraseCustomer(app, history.subject.userId);
  expect(response.statusCode, response.body).toBe(201);
  erasure = response.json() as ErasureView;
  after = {
    figures: await figures(),
    records: await records(),
    bystander: await adminJson(`/admin/subscriptions/${history.bystanderSubscriptionId}`),
    ledger: await ledger(),
    bystanderPayments: ((await adminJson(`/admin/payments?userId=${history.bystander.userId}&limit=100`)) as { items: unknown[] }).items.length,
  };
});

afterAll(async () => {
  await history?.close();
  await app?.close();
  await database?.drop();
});

describe('the figures after an erasure', () => {
  it('every report and reconciliation read answers the same, JSON and CSV', () => {
    for (const key of Object.keys(before.figures)) expect(after.figures[key], key).toBe(before.figures[key]);
    // They are figures of this ledger, not empty pages that would match anything.
    expect(before.figures['application/json /admin/reports/revenue?from=2027-01-01&to=2027-04-30&granularity=month']).toMatch(/"net":[1-9]/);
    expect(before.figures['application/json /admin/reconciliation?from=2027-01-01&to=2027-04-30&limit=100']).toContain('"MATCHED"');
  });

  it('counts what it pseudonymised', () => {
    expect(erasure.counts).toMatchObject({
      subscriptions: 2,
      registrations: 2,
      orders: 1,
      billingKeys: 2,
      payments: history.paymentIds.length,
    });
  });

  it('the erased records keep every amount, id, code and time; only values that held personal data change', () => {
    // A billing key is revoked by the erasure (its state, not a figure); updatedAt says when the row last changed, and
    // the erasure changes it; the personal fields are what it clears, whatever they held (a masked "****" too).
    const mayChange = (path: string) =>
      /(^|\.)billingKey\.status$/.test(path) ||
      /(^|\.)updatedAt$/.test(path) ||
      /(^|\.)(userName|userPhoneNumber|phoneNumber|cardNumber|reference)$/.test(path);
    const changed: string[] = [];
    for (const url of recordUrls()) {
      const was = leaves(before.records[url]);
      const now = leaves(after.records[url]);
      for (const [path, value] of was) {
        const personal = typeof value === 'string' && formsInText(value, needles).length > 0;
        if (personal || mayChange(path)) continue;
        if (now.get(path) !== value) changed.push(`${url} ${path}: ${JSON.stringify(value)} → ${JSON.stringify(now.get(path))}`);
      }
      // Where the old userId stood, the pseudonym stands.
      for (const [path, value] of was) if (value === history.subject.userId) expect(now.get(path), `${url} ${path}`).toBe(erasure.pseudonym);
    }
    expect(changed).toEqual([]);
  });

  it('the other customer’s subscription is untouched', () => {
    expect(after.bystander).toEqual(before.bystander);
  });
});

describe('the database after an erasure', () => {
  it('keeps every money row: payments, attempts, refunds, settlement lines and the reports’ rollups sum the same', () => {
    expect(after.ledger).toEqual(before.ledger);
    expect(Number(before.ledger.payments)).toBe(history.paymentIds.length + before.bystanderPayments);
    expect(Number(before.ledger.externalAmount)).toBe(1_000);
  });
});
