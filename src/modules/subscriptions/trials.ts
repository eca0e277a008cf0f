// A trial's end, noticed in time (docs/architecture.md, invariant 13): the merchant is told a trial ends within 30 days while no
// consent to convert it is recorded, so that it can ask the customer before the first paid charge.
// The database adds (prisma/functions/): the subscription.trial_will_end event when trialWillEndAt is set (events.sql).
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';

type Tx = Prisma.TransactionClient;

/** When subscription.trial_will_end is due: the trial ends within this, and no TRIAL_CONVERSION consent is recorded. */
export const TRIAL_NOTICE_MS = 30 * 24 * 3600_000;

/**
 * Marks trials that end within 30 days and have no TRIAL_CONVERSION consent yet, once each; the events trigger turns
 * the mark into `subscription.trial_will_end` so that the merchant can ask for the consent in time. Run at every
 * charging pass and when a trial starts.
 */
export async function noteTrialsEnding(tx: Tx | Db, now: Date, subscriptionId?: string): Promise<number> {
  const horizon = new Date(now.getTime() + TRIAL_NOTICE_MS);
  const only = subscriptionId ? Prisma.sql`AND s."id" = ${subscriptionId}::uuid` : Prisma.empty;
  return tx.$executeRaw`
    UPDATE "subscriptions" s SET "trialWillEndAt" = ${now}, "updatedAt" = ${now}
     WHERE s."status" = 'TRIALING' AND s."trialWillEndAt" IS NULL AND s."trialEnd" <= ${horizon} ${only}
       AND NOT EXISTS (SELECT 1 FROM "consents" c WHERE c."subscriptionId" = s."id" AND c."kind" = 'TRIAL_CONVERSION')`;
}
