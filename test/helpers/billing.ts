// Drives billing months through the public routes: subscribe through the hosted window, set the simulated clock,
// run a charging pass, read subscriptions and payments back (docs/architecture.md "House style": scenario tests).
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders, TEST_ADMIN_TOKEN } from './app.ts';
import { createRegistration, decideWindow, follow } from './checkout.ts';
import type { PassReport } from '../../src/modules/payments/charge.service.ts';

export const adminHeaders = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

export type { PassReport } from '../../src/modules/payments/charge.service.ts';

export interface SubscriptionView {
  id: string;
  method: 'CARD' | 'MOBILE';
  status: string;
  amount: number;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  nextChargeAt: string | null;
  cancelAtPeriodEnd: boolean;
  needsAttention: boolean;
  attentionReason?: string;
  canceledAt?: string;
  cancelReason?: string;
  trialEnd?: string;
  pendingAmount?: number;
  consents: Array<{ id: string; kind: string; obtainedAt: string }>;
  billingKey: { id: string; status: string; method: string };
}

export interface PaymentView {
  id: string;
  kind: string;
  status: string;
  amount: number;
  cycle?: number;
  orderId: string;
  transactionId?: string;
  approvedAt?: string;
  failureCode?: string;
  attempts?: Array<{ orderId: string; outcome: string; attemptNumber: number }>;
}

export async function setClock(app: App, instant: Date | string): Promise<void> {
  const now = typeof instant === 'string' ? instant : instant.toISOString();
  const response = await app.inject({ method: 'PUT', url: '/admin/clock', headers: adminHeaders, payload: { now } });
  if (response.statusCode !== 200) throw new Error(`clock answered ${response.statusCode}: ${response.body}`);
}

export async function runPass(app: App): Promise<PassReport> {
  const response = await app.inject({ method: 'POST', url: '/admin/scheduler/run', headers: adminHeaders });
  if (response.statusCode !== 200) throw new Error(`scheduler/run answered ${response.statusCode}: ${response.body}`);
  return response.json() as PassReport;
}

/** A subscription through the whole public flow: registration, approved window, success redirect. */
export async function subscribe(app: App, terms: Record<string, unknown>): Promise<string> {
  const registration = await createRegistration(app, { userId: 'user-1', method: 'CARD', amount: 9900, orderName: 'Monthly plan', ...terms });
  const window = await decideWindow(app, registration.window);
  const response = await follow(app, window.redirectUrl, { json: true });
  expect(response.statusCode, response.body).toBe(200);
  const subscriptionId = (response.json() as { subscriptionId?: string }).subscriptionId;
  if (!subscriptionId) throw new Error(`no subscription: ${response.body}`);
  return subscriptionId;
}

export async function getSubscription(app: App, id: string): Promise<SubscriptionView> {
  const response = await app.inject({ method: 'GET', url: `/api/v1/subscriptions/${id}`, headers: apiHeaders });
  expect(response.statusCode).toBe(200);
  return response.json() as SubscriptionView;
}

/** Every payment of a subscription in cycle order, with attempts. */
export async function paymentsOf(app: App, subscriptionId: string): Promise<PaymentView[]> {
  const items: PaymentView[] = [];
  let cursor: string | null = null;
  do {
    const response = await app.inject({
      method: 'GET',
      url: `/api/v1/payments?subscriptionId=${subscriptionId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      headers: apiHeaders,
    });
    const page = response.json() as { items: PaymentView[]; nextCursor: string | null };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  const detailed = await Promise.all(
    items.map(async (p) => (await app.inject({ method: 'GET', url: `/api/v1/payments/${p.id}`, headers: apiHeaders })).json() as PaymentView),
  );
  return detailed.sort((a, b) => (a.cycle ?? -1) - (b.cycle ?? -1));
}
