// The common case of a scheduled charge's preparation, a batch of new cycles in one statement and no transaction
// (docs/architecture.md, invariants 1, 2 and 5): the same payment and IN_FLIGHT attempt as the transactional prepare
// (charge.prepare.ts), written only where nothing the plan read has changed since the claim; every other row is left
// to the transactional prepare.
import { sqlQuery } from '../../db/prisma.ts';
import { readBillingKey } from '../billing-keys/billing-keys.service.ts';
import { planCharge } from '../ledger/charge.rules.ts';
import { consentsMatter } from '../ledger/consent.rules.ts';
import { LIVE } from '../ledger/schedule.rules.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { ClaimedRow } from './charge.claim.ts';
import { chargeOrderId, type Ready } from './charge.types.ts';

/** A claimed row the planner sends to the one-statement prepare, with what its write needs. */
interface PlannedRow {
  row: ClaimedRow;
  plan: Ready['plan'];
  billingKey: string;
  orderId: string;
}

/**
 * The common case of a scheduled charge, for a batch of claimed rows in one statement and no transaction: new cycles
 * of subscriptions with no payment for them yet and no consent that matters. planCharge decides each from the row
 * the claim read; then one statement renews each lease and writes each payment and its IN_FLIGHT attempt (invariant 1),
 * row by row only where the lease is still ours and nothing the plan read has changed since the claim (an
 * operator's pause, cancel or change in between is seen there: the row's version, which every write changes, and the
 * columns that decide what is charged). A row the statement did not write, or that the planner did not send here,
 * is absent from the answer: the transactional prepare (charge.prepare.ts) decides it, with every rule. A batch of one is the
 * single charge's form; test/modules/payments/charge-paths.test.ts compares both sizes with the transactional path.
 */
export async function prepareNewCycles(
  deps: Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'keyring'>,
  rows: readonly ClaimedRow[],
  owner: string,
): Promise<Map<string, Ready>> {
  const now = deps.clock.now();
  const leaseExpiresAt = new Date(now.getTime() + deps.config.scheduler.leaseMs);
  const planned = planNewCycles(deps, rows, now);
  const ready = new Map<string, Ready>();
  if (planned.length === 0) return ready;
  const column = <T>(pick: (entry: PlannedRow) => T) => planned.map(pick);
  const written = await sqlQuery<{ subscriptionId: string; paymentId: string; attemptId: string }>(deps.db, PREPARE_NEW_CYCLES_SQL, [
    column((e) => e.row.id),
    column((e) => e.plan.cycle),
    column((e) => e.row.method),
    column((e) => e.plan.amount),
    column((e) => e.orderId),
    column((e) => e.plan.dueAt),
    column((e) => e.row.version),
    column((e) => e.row.amount),
    column((e) => e.row.keyId),
    column((e) => e.row.lastTransactionId),
    owner,
    [...LIVE],
    leaseExpiresAt,
    // The rows' createdAt and updatedAt: the service's clock, as db/clock-stamps.ts gives the Prisma writers.
    now,
    // Each payment's gateway: its key's (fenced above: the key is the one the claim read).
    column((e) => e.row.keyGateway),
  ]);
  const byId = new Map(planned.map((entry) => [entry.row.id, entry]));
  for (const { subscriptionId, paymentId, attemptId } of written) {
    const { row, plan, billingKey, orderId } = byId.get(subscriptionId)!;
    ready.set(subscriptionId, {
      kind: 'READY',
      leaseOwner: owner,
      subscriptionId,
      method: row.method,
      plan,
      paymentId,
      attemptId,
      orderId,
      billingKey,
      gateway: row.keyGateway,
      customerKey: row.customerKey,
      userId: row.userId,
      orderName: row.orderName,
      itemCode: row.itemCode,
      leaseExpiresAt,
      newCycle: { method: row.method, anchorAt: row.anchorAt, intervalUnit: row.intervalUnit, intervalCount: row.intervalCount },
    });
  }
  return ready;
}

