// What a registration writes from its own row, one place each: the key its window answered and its INITIAL payment.
// Each carries the registration's gateway (and Toss's customerKey), so the key and the payment go through the gateway
// the registration chose (docs/api.md "Gateways").
import type { Payment, Prisma } from '../../generated/prisma/client.ts';
import type { GatewayFields } from '../../gateway/gateway.ts';
import type { Keyring } from '../../lib/crypto.ts';
import { storeBillingKey } from '../billing-keys/billing-keys.service.ts';
import type { RegistrationRow } from './registrations.read.ts';

type Tx = Prisma.TransactionClient;

/** The billing key of `fields` (the window's answer), stored encrypted for the registration's customer. */
export function storeRegistrationKey(tx: Tx, keyring: Keyring, row: RegistrationRow, fields: GatewayFields) {
  return storeBillingKey(tx, keyring, {
    registrationId: row.id,
    userId: row.userId,
    method: row.method,
    fields,
    gateway: row.gateway,
    customerKey: row.customerKey,
  });
}

/** The registration's INITIAL payment (cycle 0): the one it has, else a new one due `now`. One per registration. */
export async function initialPaymentOf(tx: Tx, row: RegistrationRow, now: Date): Promise<Payment> {
  const found = await tx.payment.findFirst({ where: { registrationId: row.id, kind: 'INITIAL' } });
  if (found) return found;
  return tx.payment.create({
    data: { registrationId: row.id, kind: 'INITIAL', method: row.method, amount: row.amount, orderId: row.orderId, cycle: 0, dueAt: now, gateway: row.gateway },
  });
}
