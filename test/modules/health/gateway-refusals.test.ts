// Which answers mark a gateway as refusing our configuration and which clear it (src/modules/health/gateway-refusals.ts):
// a refusal marks it with its code, keeping the first time; an answer given under our credentials clears it; an answer
// that proves nothing either way (no connection, a timeout, a 5xx) leaves it as it was. Pure: no gateway is called,
// the answers are written as the adapters classify them (the Toss sandbox's 401 is the scenario test's,
// test/scenarios/toss-outcomes.test.ts).
import { describe, expect, it } from 'vitest';
import type { GatewayResult } from '../../../src/gateway/gateway.ts';
import { createGatewayRefusals } from '../../../src/modules/health/gateway-refusals.ts';

const answer = (result: Partial<GatewayResult>): GatewayResult => ({
  operation: 'BILLING_CONFIRM',
  outcome: 'NOT_SENT',
  reason: 'REFUSED_UNPROCESSED',
  fields: { extra: {} },
  durationMs: 1,
  ...result,
});

const refused = answer({ httpStatus: 401, code: 'UNAUTHORIZED_KEY' });

describe('gateway refusals', () => {
  it('marks a refused gateway with its code and first time, and counts only refusals as such', () => {
    let now = new Date('2027-01-01T00:00:00Z');
    const refusals = createGatewayRefusals({ now: () => now });
    expect(refusals.observe('TOSS', refused)).toBe(true);
    now = new Date('2027-01-01T00:05:00Z');
    expect(refusals.observe('TOSS', answer({ httpStatus: 400, code: 'INVALID_API_KEY' }))).toBe(true);
    expect(refusals.refused()).toEqual([
      { gateway: 'TOSS', code: 'INVALID_API_KEY', since: new Date('2027-01-01T00:00:00Z'), lastAt: new Date('2027-01-01T00:05:00Z') },
    ]);
    // A local refusal or an unconfigured gateway's NOT_SENT is not the gateway refusing us.
    expect(refusals.observe('DANAL', answer({ reason: 'INVALID_REQUEST' }))).toBe(false);
    expect(refusals.refused().map((r) => r.gateway)).toEqual(['TOSS']);
  });

  it('keeps the refusal through answers that prove nothing, and clears it at one given under our credentials', () => {
    const refusals = createGatewayRefusals({ now: () => new Date('2027-01-01T00:00:00Z') });
    refusals.observe('TOSS', refused);
    for (const nothing of [
      answer({ reason: 'CONNECT_FAILED' }),
      answer({ outcome: 'UNKNOWN', reason: 'TIMEOUT' }),
      answer({ outcome: 'UNKNOWN', reason: 'HTTP_5XX', httpStatus: 500 }),
      answer({ outcome: 'UNKNOWN', reason: 'MALFORMED_BODY', httpStatus: 401 }),
    ]) {
      expect(refusals.observe('TOSS', nothing)).toBe(false);
      expect(refusals.refused()).toHaveLength(1);
    }
    for (const normal of [
      answer({ outcome: 'SUCCEEDED', reason: 'APPROVED', httpStatus: 200 }),
      answer({ outcome: 'DECLINED', reason: 'DECLINED', httpStatus: 403, code: 'REJECT_CARD_PAYMENT', decline: 'MAY_RECOVER' }),
      answer({ outcome: 'UNKNOWN', reason: 'MAY_HAVE_CHARGED', httpStatus: 400, code: 'ALREADY_PROCESSED_PAYMENT' }),
      answer({ outcome: 'UNKNOWN', reason: 'AMOUNT_MISMATCH', httpStatus: 200 }),
    ]) {
      refusals.observe('TOSS', refused);
      refusals.observe('TOSS', normal);
      expect(refusals.refused()).toEqual([]);
    }
  });
});
