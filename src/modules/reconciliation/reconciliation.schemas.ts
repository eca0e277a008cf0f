// The reconciliation routes' shapes (docs/operating.md "Reconciling with the gateway", "Admin routes").
import { Type } from 'typebox';
import { Cursor, Limit, Uuid } from '../shared/schemas.ts';
import { DAY_PATTERN } from '../../lib/input.ts';
import { KOREA_ZONE } from '../../lib/calendar.ts';

/** A Korea calendar date. */
/** A calendar day (format 'date' refuses 2026-02-30, which the pattern alone let through to the database: a 500). */
export const KoreaDate = Type.String({ pattern: DAY_PATTERN, format: 'date', description: 'YYYY-MM-DD, Korea time' });

export const ImportQuery = Type.Object(
  {
    mapping: Type.Optional(Type.String({ maxLength: 2000, description: 'JSON {"<field>": "<header>"} overriding the header aliases' })),
    from: Type.Optional(KoreaDate),
    to: Type.Optional(KoreaDate),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

const Counts = Type.Object({ matched: Type.Integer(), mismatched: Type.Integer(), unmatched: Type.Integer(), missing: Type.Integer() });

export const ImportResponse = Type.Object({
  id: Uuid,
  filename: Type.Optional(Type.String()),
  sha256: Type.String(),
  encoding: Type.Union([Type.Literal('UTF-8'), Type.Literal('CP949')]),
  rows: Type.Integer({ description: 'data rows (not the header, not blank lines)' }),
  newLines: Type.Integer(),
  duplicateLines: Type.Integer({ description: 'lines already imported from another file, counted once' }),
  coverage: Type.Object({ from: KoreaDate, to: KoreaDate }),
  summary: Counts,
  resolved: Type.Object({ payments: Type.Integer(), refunds: Type.Integer() }),
  createdAt: Type.String({ format: 'date-time' }),
});

export const ImportList = Type.Object({ items: Type.Array(ImportResponse), nextCursor: Type.Union([Type.String(), Type.Null()]) });
export const ListQuery = Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) }, { additionalProperties: false });

const ItemStatus = Type.Union([Type.Literal('MATCHED'), Type.Literal('MISMATCHED'), Type.Literal('UNMATCHED'), Type.Literal('MISSING')]);

export const ItemsQuery = Type.Object(
  { from: Type.Optional(KoreaDate), to: Type.Optional(KoreaDate), status: Type.Optional(ItemStatus), limit: Limit, cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

export const Item = Type.Object({
  id: Uuid,
  source: Type.Union([Type.Literal('STATEMENT'), Type.Literal('LEDGER')]),
  status: ItemStatus,
  reasons: Type.Array(Type.Union([Type.Literal('AMOUNT'), Type.Literal('DATE'), Type.Literal('METHOD'), Type.Literal('STATUS')])),
  type: Type.Union([Type.Literal('APPROVAL'), Type.Literal('CANCEL')]),
  transactionId: Type.Optional(Type.String()),
  orderId: Type.Optional(Type.String()),
  amount: Type.Integer(),
  tradedAt: Type.String({ format: 'date-time' }),
  tradeDate: KoreaDate,
  paymentId: Type.Optional(Uuid),
  ourAmount: Type.Optional(Type.Integer()),
  ourStatus: Type.Optional(Type.String()),
  importId: Type.Optional(Uuid),
});

export const ItemList = Type.Object({ items: Type.Array(Item), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const SummaryQuery = Type.Object({ from: Type.Optional(KoreaDate), to: Type.Optional(KoreaDate) }, { additionalProperties: false });

const Total = Type.Object({ count: Type.Integer(), amount: Type.Integer() });

export const SummaryResponse = Type.Object({
  from: KoreaDate,
  to: KoreaDate,
  timezone: Type.Literal(KOREA_ZONE),
  statement: Type.Object({ approvals: Total, cancels: Total, net: Type.Integer() }),
  /**
   * Our side, as the gateway can see it: `refunds` (and so `net`) are refunds through the gateway only, comparable with
   * the statement's cancels; `externalRefunds` are the refunds made outside it (no gateway line will ever show them).
   */
  ledger: Type.Object({ approvals: Total, refunds: Total, externalRefunds: Total, net: Type.Integer() }),
  counts: Counts,
  anomalyAmount: Type.Integer(),
});
