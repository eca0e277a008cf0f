// The service's clock everywhere it writes a time (docs/architecture.md "Development notes", issue 30): with CLOCK=simulated set years away from the
// real date, every time any public route answers is at or after the simulated instant and nowhere near the real
// clock. The answers are walked for ISO-8601 date-times generically, so a time field added later is covered without
// naming it here. Not checked, by the contract's own words: a webhook delivery's times (`deliveries[].nextAttemptAt`,
// `deliveredAt`), the real-time machinery of sending (retries, leases; webhook-timestamp is the real time of sending).
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { createRegistration, decideWindow, follow } from '../helpers/checkout.ts';
import { importCsv, sandboxSettlementFile } from '../helpers/settlement.ts';

const running = useRunningApp({ CLOCK: 'simulated' });

/** Years away from the real clock, in either direction a test machine's date could be. */
const SIMULATED = new Date('2031-05-12T03:00:00.000Z');
const YEAR_MS = 365 * 86_400_000;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
/** Real-time by the contract: the delivery log of webhooks. */
const REAL_TIME_PATHS = [/\.deliveries\[\d+\]\.(nextAttemptAt|deliveredAt)$/];

/** Every ISO date-time string in `value`, with its path. */
function timesIn(value: unknown, path: string, found: Array<{ path: string; value: string }>): void {
  if (typeof value === 'string') {
    if (ISO_DATE_TIME.test(value)) found.push({ path, value });
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) timesIn(item, `${path}[${index}]`, found);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) timesIn(item, `${path}.${key}`, found);
  }
}