/** The rows of a claimed batch that the one-statement prepare takes: a new cycle planned to CHARGE, its key readable. */
function planNewCycles(deps: Pick<ServiceDeps, 'config' | 'keyring'>, rows: readonly ClaimedRow[], now: Date): PlannedRow[] {
  const { config, keyring } = deps;
  const planned: PlannedRow[] = [];
  for (const row of rows) {
    if (row.hasPayment || consentsMatter(row, undefined, config.consentRequired)) continue;
    const plan = planCharge(row, undefined, { now, timezone: config.timezone, trigger: 'SCHEDULER', consents: [], consentRequired: config.consentRequired });
    if (plan.action !== 'CHARGE' || plan.cycle !== row.cycle) continue;
    let billingKey: string;
    try {
      billingKey = readBillingKey(keyring, {
        id: row.keyId,
        encryptionKeyId: row.encryptionKeyId,
        keyIv: row.keyIv,
        keyTag: row.keyTag,
        keyCiphertext: row.keyCiphertext,
      });
    } catch {
      continue;
    }
    planned.push({ row, plan, billingKey, orderId: chargeOrderId(row.id, plan.cycle, 1) });
  }
  return planned;
}

// Through the pg pool, named (db/prisma.ts), where Prisma's runtime was the cost (docs/benchmarks.md "Measurements behind choices in the code"): one text for
// every batch size (the rows are arrays), so one named statement. Each row is fenced on its own: a row whose guard
// fails writes nothing and the others are written.
const PREPARE_NEW_CYCLES_SQL = `
      WITH i AS (
        SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::text[], $8::int[], $9::uuid[], $10::text[], $15::text[])
          AS i("id", "cycle", "method", "amount", "orderId", "dueAt", "version", "subscriptionAmount", "keyId", "lastTransactionId", "gateway")),
      ok AS (
        UPDATE "subscriptions" s SET "leaseExpiresAt" = $13::timestamptz
          FROM i
         WHERE s."id" = i."id" AND s."leaseOwner" = $11 AND s."status"::text = ANY ($12::text[]) AND s."needsAttention" = false AND s."cycle" = i."cycle"
           AND s."xmin"::text = i."version" AND s."amount" = i."subscriptionAmount" AND s."pendingAmount" IS NULL AND s."cancelAtPeriodEnd" = false
           AND s."billingKeyId" = i."keyId" AND s."lastTransactionId" IS NOT DISTINCT FROM i."lastTransactionId"
           AND EXISTS (SELECT 1 FROM "billing_keys" k WHERE k."id" = i."keyId" AND k."status" = 'ACTIVE')
           AND NOT EXISTS (SELECT 1 FROM "payments" p WHERE p."subscriptionId" = i."id" AND p."cycle" = i."cycle")
        RETURNING i."id", i."cycle", i."method", i."amount", i."orderId", i."dueAt", i."gateway"),
      p AS (
        INSERT INTO "payments" ("subscriptionId", "cycle", "kind", "method", "gateway", "amount", "orderId", "attemptCount", "dueAt", "createdAt", "updatedAt")
        SELECT ok."id", ok."cycle", 'RECURRING', ok."method"::"PaymentMethod", ok."gateway"::"PaymentGateway", ok."amount", ok."orderId", 1, ok."dueAt", $14::timestamptz, $14::timestamptz FROM ok
        RETURNING "id", "subscriptionId", "orderId", "amount"),
      a AS (
        INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "leaseOwner", "leaseExpiresAt", "createdAt", "updatedAt")
        SELECT p."id", 1, 'BILLING_CONFIRM', p."orderId", p."amount", $11::text, $13::timestamptz, $14::timestamptz, $14::timestamptz FROM p
        RETURNING "id", "paymentId")
      SELECT p."subscriptionId", a."paymentId", a."id" AS "attemptId" FROM a JOIN p ON p."id" = a."paymentId"`;
