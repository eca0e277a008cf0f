// The public reads of subscriptions (merchant and admin GET and lists), one statement each: the row, its billing
// key's public columns and its consents come back together, straight from the pg pool: through Prisma a page was three
// statements and most of the route's CPU (docs/benchmarks.md "Measurements behind choices in the code").
// The public shape itself stays in serializeSubscription.
import { columnsOf, sqlParams, sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursorSql, decodeCursor, limitSql, PAGE_ORDER_SQL, type PageKey, toPage } from '../../lib/pagination.ts';
import type { SubscriptionStatus } from '../ledger/subscription.state.ts';

/** The billing key's columns a subscription's public shape shows (never the key itself). */
export interface BillingKeySummary {
  id: string;
  method: 'CARD' | 'MOBILE';
  gateway: 'DANAL' | 'TOSS';
  status: 'ACTIVE' | 'REVOKED';
  cardName: string | null;
  cardNumber: string | null;
  carrier: string | null;
  phoneNumber: string | null;
}

/** BillingKeySummary's fields, in the public shape's order: the columns BILLING_KEY_SUMMARY_JSON reads. */
export const BILLING_KEY_SUMMARY_FIELDS = [
  'id',
  'method',
  'gateway',
  'status',
  'cardName',
  'cardNumber',
  'carrier',
  'phoneNumber',
] as const satisfies ReadonlyArray<keyof BillingKeySummary>;

export type ConsentRow = Prisma.ConsentGetPayload<object>;

/**
 * The subscription columns the public shape shows, and so the only ones these reads fetch (fewer columns to format
 * and parse: list pages are bound by that). serializeSubscription takes a SubscriptionView, so it cannot read another.
 * In the public shape's order: the console's CSV export derives its columns from this list (PUBLIC_FIELD_PATHS).
 */
