// The mounted sandbox remembers across restarts what it issued, like the real gateway: a walkthrough that restarts
// the service still has its billing keys accepted, its MOBILE chain continued and its charges refundable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { sandboxLedger } from '../helpers/checkout.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const ENV = { CLOCK: 'simulated' };

let database: TestDatabase;
const apps: App[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await database?.drop();
});

async function start(): Promise<App> {
  const { app } = await startTestApp(database.url, { env: ENV });
  apps.push(app);
  return app;
}

describe('sandbox state across a restart', () => {
  it('keys, the MOBILE chain, the ledger and refundable charges survive; a reset forgets them', async () => {
    const first = await start();
    await setClock(first, kst('2027-03-10T09:00:00'));
    const card = await subscribe(first, { userId: 'restart-card' });
    const mobile = await subscribe(first, { userId: 'restart-mobile', method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', userPhoneNumber: '01012345678' });
    const ledger = await sandboxLedger(first);
    expect(ledger.filter((e) => e.type === 'CHARGE')).toHaveLength(2);
    await first.close();

    const second = await start();
    expect(await sandboxLedger(second)).toEqual(ledger);
    await setClock(second, kst('2027-04-10T09:00:00'));
    expect(await runPass(second)).toMatchObject({ claimed: 2, succeeded: 2, declined: 0, unknown: 0 });
    expect((await getSubscription(second, mobile)).status).toBe('ACTIVE');
    expect((await sandboxLedger(second)).filter((e) => e.type === 'CHARGE')).toHaveLength(4);

    // A charge made before the restart is still refundable.
    const [initial] = await paymentsOf(second, card);
    const refund = await second.inject({
      method: 'POST',
      url: `/admin/payments/${initial!.id}/cancel`,
      headers: { ...adminHeaders, 'idempotency-key': 'restart-refund' },
      payload: { reason: 'customer asked' },
    });
    expect(refund.statusCode, refund.body).toBe(200);
    await second.close();

    const third = await start();
    expect((await sandboxLedger(third)).filter((e) => e.type === 'CANCEL')).toHaveLength(1);
    expect((await third.inject({ method: 'POST', url: '/sandbox/_control/reset' })).statusCode).toBe(200);
    await third.close();
    const fourth = await start();
    expect(await sandboxLedger(fourth)).toEqual([]);
  });
});
