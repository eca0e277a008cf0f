// GET /metrics in Prometheus text format: gateway calls by gateway, operation and outcome, their latency, the due backlog,
// subscriptions needing attention, UNKNOWN payments and HTTP requests, all moved by real traffic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { sandboxFault } from '../helpers/checkout.ts';
import { runPass, subscribe } from '../helpers/billing.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';

let database: TestDatabase;
let app: App;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app, baseUrl } = await startTestApp(database.url));
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

/** The value of one sample line, e.g. metric('x_total{a="b"}'). */
async function scrape(): Promise<(sample: string) => number | undefined> {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/text\/plain/);
  const lines = response.body.split('\n');
  return (sample) => {
    const line = lines.find((l) => l.startsWith(`${sample} `));
    return line === undefined ? undefined : Number(line.slice(sample.length + 1));
  };
}

describe('GET /metrics', () => {
  it('counts gateway calls and HTTP requests, and reports the backlog and what needs attention', async () => {
    await subscribe(app, {});
    await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), {
      count: 5,
      sandboxUrl: `${baseUrl}/sandbox`,
      dueAt: new Date(Date.now() - 60_000),
    });
    let metric = await scrape();
    expect(metric('billing_due_subscriptions')).toBe(5);
    expect(metric('billing_gateway_calls_total{gateway="DANAL",operation="ISSUE_KEY",outcome="SUCCEEDED"}')).toBe(1);
    expect(metric('http_requests_total{method="POST",route="/api/v1/registrations",status_code="201"}')).toBe(1);

    await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 2 });
    await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    expect(await runPass(app)).toMatchObject({ claimed: 5, succeeded: 2, declined: 2, unknown: 1 });

    metric = await scrape();
    expect(metric('billing_gateway_calls_total{gateway="DANAL",operation="BILLING_CONFIRM",outcome="SUCCEEDED"}')).toBe(2);
    expect(metric('billing_gateway_calls_total{gateway="DANAL",operation="BILLING_CONFIRM",outcome="DECLINED"}')).toBe(2);
    expect(metric('billing_gateway_calls_total{gateway="DANAL",operation="BILLING_CONFIRM",outcome="UNKNOWN"}')).toBe(1);
    expect(metric('billing_gateway_call_duration_seconds_count{gateway="DANAL",operation="BILLING_CONFIRM"}')).toBe(5);
    expect(metric('billing_subscriptions_needing_attention{reason="PAYMENT_OUTCOME_UNKNOWN"}')).toBe(1);
    expect(metric('billing_payments_unknown')).toBe(1);
    expect(metric('billing_due_subscriptions')).toBe(0);
    expect(metric('http_requests_total{method="POST",route="/admin/scheduler/run",status_code="200"}')).toBe(1);
    expect(metric('process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });
});
