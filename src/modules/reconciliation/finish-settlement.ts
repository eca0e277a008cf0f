// What a settlement file finishes (docs/architecture.md, invariant 14; docs/reconciliation.md "Reconciling with the gateway"): a late outcome takes the live
// path. An UNKNOWN payment that an APPROVAL line matches with the same amount is resolved SUCCEEDED with the line's
// transactionId and trade time, and a refund of unknown outcome that a CANCEL line matches with the same amount is
// settled SUCCEEDED, each by the operators' own code (payment-actions.service.ts `resolve`, `resolveRefund`: the same
// transitions, ledger rows, events and audit entry), the actor naming the import. A FAILED payment that an APPROVAL
// line shows approved (STATUS) is put under attention (SETTLEMENT_MISMATCH), which blocks its subscription's charges
// until an operator resolves it. Absence from a file resolves nothing. Safe to run again: what is settled stays so.
// The database adds (prisma/functions/): through resolve, events (events.sql), MRR movements (mrr.sql), roll-ups (report-rollups.sql), settlement queue rows.
import { sqlQuery, type Db } from '../../db/prisma.ts';
import { StateConflictError } from '../../lib/errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { SETTLEMENT_MISMATCH } from '../ledger/payment.state.ts';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import { serializePayment } from '../payments/payments.service.ts';
import { reconciliationItemsSql, type ReconciliationRow } from './match-settlement.ts';

const FLAGGED = 'payment.settlement_mismatch';

/**
 * The reconciliation items (aliased `i`) a file may act on: what it finishes (`finish`) and the FAILED payments it
 * shows approved (STATUS). The same conditions as the loop in `finish` below; every other line only counts.
 */
export const ACTIONABLE_SQL = `(i."finish" IS NOT NULL OR (i."type" = 'APPROVAL' AND 'STATUS' = ANY(i."reasons") AND i."ourStatus" = 'FAILED'))`;

export const settlementActor = (importId: string) => `settlement-import:${importId}`;

export function createSettlementFinisher(deps: {
  db: Db;
  payments: Pick<PaymentActions, 'resolve' | 'resolveRefund'>;
  log: { warn(o: object, m: string): void; error(o: object, m: string): void };
}) {
  const { db, payments, log } = deps;

  /**
   * Applies one line's resolution; false when another writer settled it first (the line then matches what they wrote)
   * or the write failed. The import itself is committed already: one line's failure is logged and the others go on, and
   * the same bytes uploaded again finish what is left.
   */
  async function settle(apply: () => Promise<unknown>, row: ReconciliationRow): Promise<boolean> {
    try {
      await apply();
      return true;
    } catch (error) {
      if (error instanceof StateConflictError) {
        log.warn({ lineId: row.id, paymentId: row.paymentId }, `settlement line not applied: ${(error as Error).message}`);
      } else {
        log.error(
          { lineId: row.id, paymentId: row.paymentId, err: error },
          'settlement line not applied: the write failed; importing the file again retries it',
        );
      }
      return false;
    }
  }

  /**
   * Raises a FAILED payment the gateway approved, and its subscription, for an operator (audited, in one transaction).
   * Once per payment: after an operator resolved it FAILED (our record stands), no file raises it again.
   */
  async function flagMismatch(row: ReconciliationRow, who: Actor): Promise<boolean> {
    return db.$transaction(async (tx) => {
      // The subscription's row first, then the payment's: the order the charging pass takes them in.
      const owner = await tx.payment.findUnique({ where: { id: row.paymentId! }, select: { subscriptionId: true } });
      if (!owner?.subscriptionId) return false;
      await tx.$queryRaw`SELECT 1 FROM "subscriptions" WHERE "id" = ${owner.subscriptionId}::uuid FOR UPDATE`;
      const raised = await tx.auditEvent.count({ where: { entityType: 'payment', entityId: row.paymentId!, action: FLAGGED } });
      if (raised > 0) return false;
      const flagged = await tx.payment.updateMany({
        where: { id: row.paymentId!, status: 'FAILED', attentionReason: null, subscriptionId: { not: null }, kind: { not: 'INITIAL' } },
        data: { attentionReason: SETTLEMENT_MISMATCH },
      });
      if (flagged.count === 0) return false;
      const payment = await tx.payment.findUniqueOrThrow({ where: { id: row.paymentId! } });
      // Blocks its charges. A subscription already waiting for an operator keeps its own reason (and stays blocked);
      // the payment's reason lists the mismatch for them.
      await tx.subscription.updateMany({
        where: { id: payment.subscriptionId!, needsAttention: false },
        data: { needsAttention: true, attentionReason: SETTLEMENT_MISMATCH },
      });
      await writeAudit(tx, {
        ...who,
        action: FLAGGED,
        entityType: 'payment',
        entityId: payment.id,
        after: { ...serializePayment(payment), settlementLineId: row.id, transactionId: row.transactionId },
      });
      return true;
    });
  }

  /**
   * Finishes what the lines of one import prove; answers the counts. `actionable`: the import's ACTIONABLE_SQL items,
   * when its caller read them already (the import, in the transaction that stored the lines); else they are read here.
   */
  async function finish(importId: string, actionable?: ReconciliationRow[]) {
    const rows =
      actionable ??
      (await sqlQuery<ReconciliationRow>(db, `SELECT i.* FROM (${reconciliationItemsSql({ lines: 'l."importId" = $1::uuid' })}) i WHERE ${ACTIONABLE_SQL}`, [
        importId,
      ]));
    const counts = { payments: 0, refunds: 0, flagged: 0 };
    for (const row of rows) {
      const who = { actor: settlementActor(importId), reason: `settlement file line ${row.id} (${row.type} ${row.transactionId}, ${row.amount})` };
      if (row.finish === 'RESOLVE_PAYMENT') {
        const approvedAt = new Date(row.tradedAt).toISOString();
        // Fenced on the attempt the line matched still being the one waiting: the rows were read before this loop.
        const expect = { amount: row.amount, ...(row.orderId ? { orderId: row.orderId } : {}) };
        const done = await settle(
          () => payments.resolve(row.paymentId!, { outcome: 'SUCCEEDED', transactionId: row.transactionId!, approvedAt, expect }, who),
          row,
        );
        if (done) counts.payments += 1;
      } else if (row.finish === 'RESOLVE_REFUND') {
        const expect = { amount: row.amount };
        if (await settle(() => payments.resolveRefund(row.paymentId!, { outcome: 'SUCCEEDED', expect }, who), row)) counts.refunds += 1;
      } else if (row.type === 'APPROVAL' && row.reasons.includes('STATUS') && row.ourStatus === 'FAILED') {
        let flagged = false;
        await settle(async () => {
          flagged = await flagMismatch(row, who);
        }, row);
        if (flagged) counts.flagged += 1;
      }
    }
    return counts;
  }

  return { finish };
}

export type SettlementFinisher = ReturnType<typeof createSettlementFinisher>;
