// The guards' one exception (docs/architecture.md, invariant 15; prisma/functions/guards.sql): under an erasure's
// transaction setting billing.erasure, an UPDATE may clear the personal columns of kept records (a consent's or an
// external refund's reference, a settlement line's extra columns) and nothing else. Everything else is refused as
// before: without the setting; a money, id or time column changed under it; a personal value written instead of
// cleared; a DELETE; an import's row; a TRUNCATE. Checked on the database itself, as any writer would meet it.
import { describe, expect, it } from 'vitest';
import type { Prisma } from '../../../src/generated/prisma/client.ts';
import { useTestDatabase } from '../../helpers/database.ts';
import { createPayment, createSubscription } from '../../factories/index.ts';

const t = useTestDatabase();

/** Runs `sql` in a transaction, under an erasure's setting when `erasing`; answers the rows it changed. */
function write(sql: string, erasing: boolean, ...values: unknown[]) {
  return t.db.$transaction(async (tx: Prisma.TransactionClient) => {
    if (erasing) await tx.$executeRawUnsafe(`SELECT set_config('billing.erasure', 'erasure-under-test', true)`);
    return tx.$executeRawUnsafe(sql, ...values);
  });
}

async function keptRecords() {
  const subscription = await createSubscription(t.db);
  const payment = await createPayment(t.db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED', transactionId: 'T-guard-1' });
  const consent = await t.db.consent.create({
    data: { subscriptionId: subscription.id, kind: 'PRICE_INCREASE', obtainedAt: new Date('2030-01-01T00:00:00Z'), channel: 'email', reference: 'ref-홍길동' },
  });
  const refund = await t.db.externalRefund.create({
    data: {
      paymentId: payment.id,
      amount: 100,
      reason: 'transfer',
      reference: '홍길동 010-1234-5678',
      actor: 'op',
      recordedAt: new Date('2030-01-02T00:00:00Z'),
    },
  });
  const file = await t.db.settlementImport.create({
    data: {
      sha256: 'guard-file',
      encoding: 'utf-8',
      rows: 1,
      newLines: 1,
      duplicateLines: 0,
      coverageFrom: '2030-01-01',
      coverageTo: '2030-01-01',
      summary: {},
      actor: 'op',
    },
  });
  const line = await t.db.settlementLine.create({
    data: {
      importId: file.id,
      line: 1,
      transactionId: 'T-guard-1',
      type: 'APPROVAL',
      amount: 9900,
      tradedAt: new Date('2030-01-01T00:00:00Z'),
      tradeDate: '2030-01-01',
      extra: { buyerName: '홍길동' },
    },
  });
  return { consent, refund, file, line };
}

describe("the guards' erasure exception", () => {
  it('lets an erasure clear the personal columns of consents, external refunds and settlement lines, and nothing else', async () => {
    const { consent, refund, line } = await keptRecords();
    await expect(write(`UPDATE "consents" SET "reference" = NULL WHERE "id" = $1::uuid`, true, consent.id)).resolves.toBe(1);
    await expect(write(`UPDATE "external_refunds" SET "reference" = NULL WHERE "id" = $1::uuid`, true, refund.id)).resolves.toBe(1);
    await expect(write(`UPDATE "settlement_lines" SET "extra" = NULL WHERE "id" = $1::uuid`, true, line.id)).resolves.toBe(1);
    expect(await t.db.consent.findUniqueOrThrow({ where: { id: consent.id } })).toEqual({ ...consent, reference: null });
    expect(await t.db.externalRefund.findUniqueOrThrow({ where: { id: refund.id } })).toEqual({ ...refund, reference: null });
    expect(await t.db.settlementLine.findUniqueOrThrow({ where: { id: line.id } })).toEqual({ ...line, extra: null });
  });

  it('refuses the same clearing without the setting', async () => {
    const { consent, refund, line } = await keptRecords();
    await expect(write(`UPDATE "consents" SET "reference" = NULL WHERE "id" = $1::uuid`, false, consent.id)).rejects.toThrow(/immutable/);
    await expect(write(`UPDATE "external_refunds" SET "reference" = NULL WHERE "id" = $1::uuid`, false, refund.id)).rejects.toThrow(/never edited/);
    await expect(write(`UPDATE "settlement_lines" SET "extra" = NULL WHERE "id" = $1::uuid`, false, line.id)).rejects.toThrow(/never edited/);
  });

  it('refuses, even under the setting, a change of money, ids or times, a personal value written, a DELETE, an import, a TRUNCATE', async () => {
    const { consent, refund, file, line } = await keptRecords();
    const refused = [
      [`UPDATE "external_refunds" SET "amount" = 90 WHERE "id" = $1::uuid`, refund.id],
      [`UPDATE "external_refunds" SET "reference" = NULL, "amount" = 90 WHERE "id" = $1::uuid`, refund.id],
      [`UPDATE "external_refunds" SET "recordedAt" = now() WHERE "id" = $1::uuid`, refund.id],
      [`UPDATE "external_refunds" SET "reference" = 'another' WHERE "id" = $1::uuid`, refund.id],
      [`DELETE FROM "external_refunds" WHERE "id" = $1::uuid`, refund.id],
      [`UPDATE "consents" SET "reference" = NULL, "obtainedAt" = now() WHERE "id" = $1::uuid`, consent.id],
      [`UPDATE "consents" SET "channel" = NULL WHERE "id" = $1::uuid`, consent.id],
      [`DELETE FROM "consents" WHERE "id" = $1::uuid`, consent.id],
      [`UPDATE "settlement_lines" SET "extra" = NULL, "amount" = 1 WHERE "id" = $1::uuid`, line.id],
      [`UPDATE "settlement_lines" SET "transactionId" = 'T-other' WHERE "id" = $1::uuid`, line.id],
      [`UPDATE "settlement_lines" SET "extra" = '{"buyerName":"someone"}' WHERE "id" = $1::uuid`, line.id],
      [`DELETE FROM "settlement_lines" WHERE "id" = $1::uuid`, line.id],
      [`UPDATE "settlement_imports" SET "filename" = NULL WHERE "id" = $1::uuid`, file.id],
    ] as const;
    for (const [sql, id] of refused) await expect(write(sql, true, id), sql).rejects.toThrow(/immutable|never edited/);
    for (const table of ['settlement_lines', 'external_refunds']) {
      await expect(write(`TRUNCATE "${table}" CASCADE`, true), table).rejects.toThrow(/TRUNCATE|immutable|never edited/);
    }
    // All of it as it was.
    expect(await t.db.externalRefund.findUniqueOrThrow({ where: { id: refund.id } })).toEqual(refund);
    expect(await t.db.consent.findUniqueOrThrow({ where: { id: consent.id } })).toEqual(consent);
    expect(await t.db.settlementLine.findUniqueOrThrow({ where: { id: line.id } })).toEqual(line);
  });

  it('ends with its transaction: the next transaction on the same connection is guarded again', async () => {
    const { refund } = await keptRecords();
    await t.db.$transaction(async (tx: Prisma.TransactionClient) => {
      await tx.$executeRawUnsafe(`SELECT set_config('billing.erasure', 'erasure-under-test', true)`);
    });
    await expect(t.db.$executeRawUnsafe(`UPDATE "external_refunds" SET "reference" = NULL WHERE "id" = $1::uuid`, refund.id)).rejects.toThrow(/never edited/);
  });
});
