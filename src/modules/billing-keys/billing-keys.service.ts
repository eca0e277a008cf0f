// Billing keys are stored only encrypted (src/lib/crypto.ts) and read back only to call the gateway; no
// response or log line ever carries one (DESIGN.md §3 rule 8).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayFields } from '../../gateway/types.ts';
import { billingKeyAad, type Keyring } from '../../lib/crypto.ts';
import type { Method } from '../checkout/terms.ts';

type Tx = Prisma.TransactionClient;

export async function storeBillingKey(
  tx: Tx,
  keyring: Keyring,
  input: { registrationId: string; userId: string; method: Method; fields: GatewayFields },
) {
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

export function readBillingKey(
  keyring: Keyring,
  row: { id: string; encryptionKeyId: string; keyIv: Uint8Array; keyTag: Uint8Array; keyCiphertext: Uint8Array },
): string {
  return keyring.decrypt(
    { keyId: row.encryptionKeyId, iv: Buffer.from(row.keyIv), tag: Buffer.from(row.keyTag), ciphertext: Buffer.from(row.keyCiphertext) },
    billingKeyAad(row.id),
  );
}
