// The timeline of a subscription or a payment (docs/console.md "Operator console"), newest first, in one statement: its
// events (the merchant event feed's rows), the audit entries of operators and imports (with the actor and reason),
// and the gateway attempts (with the gateway's code). A subscription's timeline includes those of its payments.
// Keyset pages on (at, key): a 36-month subscription is one page of about two hundred rows, never a scan of the
// tables (events by the (objectId, pos) index, audit by (entityType, entityId, createdAt), attempts by payment).
import { sqlParams, sqlQuery, type Db } from '../../db/prisma.ts';
import { ValidationError } from '../../lib/errors.ts';

export interface TimelineEntry {
  source: 'event' | 'audit' | 'attempt';
  at: Date;
  /** Event type, audit action, or the attempt's operation and outcome ("BILLING_CONFIRM DECLINED"). */
  title: string;
  actor: string | null;
  reason: string | null;
  /** The gateway's code of an attempt. */
  code: string | null;
  /** The orderId and transactionId an attempt carried. */
  detail: string | null;
  /** The gateway's message of an attempt. */
  message: string | null;
  /** The amount of an attempt, in won (the page writes it with its money formatter). */
  amount: number | null;
  /** The payment (or subscription) the entry belongs to. */
  ref: string;
  key: string;
}

export const TIMELINE_PAGE = 200;

export function encodeTimelineCursor(entry: Pick<TimelineEntry, 'at' | 'key'>): string {
  return Buffer.from(JSON.stringify([entry.at.toISOString(), entry.key]), 'utf8').toString('base64url');
}

function decodeTimelineCursor(cursor: string | undefined): { at: Date; key: string } | undefined {
  if (!cursor) return undefined;
  try {
    const [at, key] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(at);
    if (Number.isNaN(date.getTime()) || typeof key !== 'string' || key.length > 100) throw new Error('bad');
    return { at: date, key };
  } catch {
    throw new ValidationError('older is not a valid timeline position');
  }
}

/** One page of the timeline of `subject`, newest first, from `older` (a cursor of the previous page) on. */
export async function readTimeline(
  db: Db,
  subject: { subscriptionId: string } | { paymentId: string },
  older?: string,
  limit = TIMELINE_PAGE,
): Promise<{ entries: TimelineEntry[]; older: string | null }> {
  const { values, param } = sqlParams();
  const id = param('subscriptionId' in subject ? subject.subscriptionId : subject.paymentId);
  const ids =
    'subscriptionId' in subject
      ? `SELECT ${id}::uuid AS "id" UNION ALL SELECT p."id" FROM "payments" p WHERE p."subscriptionId" = ${id}::uuid`
      : `SELECT ${id}::uuid AS "id"`;
  const from = decodeTimelineCursor(older);
  const before = (at: string, key: string) => (from ? `(${at}, ${key}) < (${param(from.at)}::timestamptz, ${param(from.key)}::text)` : 'true');
  const take = param(limit + 1);
  const attemptAt = 'coalesce(t."completedAt", t."sentAt", t."createdAt")';
  const sql = `WITH ids AS (${ids})
    SELECT * FROM (
      (SELECT 'event' AS "source", e."createdAt" AS "at", e."type" AS "title", NULL::text AS "actor", NULL::text AS "reason", NULL::text AS "code",
              NULL::text AS "detail", NULL::text AS "message", NULL::integer AS "amount", e."objectId"::text AS "ref", lpad(e."pos"::text, 20, '0') AS "key"
         FROM "events" e WHERE e."objectId" IN (SELECT "id" FROM ids) AND ${before('e."createdAt"', `lpad(e."pos"::text, 20, '0')`)}
         ORDER BY e."createdAt" DESC, e."pos" DESC LIMIT ${take})
      UNION ALL
      (SELECT 'audit', a."createdAt", a."action", a."actor", a."reason", NULL, NULL, NULL, NULL, a."entityId", a."id"::text
         FROM "audit_events" a WHERE a."entityType" IN ('subscription', 'payment') AND a."entityId" IN (SELECT "id"::text FROM ids)
          AND ${before('a."createdAt"', 'a."id"::text')}
         ORDER BY a."createdAt" DESC, a."id" DESC LIMIT ${take})
      UNION ALL
      (SELECT 'attempt', ${attemptAt}, t."operation"::text || ' ' || t."status"::text, NULL, NULL, t."gatewayCode",
              concat_ws(' · ', t."orderId", t."transactionId"), t."gatewayMessage", t."amount", t."paymentId"::text, t."id"::text
         FROM "payment_attempts" t WHERE t."paymentId" IN (SELECT "id" FROM ids) AND ${before(attemptAt, 't."id"::text')}
         ORDER BY ${attemptAt} DESC, t."id" DESC LIMIT ${take})
    ) x ORDER BY x."at" DESC, x."key" DESC LIMIT ${take}`;
  const rows = await sqlQuery<TimelineEntry>(db, sql, values);
  const entries = rows.slice(0, limit);
  const last = entries.at(-1);
  return { entries, older: rows.length > limit && last ? encodeTimelineCursor(last) : null };
}
