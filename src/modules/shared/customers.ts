// A customer is a userId the merchant gave us: the rows that carry it (subscriptions, registrations, orders, billing
// keys, portal sessions). What every module that meets a customer by userId shares: the one error for a userId no row
// carries (never seen, or erased: docs/operating.md "A customer asks to be forgotten"), and the customer's lock.
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { defineError } from '../../lib/errors.ts';

type Tx = Prisma.TransactionClient;

export const CustomerNotFoundError = defineError('CUSTOMER_NOT_FOUND', 'No customer has this userId (never seen, or erased)', 404);

/**
 * Takes the customer's lock for the rest of the transaction (lock_customer, prisma/functions/erasure.sql): exclusive
 * for their erasure; shared for every writer of a new row under the userId, so such a row is written either before an
 * erasure (which then finds it) or after it (a new customer), never under the old userId in the middle of one.
 */
export async function lockCustomer(tx: Tx, userId: string, mode: 'shared' | 'exclusive'): Promise<void> {
  await tx.$executeRaw`SELECT "lock_customer"(${userId}, ${mode === 'exclusive'})`;
}

/**
 * Writes a new row under `userId` holding the customer's lock (shared) in the same transaction: a registration or an
 * order made while the customer's erasure runs waits for it, then belongs to a new customer of that userId. A row
 * without a userId (an anonymous order) needs no lock.
 */
export async function writeUnderCustomer<T>(db: Db, userId: string | null | undefined, write: (tx: Tx) => Promise<T>): Promise<T> {
  if (!userId) return write(db);
  return db.$transaction(async (tx) => {
    await lockCustomer(tx, userId, 'shared');
    return write(tx);
  });
}
