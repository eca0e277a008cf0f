// A customer's erasure (docs/operating.md "A customer asks to be forgotten"; Article 21 of the Personal Information
// Protection Act (개인정보보호법) and Article 6 of the Act on the Consumer Protection in Electronic Commerce (전자상거래법)):
// in ONE transaction, every row that carried the userId carries a random pseudonym instead, and every personal value
// (names, phone numbers, emails, masked card numbers, consent and refund references, a settlement file's buyer columns)
// is removed from the live tables and from the kept records; money, ids, codes and times stay, so reports and
// reconciliation give the same figures. The identity the payment records still need is sealed in the erasure's vault
// (identity-vault.ts) until retainUntil. Each billing key is revoked and its ciphertext destroyed; after the commit,
// each key's own gateway is asked to delete it where it can (its answer is recorded in keyDeletions); a key whose
// gateway cannot is recorded as NOT_SUPPORTED. The database adds (prisma/functions/): the event customer.erased (events.sql), the guards' one
// exception for the kept records' personal columns (guards.sql, under the transaction's billing.erasure setting),
// the settlement line imported later without the buyer's columns (erasure.sql).
//
// Lock order (every writer that meets the customer keeps it, so none waits for another in a cycle):
//   1. the customer's lock, exclusive (lock_customer): writers of a new row under the userId (registrations, orders,
//      portal sessions) take it shared;
//   2. settlement_lines in SHARE ROW EXCLUSIVE mode: a settlement import (ROW EXCLUSIVE from its first insert) runs
//      wholly before the erasure, which then clears its lines, or wholly after, when its lines of the erased customer
//      are stored without the buyer's columns (prisma/functions/erasure.sql). Readers are not blocked; two erasures
//      take turns here (the mode conflicts with itself, so neither holds it while waiting to write the lines);
//   3. the customer's registrations, orders, subscriptions, payments, billing keys, each FOR UPDATE in id order, in that
//      order (a registration's completion locks its registration before it creates the subscription; a charge and a
//      portal action lock the subscription before its payment). A charge, refund or portal action in flight holds one
//      of these rows: the erasure waits for its commit and then sees its PENDING payment or refund (a blocker: 409), or
//      it runs after the erasure and finds the subscription CANCELED or no longer the customer's.
// Every statement finds the customer's rows by an index (migration 20261130110000_erasure_lookups).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayName } from '../../gateway/gateway.ts';
import { addInterval, calendarDate, KOREA_ZONE } from '../../lib/calendar.ts';
import { withDetails } from '../../lib/errors.ts';
import { type Actor, writeAudit } from '../audit/audit.ts';
import { readBillingKey } from '../billing-keys/billing-keys.service.ts';
import { CustomerNotFoundError, lockCustomer } from '../shared/customers.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { applyCancel } from '../subscriptions/cancel.ts';
import { CUSTOMER_PAYMENTS_WHERE, type ErasureBlocker, ErasureBlockedError, findErasureBlockers, NOT_CANCELED } from './erasure.blockers.ts';
import { type KeyToDelete, type KeyDeletion, deletableAtGateway, deleteKeysAtGateway, keyDeletionsAtCommit } from './key-deletion.ts';
import { sealIdentity, type VaultColumns } from './identity-vault.ts';
import { newPseudonym } from './pseudonym.ts';
import { rewriteKeptRecords, rewriteLiveRows, type Rewrite } from './rewrite-customer.ts';

type Tx = Prisma.TransactionClient;
type Deps = Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'keyring' | 'gateway' | 'gateways' | 'log'>;

/** The cancel reason of a subscription canceled by its customer's erasure (cancelOpenSubscriptions). */
export const ERASED = 'ERASED';

export interface ErasureRequest {
  userId: string;
  reason: string;
  cancelOpenSubscriptions: boolean;
}

export interface ErasureCounts {
  subscriptions: number;
  payments: number;
  registrations: number;
  orders: number;
  billingKeys: number;
  /** The customer's objects' events whose snapshots were rewritten (customer.erased not included). */
  events: number;
}

export interface ErasureAnswer {
  id: string;
  pseudonym: string;
  status: 'COMPLETED';
  erasedAt: string;
  retainUntil: string;
  counts: ErasureCounts;
}

/** The customer's rows, locked (the lock order above). */
interface CustomerRows {
  registrations: Array<{ id: string; userName: string | null; userPhoneNumber: string | null }>;
  orders: Array<{ id: string }>;
  subscriptions: Array<{ id: string; status: string }>;
  payments: Array<{ id: string }>;
  billingKeys: Array<{
    id: string;
    gateway: GatewayName;
    customerKey: string | null;
    phoneNumber: string | null;
    encryptionKeyId: string;
    keyIv: Uint8Array;
    keyTag: Uint8Array;
    keyCiphertext: Uint8Array;
  }>;
  portalSessions: number;
}

