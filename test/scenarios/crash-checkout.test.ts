// Issue #12 defect 6: a process killed mid-call left key issuance, order confirmation and refund attempts IN_FLIGHT
// forever (only billing charges were swept). The one sweeper turns every expired attempt UNKNOWN and raises what it
// belongs to: the registration and the order wait for an operator, the refund shows as unknown. Nothing is re-sent.
import { describe, expect, it } from 'vitest';
import { leasesExpired, SERVICE_ADMIN_TOKEN, SERVICE_API_KEY, useServiceAgainstSandbox, waitFor } from '../helpers/service.ts';

const LEASE_MS = 2000;
const service = useServiceAgainstSandbox();
const startServer = () => service.start({ SCHEDULER_LEASE_MS: String(LEASE_MS) });
const API_KEY = SERVICE_API_KEY;
const ADMIN_TOKEN = SERVICE_ADMIN_TOKEN;

/** How many uses of the queued faults no call has taken yet. */
const faultUsesLeft = async () =>
  ((await (await fetch(`${service.sandbox.url}/_control/faults`)).json()) as { faults: Array<{ count: number }> }).faults.reduce((n, f) => n + f.count, 0);

const api = (base: string, path: string, body?: unknown, token = API_KEY, key?: string) =>
  fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function checkout(base: string, path: '/api/v1/registrations' | '/api/v1/orders', terms: Record<string, unknown>) {
  const created = (await (await api(base, path, terms)).json()) as { id: string; window: Record<string, unknown> };
  const window = created.window;
  const approved = await service.sandbox.authorize({
    method: window.paymentsMethod as 'CARD',
    orderId: window.orderId as string,
    orderName: window.orderName as string,
    amount: window.amount as number,
    userId: (window.userId as string) ?? 'guest',
    successUrl: window.successUrl as string,
    failUrl: window.failUrl as string,
    issueKeyOnly: window.issueKeyOnly as boolean,
  });
  return { id: created.id, redirectUrl: approved.redirectUrl };
}

describe('a process killed during key issuance, an order confirmation and a refund', () => {
  it('leaves every attempt UNKNOWN after its lease, each owner raised, and sends nothing again', async () => {
    const first = await startServer();
    // A payment to refund later: an order confirmed normally.
    const paid = await checkout(first.base, '/api/v1/orders', { method: 'CARD', amount: 5000, orderName: 'Paid' });
    expect((await fetch(paid.redirectUrl, { headers: { accept: 'application/json' } })).status).toBe(200);
    const paidPayment = await service.db.payment.findFirstOrThrow({ where: { oneTimeOrderId: paid.id } });

    const registration = await checkout(first.base, '/api/v1/registrations', { userId: 'crash-reg', method: 'CARD', amount: 9900, orderName: 'Plan' });
    const order = await checkout(first.base, '/api/v1/orders', { method: 'CARD', amount: 7000, orderName: 'Once' });
    const bookedBefore = (await service.sandbox.ledger()).length;
    // Every call is held by the gateway until after the process is gone.
    await service.sandbox.fault({ operation: 'ANY', kind: 'latency', until: 'released', count: 3 });
    const calls = [
      fetch(registration.redirectUrl, { headers: { accept: 'application/json' } }).catch(() => undefined),
      fetch(order.redirectUrl, { headers: { accept: 'application/json' } }).catch(() => undefined),
      api(first.base, `/admin/payments/${paidPayment.id}/cancel`, { reason: 'refund' }, ADMIN_TOKEN, 'crash-refund').catch(() => undefined),
    ];
    // In flight in our database and received by the gateway (held there), so that all three are booked once released.
    await waitFor(
      'three calls in flight',
      async () => (await service.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) === 3 && (await faultUsesLeft()) === 0,
    );
    await service.sandbox.held(3);
    await first.kill();
    await Promise.all(calls);
    expect((await service.db.paymentAttempt.findMany({ where: { status: 'IN_FLIGHT' } })).map((a) => a.operation).sort()).toEqual([
      'CANCEL',
      'ISSUE_KEY',
      'PAYMENT_CONFIRM',
    ]);

    // The gateway books the three held calls once released, after the process is gone; then the leases of the
    // attempts, the registration and the order run out.
    expect(await service.sandbox.release()).toBe(3);
    await waitFor('the three held calls booked', async () => (await service.sandbox.ledger()).length >= bookedBefore + 3);
    await waitFor('every lease expired', () => leasesExpired(service.db));
    const ledgerBefore = await service.sandbox.ledger();
    const second = await startServer();
    expect((await (await api(second.base, '/admin/scheduler/run', {}, ADMIN_TOKEN)).json()) as object).toMatchObject({ claimed: 0 });

    expect(await service.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })).toBe(0);
    const attempts = await service.db.paymentAttempt.findMany({ where: { operation: { in: ['ISSUE_KEY', 'PAYMENT_CONFIRM', 'CANCEL'] }, status: 'UNKNOWN' } });
    expect(attempts.map((a) => a.operation).sort()).toEqual(['CANCEL', 'ISSUE_KEY', 'PAYMENT_CONFIRM']);
    expect((await (await api(second.base, `/api/v1/registrations/${registration.id}`)).json()) as object).toMatchObject({ status: 'NEEDS_ATTENTION' });
    expect((await (await api(second.base, `/api/v1/orders/${order.id}`)).json()) as object).toMatchObject({ status: 'NEEDS_ATTENTION' });
    expect((await (await api(second.base, `/admin/payments/${paidPayment.id}`, undefined, ADMIN_TOKEN)).json()) as object).toMatchObject({
      status: 'SUCCEEDED',
      refundOutcomeUnknown: true,
    });
    const listed = ((await (await api(second.base, '/admin/payments?needsAttention=true', undefined, ADMIN_TOKEN)).json()) as { items: Array<{ id: string }> })
      .items;
    expect(listed).toHaveLength(3);
    // The sweep sent nothing.
    expect(await service.sandbox.ledger()).toEqual(ledgerBefore);
  });
});
