// The console lists' filters (src/modules/console/list-filters.ts) and their streamed CSV (list-export.ts).
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { csvPages, SUBSCRIPTION_COLUMNS } from '../../../src/modules/console/list-export.ts';
import { ConsolePaymentsQuery, dropBlankFields, listHref, toAdminFilter } from '../../../src/modules/console/list-filters.ts';
import type { SubscriptionView } from '../../../src/modules/subscriptions/subscriptions.read.ts';
import { serializeSubscription } from '../../../src/modules/subscriptions/subscriptions.shape.ts';

describe('console list filters', () => {
  it('are the admin filters with Korea dates for the creation window', () => {
    expect(Object.keys(ConsolePaymentsQuery.properties).sort()).toEqual(
      ['cursor', 'from', 'gateway', 'kind', 'limit', 'method', 'needsAttention', 'status', 'subscriptionId', 'to', 'userId'].sort(),
    );
    const check = Compile(ConsolePaymentsQuery);
    expect(check.Check({ status: 'UNKNOWN', from: '2026-11-01', limit: 20 })).toBe(true);
    expect(check.Check({ createdFrom: '2026-11-01T00:00:00Z', limit: 20 })).toBe(false);
    expect(check.Check({ status: 'LOST', limit: 20 })).toBe(false);
    expect(check.Check({ gateway: 'TOSS', limit: 20 })).toBe(true);
    expect(check.Check({ gateway: 'KCP', limit: 20 })).toBe(false);
  });

  it('turn both dates into a window that includes them, in Korea time', () => {
    expect(toAdminFilter({ status: 'FAILED', from: '2026-11-01', to: '2026-11-30', limit: 20 })).toEqual({
      status: 'FAILED',
      limit: 20,
      createdFrom: '2026-10-31T15:00:00.000Z',
      createdTo: '2026-11-30T15:00:00.000Z',
    });
    expect(toAdminFilter({ limit: 20 })).toEqual({ limit: 20 });
    expect(() => toAdminFilter({ from: '2026-11-02', to: '2026-11-01' })).toThrow(/before/);
  });

  it('drop the blank fields a form sends, and link a next page with the same filters', () => {
    expect(dropBlankFields({ status: '', method: 'CARD', userId: '' })).toEqual({ method: 'CARD' });
    expect(listHref('/console/payments', { method: 'CARD', status: undefined, limit: 20, cursor: 'old' }, 'next+/=')).toBe(
      '/console/payments?method=CARD&limit=20&cursor=next%2B%2F%3D',
    );
    expect(listHref('/console/payments', {})).toBe('/console/payments');
  });
});

describe('csvPages', () => {
  it('writes the head once, then every page the reader gives until it has no next cursor', async () => {
    const pages: Record<string, { items: Array<{ id: string; amount?: number }>; nextCursor: string | null }> = {
      start: { items: [{ id: 'a', amount: 1 }, { id: 'b' }], nextCursor: 'p2' },
      p2: { items: [{ id: 'c', amount: 3 }], nextCursor: null },
    };
    const asked: Array<[string | undefined, number]> = [];
    const chunks: string[] = [];
    for await (const chunk of csvPages(
      ['id', 'amount'],
      async (cursor, limit) => {
        asked.push([cursor, limit]);
        return pages[cursor ?? 'start']!;
      },
      2,
    ))
      chunks.push(chunk);
    expect(asked).toEqual([
      [undefined, 2],
      ['p2', 2],
    ]);
    expect(chunks.join('')).toBe('\uFEFFid,amount\r\na,1\r\nb,\r\nc,3\r\n');
  });
});

describe('the subscriptions export', () => {
  it('has a column for every field of the public shape, in its order, consents left out (a list of their own)', () => {
    const at = new Date(Date.UTC(2026, 10, 1));
    // Every optional field present, so that every field the shape can show is shown.
    const row: SubscriptionView = {
      id: 'sub',
      userId: 'user',
      method: 'CARD',
      status: 'ACTIVE',
      amount: 9900,
      orderName: 'Plan',
      intervalUnit: 'month',
      intervalCount: 1,
      itemCode: 'ITEM01',
      currentPeriodStart: at,
      currentPeriodEnd: at,
      nextChargeAt: at,
      usageStartedAt: at,
      cancelAtPeriodEnd: true,
      canceledAt: at,
      cancelReason: 'asked',
      trialEnd: at,
      pendingAmount: 12900,
      needsAttention: true,
      attentionReason: 'PAYMENT_OUTCOME_UNKNOWN',
      refundDue: 5500,
      createdAt: at,
      updatedAt: at,
      billingKey: {
        id: 'key',
        method: 'CARD',
        gateway: 'DANAL',
        status: 'ACTIVE',
        cardName: 'Card',
        cardNumber: '1234',
        carrier: 'SKT',
        phoneNumber: '010-1234-5678',
      },
      consents: [],
    };
    const paths = (value: object, prefix = ''): string[] =>
      Object.entries(value).flatMap(([key, field]) =>
        field !== null && typeof field === 'object' && !Array.isArray(field) ? paths(field, `${prefix}${key}.`) : [`${prefix}${key}`],
      );
    const shown = paths(serializeSubscription(row)).filter((path) => path !== 'consents');
    expect(shown).toHaveLength(32);
    expect(SUBSCRIPTION_COLUMNS).toEqual(shown);
  });
});
