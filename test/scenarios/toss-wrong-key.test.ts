// A wrong TOSS_SECRET_KEY for real (docs/api.md "Gateways", what an answer means: our configuration refused): the
// service runs against a standalone Toss sandbox with a secret key that sandbox does not know, so every call is refused
// by the sandbox's own Basic-auth check (401 UNAUTHORIZED_KEY), not by an injected fault
// (test/scenarios/toss-outcomes.test.ts injects one, and shows the recovery). Nothing is declined, nothing is charged,
// the Toss subscriptions stay due, Danal's are charged in the same pass, and /ready names the refusal without the key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { parseEncryptionKeys } from '../../src/config.ts';
import { buildTestApp, TEST_ENCRYPTION_KEYS } from '../helpers/app.ts';
import { getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { type RunningTossSandbox, startTossSandbox } from '../helpers/sandbox.ts';

let database: TestDatabase;
let toss: RunningTossSandbox;
let app: App;
const WRONG_SECRET = 'test_sk_not_the_sandbox_key_0000';

beforeAll(async () => {
  database = await createTestDatabase();
  toss = await startTossSandbox();
  app = await buildTestApp(database.url, {
    env: { CLOCK: 'simulated', TOSS_API_BASE_URL: toss.url, TOSS_CLIENT_KEY: toss.clientKey, TOSS_SECRET_KEY: WRONG_SECRET },
  });
});
afterAll(async () => {
  await app?.close();
  await toss?.close();
  await database?.drop();
});

describe('a Toss secret key Toss does not know', () => {
  it('declines nothing and charges nothing at Toss, charges Danal in the same pass, and /ready says why without the key', async () => {
    expect(WRONG_SECRET).not.toBe(toss.secretKey);
    const now = new Date('2027-06-01T01:00:00.000Z');
    await setClock(app, now);
    toss.clock.set(now);
    const danal = await subscribe(app, { userId: 'danal-wrong-key' });
    // Keys minted by the sandbox for their customerKeys (as its issuance would): the service could not issue one itself.
    const keyring = createKeyring(parseEncryptionKeys(TEST_ENCRYPTION_KEYS));
    const tossIds = await seedDueSubscriptions(app.db, keyring, { count: 2, sandboxUrl: toss.url, dueAt: now, gateway: 'TOSS', amount: 12000 });
    const due = new Date(now.getTime() + 32 * 24 * 3_600_000);
    await setClock(app, due);
    toss.clock.set(due);

    expect(await runPass(app)).toMatchObject({ succeeded: 1, declined: 0, unknown: 0 });
    expect((await paymentsOf(app, danal)).map((p) => p.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    for (const id of tossIds) {
      const subscription = await getSubscription(app, id);
      expect(subscription).toMatchObject({ status: 'ACTIVE', needsAttention: false });
      expect(new Date(subscription.nextChargeAt!).getTime()).toBeLessThanOrEqual(due.getTime());
      for (const payment of await paymentsOf(app, id)) expect(payment.status).not.toBe('FAILED');
    }
    expect((await toss.ledger()).filter((entry) => entry.type === 'CHARGE')).toEqual([]);

    const ready = await app.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'not_ready', checks: [{ name: 'gateway:TOSS', code: 'UNAUTHORIZED_KEY' }] });
    expect(ready.body).not.toContain(WRONG_SECRET);
  });
});
