// Subscriptions on the second gateway through the public routes (docs/api.md "Gateways"): a Toss registration, its
// billing authentication approved in the Toss sandbox's window, and the success redirect followed as a browser would.
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders } from './app.ts';
import { follow } from './checkout.ts';

interface TossWindow {
  gateway: 'TOSS';
  clientKey: string;
  customerKey: string;
  successUrl: string;
  failUrl: string;
  url: string;
}

/** The customer approves Toss's window (the sandbox's); its success redirect is followed as a browser would. */
export async function approveTossWindow(app: App, window: Pick<TossWindow, 'clientKey' | 'customerKey' | 'successUrl' | 'failUrl'>) {
  const { clientKey, customerKey, successUrl, failUrl } = window;
  const authorized = await app.inject({
    method: 'POST',
    url: '/sandbox/toss/window/authorize',
    payload: { clientKey, customerKey, successUrl, failUrl, decision: 'approve' },
  });
  expect(authorized.statusCode, authorized.body).toBe(200);
  const done = await follow(app, (authorized.json() as { redirectUrl: string }).redirectUrl, { json: true });
  expect(done.statusCode, done.body).toBe(200);
  return done;
}

/** A CARD subscription through Toss, key-only (due at once: the next pass charges it); its id and its customerKey. */
export async function subscribeThroughToss(app: App, terms: Record<string, unknown>): Promise<{ subscriptionId: string; customerKey: string }> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/registrations',
    headers: apiHeaders,
    payload: { userId: 'user-1', method: 'CARD', amount: 9900, orderName: 'Monthly plan', gateway: 'TOSS', issueKeyOnly: true, ...terms },
  });
  expect(created.statusCode, created.body).toBe(201);
  const { window } = created.json() as { window: TossWindow };
  const done = await approveTossWindow(app, window);
  const subscriptionId = (done.json() as { subscriptionId?: string }).subscriptionId;
  if (!subscriptionId) throw new Error(`no subscription: ${done.body}`);
  return { subscriptionId, customerKey: window.customerKey };
}

/** The Toss sandbox's ledger: every charge and cancel it booked. */
export async function tossLedger(app: App) {
  return (await app.inject({ method: 'GET', url: '/sandbox/toss/_control/ledger' })).json().entries as Array<{
    type: string;
    orderId: string;
    paymentKey: string;
    customerKey: string;
    amount: number;
  }>;
}
