// Many due CARD subscriptions at once, for the replica, crash and fault runs and the benchmarks, through Danal or
// through Toss. Billing keys are minted by the gateway's sandbox (so charges pass its rules like any other; Toss's
// for a random customerKey each, which every charge must send) and stored encrypted exactly as issuance stores
// them; rows are written with createMany because thousands of registrations through the window would test the
// window, not the engine.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/prisma.ts';
import { billingKeyAad, type Keyring } from '../../src/lib/crypto.ts';
import { addInterval } from '../../src/lib/calendar.ts';

export interface SeedOptions {
  count: number;
  /** The sandbox's control base URL (…/sandbox for the mounted one). */
  sandboxUrl: string;
  /** When cycle 1 is due; the anchor is one month earlier. */
  dueAt: Date;
  amount?: number;
  /** Whose keys: Danal's (the default; sandboxUrl is the Danal sandbox's) or Toss's (sandboxUrl the Toss sandbox's). */
  gateway?: 'DANAL' | 'TOSS';
}

export async function mintCardKeys(sandboxUrl: string, userIds: string[]): Promise<Array<{ billingKey: string; userId: string }>> {
  const response = await fetch(`${sandboxUrl}/_control/billing-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userIds }),
  });
  if (response.status !== 201) throw new Error(`mint answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { keys: Array<{ billingKey: string; userId: string }> }).keys;
}

/** Billing keys the Toss sandbox issues for these customerKeys, as its window would. */
export async function mintTossKeys(tossSandboxUrl: string, customerKeys: string[]): Promise<Array<{ billingKey: string; customerKey: string }>> {
  const response = await fetch(`${tossSandboxUrl}/_control/billing-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerKeys }),
  });
  if (response.status !== 201) throw new Error(`Toss mint answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { keys: Array<{ billingKey: string; customerKey: string }> }).keys;
}

/** Keys for these users: Danal's, or Toss's each bound to a random customerKey (never the userId). */
async function mintKeys(options: SeedOptions, userIds: string[]): Promise<Array<{ billingKey: string; userId: string; customerKey: string | null }>> {
  if (options.gateway !== 'TOSS') return (await mintCardKeys(options.sandboxUrl, userIds)).map((key) => ({ ...key, customerKey: null }));
  const customerKeys = userIds.map(() => `ck_${randomUUID().replace(/-/g, '')}`);
  const keys = await mintTossKeys(options.sandboxUrl, customerKeys);
  return keys.map((key, i) => ({ billingKey: key.billingKey, customerKey: key.customerKey, userId: userIds[i]! }));
}

/** Creates `count` ACTIVE monthly CARD subscriptions whose cycle 1 is due at `dueAt`; returns their ids. */
export async function seedDueSubscriptions(db: Db, keyring: Keyring, options: SeedOptions): Promise<string[]> {
  const amount = options.amount ?? 9900;
  const gateway = options.gateway ?? 'DANAL';
  const anchorAt = addInterval(options.dueAt, 'month', -1, 'Asia/Seoul');
  const userIds = Array.from({ length: options.count }, (_, i) => `bulk-user-${i}-${randomBytes(3).toString('hex')}`);
  const keys = await mintKeys(options, userIds);
  const rows = keys.map(({ billingKey, userId, customerKey }) => {
    const registrationId = randomUUID();
    const billingKeyId = randomUUID();
    const envelope = keyring.encrypt(billingKey, billingKeyAad(billingKeyId));
    return {
      registration: {
        id: registrationId,
        state: randomBytes(24).toString('base64url'),
        status: 'COMPLETED' as const,
        orderId: `R${registrationId.replace(/-/g, '')}`,
        userId,
        method: 'CARD' as const,
        amount,
        orderName: 'Monthly plan',
        issueKeyOnly: true,
        gateway,
        customerKey,
        expiresAt: anchorAt,
        completedAt: anchorAt,
      },
      billingKey: {
        id: billingKeyId,
        registrationId,
        userId,
        method: 'CARD' as const,
        gateway,
        customerKey,
        encryptionKeyId: envelope.keyId,
        keyIv: Uint8Array.from(envelope.iv),
        keyTag: Uint8Array.from(envelope.tag),
        keyCiphertext: Uint8Array.from(envelope.ciphertext),
        cardName: 'Sandbox Card',
        cardNumber: '5365-10**-****-1234',
      },
      subscription: {
        id: randomUUID(),
        registrationId,
        billingKeyId,
        userId,
        method: 'CARD' as const,
        amount,
        orderName: 'Monthly plan',
        intervalUnit: 'month' as const,
        intervalCount: 1,
        anchorAt,
        cycle: 1,
        currentPeriodStart: anchorAt,
        currentPeriodEnd: options.dueAt,
        nextChargeAt: options.dueAt,
      },
    };
  });
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    await db.registration.createMany({ data: chunk.map((r) => r.registration) });
    await db.billingKey.createMany({ data: chunk.map((r) => r.billingKey) });
    await db.subscription.createMany({ data: chunk.map((r) => r.subscription) });
  }
  return rows.map((r) => r.subscription.id);
}
