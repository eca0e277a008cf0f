// The reconciliation routes' shapes (docs/reconciliation.md "Reconciling with the gateway"; docs/operating.md "Admin routes").
import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Cursor, Gateway, Limit, StringEnum, Uuid, pageOf } from '../shared/schemas.ts';
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

export const ImportResponse = named(
  'SettlementImport',
  Type.Object(
    {
      id: Uuid,
      filename: Type.Optional(Type.String()),
      gateway: Gateway,
      sha256: Type.String({ description: 'of the file’s bytes, or (encoding API) of the canonical rendering of the lines the gateway’s API answered' }),
      encoding: StringEnum(['UTF-8', 'CP949', 'API'], { description: 'the file’s encoding, or API: lines read from the gateway’s settlements API' }),
      rows: Type.Integer({ description: 'data rows (not the header, not blank lines), or the lines the API answered' }),
      newLines: Type.Integer(),
      duplicateLines: Type.Integer({ description: 'lines already imported from another file, counted once' }),
      coverage: Type.Object({ from: KoreaDate, to: KoreaDate }),
      summary: Counts,
      resolved: Type.Object({ payments: Type.Integer(), refunds: Type.Integer() }),
      createdAt: Type.String({ format: 'date-time' }),
    },
    { description: 'One imported settlement statement (a file, or a gateway’s settlements API) and what matching it against the ledger found' },
  ),
);

export const ImportList = pageOf('SettlementImportPage', ImportResponse, 'A page of settlement imports, newest first');
export const ListQuery = Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) }, { additionalProperties: false });

const ItemStatus = named(
  'ReconciliationStatus',
  StringEnum(['MATCHED', 'MISMATCHED', 'UNMATCHED', 'MISSING'], {
    description: 'MATCHED; MISMATCHED (see reasons); UNMATCHED: a statement line with no payment of ours; MISSING: a payment of ours the statement lacks',
  }),
);

export const ItemsQuery = Type.Object(
  {
    from: Type.Optional(KoreaDate),
    to: Type.Optional(KoreaDate),
    status: Type.Optional(ItemStatus),
    gateway: Type.Optional(Gateway),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

/** POST /settlement-imports/toss: the Korea dates whose settlements are read (at most SYNC_MAX_DAYS of them). */
export const SyncBody = Type.Object({ from: KoreaDate, to: KoreaDate }, { additionalProperties: false, examples: [{ from: '2026-11-28', to: '2026-11-28' }] });

export const Item = named(
  'ReconciliationItem',
  Type.Object(
    {
      id: Uuid,
      source: StringEnum(['STATEMENT', 'LEDGER']),
      status: ItemStatus,
      reasons: Type.Array(StringEnum(['AMOUNT', 'DATE', 'METHOD', 'STATUS'])),
      type: StringEnum(['APPROVAL', 'CANCEL']),
      transactionId: Type.Optional(Type.String()),
      orderId: Type.Optional(Type.String()),
      amount: Type.Integer(),
      tradedAt: Type.String({ format: 'date-time' }),
      tradeDate: KoreaDate,
      paymentId: Type.Optional(Uuid),
      ourAmount: Type.Optional(Type.Integer()),
      ourStatus: Type.Optional(Type.String()),
      importId: Type.Optional(Uuid),
      gateway: Gateway,
    },
    { description: 'A statement line or a ledger entry of a Korea trade date, and how it compares (a line matches payments of its own gateway)' },
  ),
);

export const ItemList = pageOf('ReconciliationItemPage', Item, 'A page of reconciliation items');

export const SummaryQuery = Type.Object(
  { from: Type.Optional(KoreaDate), to: Type.Optional(KoreaDate), gateway: Type.Optional(Gateway) },
  { additionalProperties: false },
);

const Total = Type.Object({ count: Type.Integer(), amount: Type.Integer() });

export const SummaryResponse = named(
  'ReconciliationSummary',
  Type.Object(
    {
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
    },
    { description: 'The statement’s and the ledger’s totals of a period, items by status and the anomalies’ amount' },
  ),
);
