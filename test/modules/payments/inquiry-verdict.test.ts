// What a lookup's answer proves (src/modules/payments/inquire-unknowns.ts inquiryVerdict; docs/architecture.md
// "Unknown outcomes a gateway can be asked about"): an approval finishes only with our amount and a payment id;
// "nothing charged" only once the call's lease has long passed; anything else is asked again. Pure: the answers are
// the adapter's result shapes (the scenario test/scenarios/toss-inquiry.test.ts drives them through the Toss sandbox).
import { describe, expect, it } from 'vitest';
import type { GatewayResult } from '../../../src/gateway/gateway.ts';
import { inquiryVerdict } from '../../../src/modules/payments/inquire-unknowns.ts';

const now = new Date('2027-05-10T02:00:00.000Z');
const settled = new Date(now.getTime() - 1);
const tooSoon = new Date(now.getTime() + 1);
const answer = (result: Partial<GatewayResult>): GatewayResult => ({
  operation: 'INQUIRY',
  outcome: 'UNKNOWN',
  reason: 'TIMEOUT',
  fields: { extra: {} },
  durationMs: 1,
  ...result,
});
const approved = (amount: number, transactionId?: string) =>
  answer({ outcome: 'SUCCEEDED', reason: 'APPROVED', fields: { transactionId, amount, orderId: 'S1-1-1', transactionDateTime: now, extra: {} } });

describe('inquiryVerdict', () => {
  it('finishes an approval of our amount SUCCEEDED with the payment id and approval time', () => {
    expect(inquiryVerdict(approved(15000, 'pk_1'), { amount: 15000 }, now, tooSoon)).toEqual({
      result: 'APPROVED',
      finish: { outcome: 'SUCCEEDED', transactionId: 'pk_1', approvedAt: now },
    });
  });

  it('never finishes an approval of another amount, or without a payment id: it stops asking, for an operator', () => {
    expect(inquiryVerdict(approved(14000, 'pk_1'), { amount: 15000 }, now, settled)).toEqual({ result: 'MISMATCH', stop: true });
    expect(inquiryVerdict(approved(15000), { amount: 15000 }, now, settled)).toEqual({ result: 'MISMATCH', stop: true });
  });

  it('believes "nothing charged" only once the lease has long passed, with the gateway’s code', () => {
    const notFound = answer({ outcome: 'DECLINED', reason: 'DECLINED', decline: 'MAY_RECOVER', code: 'NOT_FOUND_PAYMENT', httpStatus: 404 });
    expect(inquiryVerdict(notFound, { amount: 15000 }, now, tooSoon)).toEqual({ result: 'NOT_PAID' });
    expect(inquiryVerdict(notFound, { amount: 15000 }, now, settled)).toEqual({ result: 'NOT_PAID', finish: { outcome: 'FAILED', code: 'NOT_FOUND_PAYMENT' } });
  });

  it('asks again on anything undecided or refused', () => {
    expect(inquiryVerdict(answer({ reason: 'UNEXPECTED_STATUS', detail: 'payment status IN_PROGRESS' }), { amount: 1 }, now, settled)).toEqual({
      result: 'UNDECIDED',
    });
    expect(inquiryVerdict(answer({ reason: 'HTTP_5XX' }), { amount: 1 }, now, settled)).toEqual({ result: 'UNDECIDED' });
    expect(inquiryVerdict(answer({ outcome: 'NOT_SENT', reason: 'REFUSED_UNPROCESSED' }), { amount: 1 }, now, settled)).toEqual({ result: 'REFUSED' });
  });
});
