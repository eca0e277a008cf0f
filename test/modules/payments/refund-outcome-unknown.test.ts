// A refund whose outcome is unknown has a way out: GET /admin/payments?needsAttention=true lists it,
// POST /admin/payments/:id/cancel/resolve settles it (audited, idempotent), and then refunds work again. A refund
// left in flight by a dead process becomes unknown once its lease has expired, and is settled the same way.
// (Regression test for issue #12 defect 7.)
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders, paymentsOf, subscribe } from '../../helpers/billing.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

const running = useRunningApp({ PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) });
const admin = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>, key?: string) =>
  running.app.inject({ method, url, headers: { ...adminHeaders, ...(key ? { 'idempotency-key': key } : {}) }, ...(payload ? { payload } : {}) });
const attention = async () => ((await admin('GET', '/admin/payments?needsAttention=true')).json().items as Array<{ id: string }>).map((p) => p.id);

describe('a refund whose outcome is unknown', () => {
  it('is listed, blocks other refunds, and is settled by cancel/resolve', async () => {
    const id = await subscribe(running.app, {});
    const [payment] = await paymentsOf(running.app, id);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'http_500' });
    const lost = await admin('POST', `/admin/payments/${payment!.id}/cancel`, { amount: 1000, reason: 'partial' }, 'r1');
    expect(lost.statusCode).toBe(502);
    const shown = (await admin('GET', `/admin/payments/${payment!.id}`)).json();
    expect(shown).toMatchObject({ refundOutcomeUnknown: true, needsAttention: true, status: 'SUCCEEDED', canceledAmount: 0 });
    expect(await attention()).toEqual([payment!.id]);
    expect((await admin('POST', `/admin/payments/${payment!.id}/cancel`, { amount: 500, reason: 'again' }, 'r2')).statusCode).toBe(409);

    const resolved = await admin(
      'POST',
      `/admin/payments/${payment!.id}/cancel/resolve`,
      { outcome: 'FAILED', reason: 'gateway shows no cancellation' },
      'rr1',
    );
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ refundOutcomeUnknown: false, needsAttention: false, canceledAmount: 0 });
    expect(
      (await admin('POST', `/admin/payments/${payment!.id}/cancel/resolve`, { outcome: 'FAILED', reason: 'gateway shows no cancellation' }, 'rr1')).headers[
        'idempotent-replayed'
      ],
    ).toBe('true');
    expect((await admin('POST', `/admin/payments/${payment!.id}/cancel/resolve`, { outcome: 'SUCCEEDED', reason: 'x' }, 'rr2')).statusCode).toBe(409);
    expect(await attention()).toEqual([]);
    const audit = await running.app.db.auditEvent.findMany({ where: { entityId: payment!.id }, orderBy: { createdAt: 'asc' } });
    expect(audit.map((a) => a.action)).toEqual(['payment.refund', 'payment.refund_resolve_failed']);

    const refunded = await admin('POST', `/admin/payments/${payment!.id}/cancel`, { reason: 'full refund' }, 'r3');
    expect(refunded.statusCode, refunded.body).toBe(200);
    expect(refunded.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 9900 });
  });

  it('resolved SUCCEEDED counts its amount as refunded', async () => {
    const id = await subscribe(running.app, {});
    const [payment] = await paymentsOf(running.app, id);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'timeout' });
    expect((await admin('POST', `/admin/payments/${payment!.id}/cancel`, { amount: 9900, reason: 'full' }, 's1')).statusCode).toBe(502);
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL')).toHaveLength(1);
    const resolved = await admin('POST', `/admin/payments/${payment!.id}/cancel/resolve`, { outcome: 'SUCCEEDED', reason: 'gateway shows it cancelled' }, 's2');
    expect(resolved.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 9900, refundOutcomeUnknown: false });
  });

  it('a refund left in flight by a dead process is settled once its lease has expired', async () => {
    const id = await subscribe(running.app, {});
    const [payment] = await paymentsOf(running.app, id);
    // What a process killed mid-call leaves behind: a CANCEL attempt IN_FLIGHT whose lease has run out.
    await running.app.db.paymentAttempt.create({
      data: {
        paymentId: payment!.id,
        attemptNumber: 9,
        operation: 'CANCEL',
        orderId: 'X-dead-9',
        amount: 9900,
        leaseOwner: 'dead',
        leaseExpiresAt: new Date(Date.now() - 1000),
      },
    });
    expect((await admin('POST', `/admin/payments/${payment!.id}/cancel`, { reason: 'try' }, 'd1')).statusCode).toBe(409);
    expect(await attention()).toEqual([payment!.id]);
    const resolved = await admin('POST', `/admin/payments/${payment!.id}/cancel/resolve`, { outcome: 'FAILED', reason: 'not at the gateway' }, 'd2');
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect((await admin('POST', `/admin/payments/${payment!.id}/cancel`, { reason: 'now' }, 'd3')).statusCode).toBe(200);
  });
});
