// Billing keys are stored only encrypted (src/lib/crypto.ts) and read back only to call the gateway; no
// response or log line ever carries one (docs/architecture.md, invariant 8).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayFields } from '../../gateway/gateway.ts';
import { billingKeyAad, type Keyring } from '../../lib/crypto.ts';
import type { Method } from '../shared/terms.ts';

type Tx = Prisma.TransactionClient;

export async function storeBillingKey(tx: Tx, keyring: Keyring, input: { registrationId: string; userId: string; method: Method; fields: GatewayFields }) {
  const id = randomUUID();
  const envelope = keyring.encrypt(input.fields.billingKey!, billingKeyAad(id));
  return tx.billingKey.create({
    data: {
      id,
      registrationId: input.registrationId,
      userId: input.userId,
      method: input.method,
      encryptionKeyId: envelope.keyId,
      keyIv: Uint8Array.from(envelope.iv),
      keyTag: Uint8Array.from(envelope.tag),
      keyCiphertext: Uint8Array.from(envelope.ciphertext),
      cardCode: input.fields.cardInfo?.cardCode,
      cardName: input.fields.cardInfo?.cardName,
      cardNumber: input.fields.cardInfo?.cardNumber,
      carrier: input.fields.carrier,
      phoneNumber: input.fields.phoneNumber,
    },
  });
}

/** Terminating billing revokes the key on our side (the gateway documents no termination call). */
export async function revokeBillingKey(tx: Tx, billingKeyId: string, now: Date): Promise<void> {
  await tx.billingKey.updateMany({ where: { id: billingKeyId, status: 'ACTIVE' }, data: { status: 'REVOKED', revokedAt: now } });
}

/**
 * The key id of a billing key whose ciphertext an erasure destroyed (erasure/rewrite-customer.ts): no configured key has
 * it, so it never decrypts, and key rotation passes it by (there is nothing to re-encrypt).
 */
export const DESTROYED_KEY_ID = 'destroyed';

export function readBillingKey(
  keyring: Keyring,
  row: { id: string; encryptionKeyId: string; keyIv: Uint8Array; keyTag: Uint8Array; keyCiphertext: Uint8Array },
): string {
  return keyring.decrypt(
    { keyId: row.encryptionKeyId, iv: Buffer.from(row.keyIv), tag: Buffer.from(row.keyTag), ciphertext: Buffer.from(row.keyCiphertext) },
    billingKeyAad(row.id),
  );
}

export interface RotationResult {
  rotated: number;
  /** Rows that changed under us (another rotation): left for the next pass, which finds them if still old. */
  skipped: number;
  remaining: number;
}

/**
 * Re-encrypts every billing key not under the keyring's current key. Safe while the service runs: each row is
 * rewritten with an optimistic update that only applies if the row still holds the ciphertext that was read, so
 * a concurrent rotation or write is never overwritten, and no lock is held across rows. Deploy the new key first
 * in BILLING_KEY_ENCRYPTION_KEYS (first position, old keys after it) on every replica, then run this, then drop
 * the old key.
 */
export async function rotateBillingKeys(db: Db, keyring: Keyring, options: { batchSize?: number } = {}): Promise<RotationResult> {
  const batchSize = options.batchSize ?? 200;
  let rotated = 0;
  let skipped = 0;
  let afterId: string | undefined;
  for (;;) {
    const rows = await db.billingKey.findMany({
      where: { encryptionKeyId: { notIn: [keyring.currentKeyId, DESTROYED_KEY_ID] }, ...(afterId ? { id: { gt: afterId } } : {}) },
      orderBy: { id: 'asc' },
      take: batchSize,
      select: { id: true, encryptionKeyId: true, keyIv: true, keyTag: true, keyCiphertext: true },
    });
    if (rows.length === 0) break;
    for (const row of rows) {
      const plaintext = readBillingKey(keyring, row);
      const envelope = keyring.encrypt(plaintext, billingKeyAad(row.id));
      const updated = await db.billingKey.updateMany({
        where: { id: row.id, encryptionKeyId: row.encryptionKeyId, keyCiphertext: { equals: Uint8Array.from(row.keyCiphertext) } },
        data: {
          encryptionKeyId: envelope.keyId,
          keyIv: Uint8Array.from(envelope.iv),
          keyTag: Uint8Array.from(envelope.tag),
          keyCiphertext: Uint8Array.from(envelope.ciphertext),
        },
      });
      if (updated.count === 1) rotated += 1;
      else skipped += 1;
    }
    afterId = rows[rows.length - 1]!.id;
  }
  const remaining = await db.billingKey.count({ where: { encryptionKeyId: { notIn: [keyring.currentKeyId, DESTROYED_KEY_ID] } } });
  return { rotated, skipped, remaining };
}