async function lockCustomerRows(tx: Tx, userId: string): Promise<CustomerRows> {
  await lockCustomer(tx, userId, 'exclusive');
  await tx.$executeRawUnsafe('LOCK TABLE "settlement_lines" IN SHARE ROW EXCLUSIVE MODE');
  const rows = <T>(sql: string) => tx.$queryRawUnsafe<T[]>(sql, userId);
  const registrations = await rows<CustomerRows['registrations'][number]>(
    `SELECT "id"::text, "userName", "userPhoneNumber" FROM "registrations" WHERE "userId" = $1 ORDER BY "id" FOR UPDATE`,
  );
  const orders = await rows<{ id: string }>(`SELECT "id"::text FROM "orders" WHERE "userId" = $1 ORDER BY "id" FOR UPDATE`);
  const subscriptions = await rows<{ id: string; status: string }>(
    `SELECT "id"::text, "status"::text FROM "subscriptions" WHERE "userId" = $1 ORDER BY "id" FOR UPDATE`,
  );
  const payments = await rows<{ id: string }>(`SELECT p."id"::text FROM "payments" p WHERE ${CUSTOMER_PAYMENTS_WHERE} ORDER BY p."id" FOR UPDATE`);
  const billingKeys = await rows<CustomerRows['billingKeys'][number]>(
    `SELECT "id"::text, "gateway"::text, "customerKey", "phoneNumber", "encryptionKeyId", "keyIv", "keyTag", "keyCiphertext"
     FROM "billing_keys" WHERE "userId" = $1 ORDER BY "id" FOR UPDATE`,
  );
  const [sessions] = await rows<{ n: number }>(`SELECT count(*)::int AS n FROM "portal_sessions" WHERE "userId" = $1`);
  return { registrations, orders, subscriptions, payments, billingKeys, portalSessions: sessions?.n ?? 0 };
}

const isKnown = (rows: CustomerRows) =>
  rows.registrations.length + rows.orders.length + rows.subscriptions.length + rows.billingKeys.length + rows.portalSessions > 0;

/** What stops this erasure: every blocker, less the open subscriptions when it cancels them. */
async function blockersOf(tx: Tx, request: ErasureRequest): Promise<ErasureBlocker[]> {
  const all = await findErasureBlockers(tx, request.userId);
  return request.cancelOpenSubscriptions ? all.filter((b) => !(b.kind === 'subscription' && b.reason === NOT_CANCELED)) : all;
}

/**
 * retainUntil (a Korea date): the Korea date of the customer's latest payment or refund record, plus RETENTION_YEARS;
 * null when the customer has no money record at all (then nothing is kept: no vault).
 */
async function retainUntilOf(tx: Tx, paymentIds: string[], years: number): Promise<string | null> {
  if (paymentIds.length === 0) return null;
  const [row] = await tx.$queryRawUnsafe<Array<{ latest: Date | null }>>(
    `SELECT greatest(
       (SELECT max(greatest(p."createdAt", p."approvedAt", p."canceledAt")) FROM "payments" p WHERE p."id" = ANY ($1::uuid[])),
       (SELECT max(greatest(a."createdAt", a."completedAt")) FROM "payment_attempts" a WHERE a."paymentId" = ANY ($1::uuid[]) AND a."operation" = 'CANCEL'),
       (SELECT max(r."recordedAt") FROM "external_refunds" r WHERE r."paymentId" = ANY ($1::uuid[]))) AS latest`,
    paymentIds,
  );
  if (!row?.latest) return null;
  return calendarDate(addInterval(row.latest, 'year', years, KOREA_ZONE), KOREA_ZONE);
}

/** The identity the vault keeps: the old userId and every distinct name and phone number the erasure removes. */
function identityOf(userId: string, rows: CustomerRows) {
  const distinct = (values: Array<string | null>) => [...new Set(values.filter((v): v is string => !!v))];
  return {
    userId,
    names: distinct(rows.registrations.map((r) => r.userName)),
    phoneNumbers: distinct([...rows.registrations.map((r) => r.userPhoneNumber), ...rows.billingKeys.map((k) => k.phoneNumber)]),
  };
}

/**
 * The billing keys to delete at their gateways after the commit (those whose gateway deletes keys), decrypted now
 * (before their ciphertext is destroyed), held in memory only.
 */
function keysToDelete(deps: Deps, rows: CustomerRows): KeyToDelete[] {
  return rows.billingKeys
    .filter((key) => deletableAtGateway(deps, key))
    .map((key) => {
      const held = { billingKeyId: key.id, gateway: key.gateway, customerKey: key.customerKey };
      try {
        return { ...held, billingKey: readBillingKey(deps.keyring, key) };
      } catch {
        return { ...held, billingKey: null };
      }
    });
}

