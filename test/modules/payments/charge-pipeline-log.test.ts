// An answer waits in the charging pipeline's memory until the recorder writes it; should the process die meanwhile, its
// attempt becomes UNKNOWN and an operator needs the gateway's transactionId to resolve it. Each approval's
// transactionId is logged as it arrives, before it is recorded, and no secret is logged with it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { readBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import type { App } from '../../../src/app.ts';
import { LogCapture, startTestApp, TEST_SECRET_KEY } from '../../helpers/app.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const logs = new LogCapture();
let database: TestDatabase;
let running: { app: App; baseUrl: string };
beforeAll(async () => {
  database = await createTestDatabase();
  running = await startTestApp(database.url, { logs, env: { SCHEDULER_CONCURRENCY: '2', SCHEDULER_BATCH_SIZE: '10' } });
});
afterAll(async () => {
  await running.app.close();
  await database.drop();
});

it('each approval’s transactionId is logged when it arrives, before the approval is recorded', async () => {
  const { app } = running;
  const keyring = createKeyring(app.config.encryptionKeys);
  await seedDueSubscriptions(app.db, keyring, {
    count: 6,
    sandboxUrl: `${running.baseUrl}/sandbox`,
    dueAt: new Date(Date.now() - 60_000),
  });
  expect(await app.charges.runPass()).toMatchObject({ claimed: 6, succeeded: 6 });
  const payments = await app.db.payment.findMany({ select: { subscriptionId: true, transactionId: true, orderId: true } });
  expect(payments).toHaveLength(6);
  for (const payment of payments) {
    const arrived = logs.lines.findIndex(
      (line) => line.msg === 'charge answered by the gateway; recording it' && line.subscriptionId === payment.subscriptionId,
    );
    const recorded = logs.lines.findIndex((line) => line.msg === 'charge approved' && line.subscriptionId === payment.subscriptionId);
    expect(arrived).toBeGreaterThanOrEqual(0);
    expect(logs.lines[arrived]).toMatchObject({ transactionId: payment.transactionId, orderId: payment.orderId, outcome: 'SUCCEEDED' });
    expect(recorded).toBeGreaterThan(arrived);
  }
  // Ids only: the billing keys and the secret key never reach the logs.
  const keys = (await app.db.billingKey.findMany()).map((row) => readBillingKey(keyring, row));
  expect(keys).toHaveLength(6);
  for (const key of [...keys, TEST_SECRET_KEY]) expect(logs.raw).not.toContain(key);
});
