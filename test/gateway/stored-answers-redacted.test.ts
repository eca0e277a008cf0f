// Billing keys, phone numbers and the secret key are scrubbed from everything stored from the gateway, and so from
// what the APIs return, even from a decline message that echoes the billing key the call sent. (Regression test for
// issue #12 defect 9.)
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { sandboxFault } from '../helpers/checkout.ts';
import { adminHeaders, runPass } from '../helpers/billing.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { readBillingKey } from '../../src/modules/billing-keys/billing-keys.service.ts';

const running = useRunningApp();

describe('what is stored from the gateway', () => {
  it('a decline quoting the billing key we sent, a phone number and the secret key keeps none of them', async () => {
    const keyring = createKeyring(running.app.config.encryptionKeys);
    // A key this process never issued (minted by the sandbox, stored as an earlier process would have).
    const [subscriptionId] = await seedDueSubscriptions(running.app.db, keyring, {
      count: 1,
      sandboxUrl: `${running.baseUrl}/sandbox`,
      dueAt: new Date(Date.now() - 60_000),
    });
    const keyRow = await running.app.db.billingKey.findFirstOrThrow();
    const billingKey = readBillingKey(keyring, keyRow);
    const secretKey = running.app.config.gateway.secretKey!;
    await sandboxFault(running.app, {
      operation: 'BILLING_CONFIRM',
      kind: 'decline',
      code: 'INVALID_CARD',
      message: `card for ${billingKey} refused; customer 010-1234-5678 must call; merchant ${secretKey}`,
    });
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });

    const stored = JSON.stringify([
      await running.app.db.payment.findMany(),
      await running.app.db.paymentAttempt.findMany(),
      await running.app.db.subscription.findMany(),
    ]);
    const shown = [
      (await running.app.inject({ method: 'GET', url: `/api/v1/payments?subscriptionId=${subscriptionId}`, headers: apiHeaders })).body,
      (await running.app.inject({ method: 'GET', url: `/admin/payments?subscriptionId=${subscriptionId}`, headers: adminHeaders })).body,
    ];
    const payment = await running.app.db.payment.findFirstOrThrow({ include: { attempts: true } });
    shown.push((await running.app.inject({ method: 'GET', url: `/api/v1/payments/${payment.id}`, headers: apiHeaders })).body);
    for (const text of [stored, ...shown]) {
      expect(text).not.toContain(billingKey);
      expect(text).not.toContain('010-1234-5678');
      expect(text).not.toContain(secretKey);
    }
    // The rest of the message is kept for the operator.
    expect(payment.attempts[0]!.gatewayMessage).toContain('refused; customer [REDACTED] must call');
    expect(payment.failureCode).toBe('INVALID_CARD');
  });
});
