// The pure decision of a success redirect (checkout.steps.ts): in which order a finished checkout, an expired state,
// a window failure, the redirect's echoes and a use case's own refusal are considered, before anything is written.
import { describe, expect, it } from 'vitest';
import { decideSuccess, type CheckoutRow } from '../../../src/modules/checkout/checkout.steps.ts';
import { failure, success } from '../../../src/modules/checkout/checkout.result.ts';

const now = new Date('2026-03-01T00:00:00Z');
const row: CheckoutRow = {
  id: 'r1',
  status: 'PENDING',
  orderId: 'R1',
  transactionId: null,
  expiresAt: new Date('2026-03-01T00:30:00Z'),
  leaseOwner: null,
  returnUrl: null,
};
const ids = { registrationId: 'r1', returnUrl: null };
const redirect = { state: 's', transactionId: 'T1', code: 'SUCCESS', orderId: 'R1' };

describe('decideSuccess', () => {
  it('sends the transaction when every check passes', () => {
    expect(decideSuccess('registration', row, redirect, now, { ids, settled: undefined })).toEqual({ next: 'send', transactionId: 'T1' });
  });

  it('answers a finished checkout first, even past its expiry or with a failed window (a replay calls nothing)', () => {
    const done = success({ ...ids, subscriptionId: 'sub' });
    const late = { ...row, expiresAt: new Date('2026-02-01T00:00:00Z') };
    expect(decideSuccess('registration', late, { ...redirect, code: 'DENIED' }, now, { ids, settled: done })).toEqual({ next: 'answer', answer: done });
  });

  it('expires a state that ran out before a transaction was attached, and only then', () => {
    const late = { ...row, expiresAt: now };
    expect(decideSuccess('order', late, redirect, now, { ids, settled: undefined })).toEqual({
      next: 'expire',
      answer: failure('STATE_EXPIRED', 'This order has expired; ask for a new one', ids),
    });
    const attached = { ...late, transactionId: 'T1' };
    expect(decideSuccess('order', attached, redirect, now, { ids, settled: undefined })).toEqual({ next: 'send', transactionId: 'T1' });
  });

  it('takes a window code other than SUCCESS as a window failure, before the echoes are checked', () => {
    expect(decideSuccess('registration', row, { state: 's', code: 'USER_CANCEL' }, now, { ids, settled: undefined })).toEqual({ next: 'window-failed' });
  });

  it('refuses a redirect whose echoes do not match before the use case’s own refusal', () => {
    const own = failure('AMOUNT_MISMATCH', 'amount', ids);
    const wrongOrder = decideSuccess('order', row, { ...redirect, orderId: 'OTHER' }, now, { ids, settled: undefined, refused: own });
    expect(wrongOrder).toMatchObject({ next: 'answer', answer: { code: 'ORDER_MISMATCH' } });
    expect(decideSuccess('order', row, redirect, now, { ids, settled: undefined, refused: own })).toEqual({ next: 'answer', answer: own });
    const missing = decideSuccess('registration', row, { state: 's' }, now, { ids, settled: undefined });
    expect(missing).toMatchObject({ next: 'answer', answer: { code: 'VALIDATION_ERROR' } });
  });
});