/** The erasure's one transaction; answers what the route answers, and the keys to delete at the gateway after the commit. */
async function eraseInTransaction(tx: Tx, deps: Deps, request: ErasureRequest, who: Actor) {
  const rows = await lockCustomerRows(tx, request.userId);
  if (!isKnown(rows)) throw new CustomerNotFoundError();
  const blockers = await blockersOf(tx, request);
  if (blockers.length > 0) {
    throw withDetails(new ErasureBlockedError(`The customer cannot be erased yet: ${blockers.length} open item(s) must be settled first`), { blockers });
  }
  const now = deps.clock.now();
  for (const sub of rows.subscriptions) {
    if (sub.status !== 'CANCELED') await applyCancel(tx, sub.id, { atPeriodEnd: false, reason: ERASED, now });
  }
  const id = randomUUID();
  const pseudonym = newPseudonym();
  const paymentIds = rows.payments.map((p) => p.id);
  const retainUntil = (await retainUntilOf(tx, paymentIds, deps.config.retentionYears)) ?? calendarDate(now, KOREA_ZONE);
  // Decrypted before the rewrite destroys the ciphertext.
  const keys = keysToDelete(deps, rows);
  const rewrite: Rewrite = { erasureId: id, userId: request.userId, pseudonym, now, ...idsOf(rows) };
  await rewriteLiveRows(tx, rewrite);
  const events = await rewriteKeptRecords(tx, rewrite);
  const counts: ErasureCounts = {
    subscriptions: rows.subscriptions.length,
    payments: rows.payments.length,
    registrations: rows.registrations.length,
    orders: rows.orders.length,
    billingKeys: rows.billingKeys.length,
    events,
  };
  const keyDeletions = keyDeletionsAtCommit(deps, rows.billingKeys, keys);
  // No money record: nothing the law keeps, so no vault (the identity is gone at once: identityPurgedAt is now).
  const vault = paymentIds.length > 0 ? sealIdentity(deps.keyring, id, identityOf(request.userId, rows)) : null;
  const answer: ErasureAnswer = { id, pseudonym, status: 'COMPLETED', erasedAt: now.toISOString(), retainUntil, counts };
  await recordErasure(tx, { answer, now, vault, keyDeletions, who, reason: reasonWithout(request.reason, request.userId, pseudonym), request });
  return { answer, keys, keyDeletions };
}

/** The erasures row (its insert writes customer.erased) and the audit entry customer.erasure (never the old userId). */
async function recordErasure(
  tx: Tx,
  r: { answer: ErasureAnswer; now: Date; vault: VaultColumns | null; keyDeletions: KeyDeletion[]; who: Actor; reason: string; request: ErasureRequest },
) {
  const { id, pseudonym, retainUntil, counts } = r.answer;
  await tx.erasure.create({
    data: {
      id,
      pseudonym,
      status: 'COMPLETED',
      reason: r.reason,
      actor: r.who.actor,
      counts: { ...counts },
      erasedAt: r.now,
      retainUntil,
      ...(r.vault ?? { identityPurgedAt: r.now }),
      keyDeletions: r.keyDeletions as unknown as Prisma.InputJsonValue,
      createdAt: r.now,
      updatedAt: r.now,
    },
  });
  await writeAudit(tx, {
    ...r.who,
    reason: r.reason,
    action: 'customer.erasure',
    entityType: 'erasure',
    entityId: id,
    after: { pseudonym, retainUntil, counts, cancelOpenSubscriptions: r.request.cancelOpenSubscriptions },
  });
}

/**
 * The operator's reason as kept (the erasure's row, its audit entry): a userId it names is replaced by the pseudonym, so
 * the erasure's own record does not keep the customer. A userId shorter than 6 characters is left alone (it would
 * alter ordinary words; such ids are not guessable from a reason's text anyway).
 */
function reasonWithout(reason: string, userId: string, pseudonym: string): string {
  return userId.length >= 6 ? reason.split(userId).join(pseudonym) : reason;
}

function idsOf(rows: CustomerRows) {
  return {
    subscriptionIds: rows.subscriptions.map((s) => s.id),
    paymentIds: rows.payments.map((p) => p.id),
    objectIds: [...rows.subscriptions, ...rows.payments, ...rows.registrations, ...rows.orders].map((r) => r.id),
  };
}

/** A deadlock or serialization failure: the transaction did nothing and may run again. */
const isRetryable = (error: unknown) => {
  const e = error as { code?: string; meta?: { code?: string }; message?: string } | null;
  return e?.code === 'P2034' || /40P01|40001|deadlock detected/.test(`${e?.meta?.code ?? ''} ${e?.message ?? ''}`);
};

export function createErasure(deps: Deps) {
  /**
   * Erases the customer (404 CUSTOMER_NOT_FOUND, 409 ERASURE_BLOCKED with details.blockers; nothing changes on either),
   * then asks the gateway to delete the keys it can delete. A deadlock with another writer of the customer (which
   * PostgreSQL breaks by rolling one back) runs the erasure again, at most three times.
   */
  async function erase(request: ErasureRequest, who: Actor): Promise<ErasureAnswer> {
    const done = await committed(request, who);
    await deleteKeysAtGateway(deps, done.answer.id, done.keys, done.keyDeletions);
    return done.answer;
  }

  async function committed(request: ErasureRequest, who: Actor) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await deps.db.$transaction((tx) => eraseInTransaction(tx, deps, request, who), { maxWait: 10_000, timeout: 60_000 });
      } catch (error) {
        if (attempt >= 3 || !isRetryable(error)) throw error;
      }
    }
  }
  return { erase };
}

export type Erasure = ReturnType<typeof createErasure>;
export type { KeyDeletion };