export const PUBLIC_COLUMNS = [
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
  'usageStartedAt',
  'cancelAtPeriodEnd',
  'canceledAt',
  'cancelReason',
  'trialEnd',
  'pendingAmount',
  'needsAttention',
  'attentionReason',
  'refundDue',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<Prisma.SubscriptionScalarFieldEnum>;

export type SubscriptionView = Pick<Prisma.SubscriptionGetPayload<object>, (typeof PUBLIC_COLUMNS)[number]> & {
  billingKey: BillingKeySummary;
  consents: Array<Omit<ConsentRow, 'subscriptionId'>>;
};

/** The jsonb object of a billing key's summary, for the key aliased `k`; also used by the event feed. */
export const BILLING_KEY_SUMMARY_JSON = `jsonb_build_object(${BILLING_KEY_SUMMARY_FIELDS.map((field) => `'${field}', k."${field}"`).join(', ')})`;

/**
 * `aggregate` (an ordered aggregate over the consents aliased `c` matching `where`) when there is any such consent, else
 * `empty`. Most subscriptions have none, and an ordered aggregate sets up its sort on every row it runs for, with rows
 * or without: behind the index probe of EXISTS a page costs the database less (docs/benchmarks.md).
 */
function whenConsents(where: string, aggregate: string, empty: string): string {
  return `CASE WHEN EXISTS (SELECT 1 FROM "consents" c WHERE ${where}) THEN (SELECT ${aggregate} FROM "consents" c WHERE ${where}) ELSE ${empty} END`;
}

/** The jsonb array of a subscription's consents in their public order, for the consents aliased `c` matching `where`. */
export function consentsJson(where: string): string {
  return whenConsents(
    where,
    `jsonb_agg(jsonb_build_object('id', c."id", 'kind', c."kind", 'obtainedAt', c."obtainedAt", 'channel', c."channel",
    'reference', c."reference", 'createdAt', c."createdAt") ORDER BY c."obtainedAt", c."id")`,
    `'[]'::jsonb`,
  );
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

/**
 * One subscription's public view inside a transaction, through its connection (its uncommitted writes seen): one
 * statement where Prisma's include (WITH_KEY) is three. The shape after an audited change (audited-change.ts).
 */
export async function readSubscriptionInTransaction(tx: Prisma.TransactionClient, id: string): Promise<SubscriptionView> {
  const [row] = await tx.$queryRawUnsafe<Record<string, unknown>[]>(`${VIEW} WHERE s."id" = $1::uuid`, id);
  if (!row) throw new NotFoundError('Subscription');
  return toView(row);
}

/**
 * A customer's subscriptions, current ones first (every status but CANCELED), then the CANCELED, newest first within
 * each (subscriptions_userId_createdAt_id_idx finds them): the portal's overview.
 */
export async function readSubscriptionsOfUser(db: Db, userId: string): Promise<SubscriptionView[]> {
  const rows = await sqlQuery(db, `${VIEW} WHERE s."userId" = $1 ORDER BY (s."status" = 'CANCELED'), s."createdAt" DESC, s."id" DESC`, [userId]);
  return rows.map(toView);
}

export interface SubscriptionFilter {
  status?: SubscriptionStatus;
  needsAttention?: boolean;
  userId?: string;
  method?: 'CARD' | 'MOBILE';
  /** Its billing key's gateway. */
  gateway?: 'DANAL' | 'TOSS';
  createdFrom?: string;
  createdTo?: string;
  limit: number;
  cursor?: string;
}

/** The WHERE clause of a page (its filters and its cursor), `param` placing values. */
function pageWhere(filter: SubscriptionFilter, param: (value: unknown) => string): string {
  const where: string[] = [];
  if (filter.status !== undefined) where.push(`s."status" = ${param(filter.status)}::"SubscriptionStatus"`);
  if (filter.needsAttention !== undefined) where.push(`s."needsAttention" = ${param(filter.needsAttention)}`);
  if (filter.userId !== undefined) where.push(`s."userId" = ${param(filter.userId)}`);
  if (filter.method !== undefined) where.push(`s."method" = ${param(filter.method)}::"PaymentMethod"`);
  if (filter.gateway !== undefined) where.push(`k."gateway" = ${param(filter.gateway)}::"PaymentGateway"`);
  if (filter.createdFrom !== undefined) where.push(`s."createdAt" >= ${param(new Date(filter.createdFrom))}`);
  if (filter.createdTo !== undefined) where.push(`s."createdAt" < ${param(new Date(filter.createdTo))}`);
  const after = decodeCursor(filter.cursor);
  if (after) where.push(afterCursorSql('s', after, param));
  return where.length ? `WHERE ${where.join(' AND ')}` : '';
}

/**
 * One page, newest first by (createdAt, id) (keyset pagination, lib/pagination.ts). Each filter has an index ending
 * in (createdAt, id) (migration 20261122120000), so the first page and a deep one cost the same.
 */
export async function pageSubscriptions(db: Db, filter: SubscriptionFilter) {
  const { values, param } = sqlParams();
  const sql = `${VIEW} ${pageWhere(filter, param)} ${PAGE_ORDER_SQL('s')} ${limitSql(filter.limit + 1)}`;
  const rows = await sqlQuery(db, sql, values);
  return toPage(rows.map(toView), filter.limit);
}

/** An instant as Date#toISOString writes it (UTC, milliseconds, "Z"); the columns are timestamptz(3). */
const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * maskPhoneNumber (lib/redact.ts) in SQL: no number (null or empty) shows nothing, fewer than 8 digits shows ****, else
 * the first 3 and the last 4 digits. Digits are [0-9], as JavaScript's \D counts them (PostgreSQL's \d may take others).
 */
const maskedPhoneSql = (column: string) => `CASE WHEN nullif(${column}, '') IS NULL THEN NULL
  WHEN length(regexp_replace(${column}, '[^0-9]', '', 'g')) < 8 THEN '****'
  ELSE left(regexp_replace(${column}, '[^0-9]', '', 'g'), 3) || '-****-' || right(regexp_replace(${column}, '[^0-9]', '', 'g'), 4) END`;

/**
 * serializeSubscription (subscriptions.shape.ts) in SQL, for the subscription aliased `s` and its key `k`: the public
 * shape as JSON text, its fields in the same order. Written by PostgreSQL, a list page costs the service no row
 * parsing, Date objects or serializer (docs/benchmarks.md "Measurements behind choices in the code"). The twin test in
 * test/modules/subscriptions/subscriptions.routes.test.ts holds it equal to serializeSubscription, field by field.
 *
 * A field the serializer leaves undefined is absent: json_strip_nulls drops every null field at every depth (the
 * consents, the billing key). It is PostgreSQL 15's way to ABSENT ON NULL: JSON_OBJECT is 16 and later, and the
 * service supports 15 (db/server-version.ts). nextChargeAt and usageStartedAt, the fields that are a JSON null when empty,
 * are spliced in between the two stripped halves, each a non-empty object (id and cancelAtPeriodEnd are never null): the text of the
 * first without its closing brace, the field, the text of the second without its opening one.
 */
const BEFORE_NEXT_CHARGE = `json_strip_nulls(json_build_object(
  'id', s."id", 'userId', s."userId", 'method', s."method", 'status', s."status", 'amount', s."amount", 'orderName', s."orderName",
  'interval', json_build_object('unit', s."intervalUnit", 'count', s."intervalCount"),
  'itemCode', s."itemCode",
  'currentPeriodStart', ${isoSql('s."currentPeriodStart"')}, 'currentPeriodEnd', ${isoSql('s."currentPeriodEnd"')}))::text`;

const AFTER_NEXT_CHARGE = `json_strip_nulls(json_build_object(
  'cancelAtPeriodEnd', s."cancelAtPeriodEnd", 'canceledAt', ${isoSql('s."canceledAt"')}, 'cancelReason', s."cancelReason",
  'trialEnd', ${isoSql('s."trialEnd"')},
  'pendingAmount', s."pendingAmount", 'pendingAmountReason', CASE WHEN s."pendingAmount" IS NOT NULL THEN 'CONSENT_REQUIRED' END,
  'consents', ${whenConsents(
    'c."subscriptionId" = s."id"',
    `json_agg(json_build_object('id', c."id", 'kind', c."kind", 'obtainedAt', ${isoSql('c."obtainedAt"')}, 'channel', c."channel",
      'reference', c."reference", 'createdAt', ${isoSql('c."createdAt"')}) ORDER BY c."obtainedAt", c."id")`,
    `'[]'::json`,
  )},
  'needsAttention', s."needsAttention", 'attentionReason', s."attentionReason", 'refundDue', s."refundDue",
  'billingKey', json_build_object('id', k."id", 'method', k."method", 'gateway', k."gateway", 'status', k."status", 'cardName', k."cardName", 'cardNumber', k."cardNumber",
    'carrier', k."carrier", 'phoneNumber', ${maskedPhoneSql('k."phoneNumber"')}),
  'createdAt', ${isoSql('s."createdAt"')}, 'updatedAt', ${isoSql('s."updatedAt"')}))::text`;

const PUBLIC_JSON = `left(${BEFORE_NEXT_CHARGE}, -1)
  || ',"nextChargeAt":' || coalesce(to_json(${isoSql('s."nextChargeAt"')})::text, 'null')
  || ',"usageStartedAt":' || coalesce(to_json(${isoSql('s."usageStartedAt"')})::text, 'null') || ','
  || substr(${AFTER_NEXT_CHARGE}, 2)`;

/**
 * The same page as pageSubscriptions, as the JSON text of the list's public shape ({items, nextCursor}, docs/api.md "Shapes"),
 * each item written by PostgreSQL (PUBLIC_JSON): what the merchant and admin list routes send as it is.
 */
export async function pageSubscriptionsJson(db: Db, filter: SubscriptionFilter): Promise<string> {
  const { values, param } = sqlParams();
  const sql = `SELECT s."id", s."createdAt", ${PUBLIC_JSON} AS "json"
    FROM "subscriptions" s JOIN "billing_keys" k ON k."id" = s."billingKeyId"
    ${pageWhere(filter, param)} ${PAGE_ORDER_SQL('s')} ${limitSql(filter.limit + 1)}`;
  const page = toPage(await sqlQuery<PageKey & { json: string }>(db, sql, values), filter.limit);
  return `{"items":[${page.items.map((row) => row.json).join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}
