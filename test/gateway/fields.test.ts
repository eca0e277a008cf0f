import { describe, expect, it } from 'vitest';
import { BILLING_CONFIRM_REQUEST, utf8Bytes, validateRequest } from '../../src/gateway/fields.ts';
import { parseFields } from '../../src/gateway/client.ts';

const valid = { method: 'CARD', billingKey: 'BK1', userId: 'u', amount: 9900, orderName: '월 구독', merchantId: 'M', orderId: 'o' };

describe('request fields', () => {
  it('counts UTF-8 bytes: Hangul is 3 bytes a syllable', () => {
    expect(utf8Bytes('가'.repeat(33))).toBe(99);
    expect(utf8Bytes('abc')).toBe(3);
  });

  it('accepts a valid CARD request and requires MOBILE fields only for MOBILE', () => {
    expect(validateRequest(BILLING_CONFIRM_REQUEST, valid)).toEqual([]);
    expect(validateRequest(BILLING_CONFIRM_REQUEST, { ...valid, method: 'MOBILE' })).toEqual(['lastTransactionId is required', 'itemCode is required']);
  });

  it('names wrong types and unknown methods', () => {
    expect(validateRequest(BILLING_CONFIRM_REQUEST, { ...valid, amount: '9900', method: 'BANK' })).toEqual([
      'method must be one of CARD, MOBILE',
      'amount must be a number',
    ]);
  });
});

describe('lenient response parsing', () => {
  it('accepts phoneNumber or userPhoneNumber, authOnly or issueKeyOnly, amounts as strings, and keeps unknown fields', () => {
    const { fields } = parseFields({
      code: 'SUCCESS',
      amount: '5500',
      phoneNumber: '0101234',
      authOnly: 'true',
      transactionDateTime: '20260310120000',
      somethingNew: { a: 1 },
    });
    expect(fields).toMatchObject({ amount: 5500, phoneNumber: '0101234', issueKeyOnly: true, extra: { somethingNew: { a: 1 } } });
    expect(fields.transactionDateTime!.toISOString()).toBe('2026-03-10T03:00:00.000Z');
    expect(parseFields({ userPhoneNumber: '0109999', issueKeyOnly: false }).fields).toMatchObject({ phoneNumber: '0109999', issueKeyOnly: false });
  });

  it('treats missing optional fields as absent and flags an amount that is not a whole number', () => {
    expect(parseFields({ code: 'SUCCESS' }).fields).toEqual({
      extra: {},
      transactionId: undefined,
      amount: undefined,
      orderId: undefined,
      transactionDateTime: undefined,
      billingKey: undefined,
      issueKeyOnly: undefined,
      cardInfo: undefined,
      userName: undefined,
      phoneNumber: undefined,
      carrier: undefined,
      cancelAmount: undefined,
    });
    expect(parseFields({ amount: '12.5' }).badAmount).toBe(true);
    expect(parseFields({ transactionDateTime: '20261332000000' }).fields.transactionDateTime).toBeUndefined();
  });
});