describe('with the simulated clock set years from the real date', () => {
  it('every time a public route answers is at or after the simulated instant and years from the real clock', async () => {
    const answers: Array<{ route: string; body: unknown }> = [];
    const call = async (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object, admin = false, status?: number) => {
      const headers = { ...(admin ? adminHeaders : apiHeaders), ...(method === 'GET' ? {} : { 'idempotency-key': crypto.randomUUID() }) };
      const response = await running.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
      if (status !== undefined) expect(response.statusCode, `${method} ${url}: ${response.body}`).toBe(status);
      else expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
      const body = response.body ? (response.json() as Record<string, unknown>) : {};
      answers.push({ route: `${method} ${url.split('?')[0]}`, body });
      return body;
    };
    await setClock(running.app, SIMULATED);

    // A subscription through the window, its consent, a price change, a pause and a resume, a change of terms.
    const registration = await createRegistration(running.app, { userId: 'clock-1', method: 'CARD', amount: 9900, orderName: 'Monthly plan' });
    answers.push({ route: 'POST /api/v1/registrations', body: registration });
    const window = await decideWindow(running.app, registration.window);
    const completed = await follow(running.app, window.redirectUrl, { json: true });
    answers.push({ route: 'GET /billing/success', body: completed.json() });
    const subscriptionId = (completed.json() as { subscriptionId: string }).subscriptionId;
    await call('GET', `/api/v1/registrations/${registration.id}`);
    await call('POST', `/api/v1/subscriptions/${subscriptionId}/consents`, { kind: 'PRICE_INCREASE' }, false, 201);
    await call('POST', `/api/v1/subscriptions/${subscriptionId}/price-change`, { amount: 12900 });
    await call('POST', `/admin/subscriptions/${subscriptionId}/pause`, { reason: 'customer asked' }, true);
    await call('POST', `/admin/subscriptions/${subscriptionId}/resume`, { reason: 'customer asked' }, true);
    await call('PATCH', `/admin/subscriptions/${subscriptionId}`, { orderName: 'Monthly plan+', reason: 'rename' }, true);

    // Refunds: through the gateway, and outside it.
    const [initial] = await paymentsOf(running.app, subscriptionId);
    await call('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 1000, reason: 'goodwill' }, true);
    await call('POST', `/admin/payments/${initial!.id}/refunds/external`, { amount: 500, reason: 'bank transfer', reference: 'TR-9' }, true, 201);

    // A one-time order.
    const order = await call('POST', '/api/v1/orders', { userId: 'clock-1', method: 'CARD', amount: 3000, orderName: 'Once' }, false, 201);
    const paid = await follow(running.app, (await decideWindow(running.app, order.window as never)).redirectUrl, { json: true });
    answers.push({ route: 'GET /payments/success', body: paid.json() });
    await call('GET', `/api/v1/orders/${order.id as string}`);

    // A webhook endpoint (nothing listens: its deliveries fail, and retry in real time).
    const endpoint = await call('POST', '/api/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', eventTypes: ['*'] }, false, 201);
    await call('PATCH', `/api/v1/webhook-endpoints/${endpoint.id as string}`, { description: 'ops' });
    await call('POST', `/api/v1/webhook-endpoints/${endpoint.id as string}/rotate-secret`, { expireOldAfterSeconds: 60 });

    // A renewal a month later, by the scheduler; another trial subscription; a cancel.
    const due = new Date((await getSubscription(running.app, subscriptionId)).nextChargeAt!);
    await setClock(running.app, due);
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const trial = await subscribe(running.app, { userId: 'clock-2', amount: 5000, trialDays: 10 });
    await call('POST', `/api/v1/subscriptions/${trial}/cancel`, {});

    // Reads: each resource, the lists, the events and one event with its deliveries, the audit trail.
    await call('GET', `/api/v1/subscriptions/${subscriptionId}`);
    await call('GET', `/api/v1/subscriptions/${trial}`);
    await call('GET', '/api/v1/subscriptions?limit=100');
    await call('GET', '/api/v1/payments?limit=100');
    for (const payment of (await call('GET', '/admin/payments?limit=100', undefined, true)).items as Array<{ id: string }>) {
      await call('GET', `/api/v1/payments/${payment.id}`);
    }
    await call('GET', '/admin/subscriptions?limit=100', undefined, true);
    await call('GET', `/api/v1/webhook-endpoints/${endpoint.id as string}`);
    await call('GET', '/api/v1/webhook-endpoints');
    const feed = await call('GET', '/api/v1/events?after=0&limit=100');
    expect((feed.items as unknown[]).length).toBeGreaterThan(5);
    for (const event of (feed.items as Array<{ id: string }>).slice(0, 3)) await call('GET', `/api/v1/events/${event.id}`);
    // The clock's own audit entry records its reading before it was set: the real time (a simulated clock follows the
    // system time until set). Every other entry is checked.
    const audit = await call('GET', '/admin/audit?limit=100', undefined, true);
    audit.items = (audit.items as Array<{ action: string }>).filter((entry) => !entry.action.startsWith('clock.'));

    // Reconciliation: the sandbox's settlement file of these payments, imported and read; the reports.
    const imported = await importCsv(running.app, await sandboxSettlementFile(running.app));
    expect(imported.statusCode, imported.body).toBeLessThan(300);
    answers.push({ route: 'POST /admin/settlement-imports', body: imported.json() });
    await call('GET', '/admin/settlement-imports', undefined, true);
    await call('GET', '/admin/reconciliation?from=2031-05-01&to=2031-07-31&limit=100', undefined, true);
    await call('GET', '/admin/reconciliation/summary?from=2031-05-01&to=2031-07-31', undefined, true);
    await call('GET', '/admin/reports/mrr?from=2031-05&to=2031-06', undefined, true);
    await call('GET', '/admin/reports/revenue?from=2031-05-01&to=2031-06-30&granularity=month', undefined, true);

    const found: Array<{ route: string; path: string; value: string }> = [];
    for (const { route, body } of answers) {
      const times: Array<{ path: string; value: string }> = [];
      timesIn(body, '', times);
      for (const time of times) found.push({ route, ...time });
    }
    // The walk found the times the resources carry (createdAt, updatedAt, requestedAt, …), not nothing.
    expect(found.length).toBeGreaterThan(100);
    expect(new Set(found.map((f) => f.path.split('.').at(-1))).size).toBeGreaterThan(15);
    const wall = Date.now();
    const wrong = found
      .filter(({ path }) => !REAL_TIME_PATHS.some((pattern) => pattern.test(path)))
      .filter(({ value }) => {
        const at = new Date(value).getTime();
        return at < SIMULATED.getTime() || Math.abs(at - wall) < YEAR_MS;
      })
      .map(({ route, path, value }) => `${route} ${path} = ${value}`);
    expect(wrong).toEqual([]);
  });
});
