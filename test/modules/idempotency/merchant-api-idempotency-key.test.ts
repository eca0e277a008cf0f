// Every merchant API POST honours Idempotency-Key through the admin routes' mechanism, so a merchant backend can
// retry POST /api/v1/registrations after a network error. (Regression test for issue #12 defect 14.)
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { subscribe } from '../../helpers/billing.ts';

const running = useRunningApp();
const post = (url: string, payload: Record<string, unknown>, key?: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...apiHeaders, ...(key ? { 'idempotency-key': key } : {}) }, payload });

describe('Idempotency-Key on the merchant API', () => {
  it.each([
    ['/api/v1/registrations', { userId: 'u', method: 'CARD', amount: 9900, orderName: 'Plan' }, 'registration'],
    ['/api/v1/orders', { method: 'CARD', amount: 30000, orderName: 'Once' }, 'order'],
  ] as const)('POST %s twice with one key creates one and answers the same', async (url, body, table) => {
    const first = await post(url, body, `k-${table}`);
    expect(first.statusCode).toBe(201);
    const again = await post(url, body, `k-${table}`);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const count = table === 'registration' ? await running.app.db.registration.count() : await running.app.db.order.count();
    expect(count).toBe(1);
    const other = await post(url, { ...body, amount: 1000 }, `k-${table}`);
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    // Without a key each POST creates, as before.
    expect((await post(url, body)).statusCode).toBe(201);
  });

  it('POST /api/v1/subscriptions/:id/cancel replays with the same key', async () => {
    const id = await subscribe(running.app, {});
    const first = await post(`/api/v1/subscriptions/${id}/cancel`, { atPeriodEnd: true }, 'cancel-1');
    expect(first.statusCode).toBe(200);
    const again = await post(`/api/v1/subscriptions/${id.toUpperCase()}/cancel`, { atPeriodEnd: true }, 'cancel-1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
  });
});
