// The public reads of subscriptions (merchant and admin GET and lists), one statement each: the row, its billing
// key's public columns and its consents come back together, straight from the pg pool: through Prisma a page was three
// statements and most of the route's CPU (BENCHMARKS.md §4).
// The public shape itself stays in serializeSubscription.
import { columnsOf, sqlParams, sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursorSql, decodeCursor, PAGE_ORDER_SQL, toPage } from '../../lib/pagination.ts';
import type { SubscriptionStatus } from '../ledger/subscription.state.ts';

/** The billing key's columns a subscription's public shape shows (never the key itself). */
export interface BillingKeySummary {
  id: string;
  method: 'CARD' | 'MOBILE';
  status: 'ACTIVE' | 'REVOKED';
  cardName: string | null;
  cardNumber: string | null;
  carrier: string | null;
  phoneNumber: string | null;
}

export type ConsentRow = Prisma.ConsentGetPayload<object>;

/**
 * The subscription columns the public shape shows, and so the only ones these reads fetch (fewer columns to format
 * and parse: list pages are bound by that). serializeSubscription takes a SubscriptionView, so it cannot read another.
 */
const PUBLIC_COLUMNS = [
  'id',
  'userId',
  'method',
  'status',
  'amount',
  'orderName',
  'intervalUnit',
  'intervalCount',
  'itemCode',
  'currentPeriodStart',
  'currentPeriodEnd',
  'nextChargeAt',
  'cancelAtPeriodEnd',
  'canceledAt',
  'cancelReason',
  'trialEnd',
  'pendingAmount',
  'needsAttention',
  'attentionReason',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<Prisma.SubscriptionScalarFieldEnum>;

export type SubscriptionView = Pick<Prisma.SubscriptionGetPayload<object>, (typeof PUBLIC_COLUMNS)[number]> & {
  billingKey: BillingKeySummary;
  consents: Array<Omit<ConsentRow, 'subscriptionId'>>;
};

/** The jsonb object of a billing key's summary, for the key aliased `k`; also used by the event feed. */
export const BILLING_KEY_SUMMARY_JSON = `jsonb_build_object('id', k."id", 'method', k."method", 'status', k."status", 'cardName', k."cardName",
  'cardNumber', k."cardNumber", 'carrier', k."carrier", 'phoneNumber', k."phoneNumber")`;

/** The jsonb array of a subscription's consents in their public order, for the consents aliased `c` matching `where`. */
export function consentsJson(where: string): string {
  return `(SELECT coalesce(jsonb_agg(jsonb_build_object('id', c."id", 'kind', c."kind", 'obtainedAt', c."obtainedAt", 'channel', c."channel",
    'reference', c."reference", 'createdAt', c."createdAt") ORDER BY c."obtainedAt", c."id"), '[]') FROM "consents" c WHERE ${where})`;
}

/** Consents read from jsonb carry their instants as strings. */
export function reviveConsents(rows: Array<Record<string, unknown>> | null): SubscriptionView['consents'] {
  return (rows ?? []).map(
    (c) => ({ ...c, obtainedAt: new Date(c.obtainedAt as string), createdAt: new Date(c.createdAt as string) }) as SubscriptionView['consents'][number],
  );
}

const VIEW = `SELECT ${columnsOf(PUBLIC_COLUMNS, 's')}, ${BILLING_KEY_SUMMARY_JSON} AS "billingKey", ${consentsJson('c."subscriptionId" = s."id"')} AS "consents"
  FROM "subscriptions" s JOIN "billing_keys" k ON k."id" = s."billingKeyId"`;

function toView(row: Record<string, unknown>): SubscriptionView {
  return { ...row, consents: reviveConsents(row.consents as Array<Record<string, unknown>>) } as SubscriptionView;
}

/** One subscription's public view; NotFoundError when there is none. */
export async function readSubscription(db: Db, id: string): Promise<SubscriptionView> {
  const [row] = await sqlQuery(db, `${VIEW} WHERE s."id" = $1`, [id]);
  if (!row) throw new NotFoundError('Subscription');
  return toView(row);
}

export interface SubscriptionFilter {
  status?: SubscriptionStatus;
  needsAttention?: boolean;
  userId?: string;
  method?: 'CARD' | 'MOBILE';
  createdFrom?: string;
  createdTo?: string;
  limit: number;
  cursor?: string;
}

/**
 * One page, newest first by (createdAt, id) (keyset pagination, lib/pagination.ts). Each filter has an index ending
 * in (createdAt, id) (migration 20261122120000), so the first page and a deep one cost the same.
 */
export async function pageSubscriptions(db: Db, filter: SubscriptionFilter) {
  const { values, param } = sqlParams();
  const where: string[] = [];
  if (filter.status !== undefined) where.push(`s."status" = ${param(filter.status)}::"SubscriptionStatus"`);
  if (filter.needsAttention !== undefined) where.push(`s."needsAttention" = ${param(filter.needsAttention)}`);
  if (filter.userId !== undefined) where.push(`s."userId" = ${param(filter.userId)}`);
  if (filter.method !== undefined) where.push(`s."method" = ${param(filter.method)}::"PaymentMethod"`);
  if (filter.createdFrom !== undefined) where.push(`s."createdAt" >= ${param(new Date(filter.createdFrom))}`);
  if (filter.createdTo !== undefined) where.push(`s."createdAt" < ${param(new Date(filter.createdTo))}`);
  const after = decodeCursor(filter.cursor);
  if (after) where.push(afterCursorSql('s', after, param));
  const sql = `${VIEW} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${PAGE_ORDER_SQL('s')} LIMIT ${param(filter.limit + 1)}`;
  const rows = await sqlQuery(db, sql, values);
  return toPage(rows.map(toView), filter.limit);
}
