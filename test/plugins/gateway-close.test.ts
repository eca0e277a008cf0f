// The mounted sandbox keeps answering the gateway calls the app makes while it closes (the scheduler's drain runs
// in preClose, after Fastify already answers 503 on the app's own port): those calls reach the sandbox on its
// private listener, so a drained charge is recorded as what the gateway answered, never UNKNOWN for nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayResult } from '../../src/gateway/types.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describe('closing the app', () => {
  it('a gateway call made while the app closes is answered by the mounted sandbox', async () => {
    const app = await buildTestApp(database.url);
    // A key the mounted sandbox knows (minted in its memory: no request can reach the app once it closes).
    const [key] = app.sandbox!.mintCardKeys(['closing-user']);
    let during: GatewayResult | undefined;
    let publicPort: GatewayResult | number | undefined;
    app.addHook('preClose', async () => {
      // The app's own port already refuses requests at this point.
      const port = (app.server.address() as { port: number }).port;
      publicPort = (await fetch(`http://127.0.0.1:${port}/sandbox/_control/clock`)).status;
      during = await app.gateway.chargeBillingKey({
        method: 'CARD',
        billingKey: key!.billingKey,
        userId: 'closing-user',
        amount: 1000,
        orderName: 'Plan',
        orderId: 'S-closing-1',
      });
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    await app.close();
    expect(publicPort).toBe(503);
    expect(during).toMatchObject({ outcome: 'SUCCEEDED', operation: 'BILLING_CONFIRM' });
  });
});
