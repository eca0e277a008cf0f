// Proves that prisma/schema.prisma and the hand-written migrations agree (docs/architecture.md "Development notes"): the schema is read by
// Prisma's own parser (@prisma/prisma-schema-wasm, the DMMF), the database by pg_catalog after migrating.
// Every model, field, type, nullability, default, primary key, unique, index, foreign key and enum must match,
// and the only extra objects allowed in the database are the SQL-only constraints listed below (and the migrator's
// bookkeeping tables, _prisma_migrations and _function_files). A partitioned table is its parent (Prisma knows no
// partitions): the partitions of events and webhook_deliveries (migration 20261201200000_event_partitions), which
// hold the parent's columns, indexes and constraints, are left out here and checked in test/db/event-partitions.test.ts.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const require = createRequire(import.meta.url);
const wasm = require('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string };

// Constraints Prisma cannot express, kept in the migration SQL on purpose.
const SQL_ONLY_CHECKS = [
  'orders.orders_amount_positive',
  'orders.orders_orderId_bytes',
  'payment_attempts.payment_attempts_amount_positive',
  'payment_attempts.payment_attempts_attemptNumber_positive',
  'payment_attempts.payment_attempts_orderId_bytes',
  'payments.payments_amount_positive',
  'payments.payments_attemptCount_nonnegative',
  'payments.payments_canceledAmount_range',
  'payments.payments_cycle_nonnegative',
  'payments.payments_orderId_bytes',
  'registrations.registrations_amount_positive',
  'registrations.registrations_intervalCount_positive',
  'registrations.registrations_orderId_bytes',
  'subscriptions.subscriptions_amount_positive',
  'subscriptions.subscriptions_cycle_nonnegative',
  'subscriptions.subscriptions_intervalCount_positive',
  'subscriptions.subscriptions_lastAmount_positive',
  'subscriptions.subscriptions_pendingAmount_positive',
  'subscriptions.subscriptions_pendingAmount_requested',
  'subscriptions.subscriptions_trialing_has_end',
  'registrations.registrations_trialDays_range',
  'registrations.registrations_purpose_target',
  'event_sequencer.event_sequencer_single_row',
  'webhook_deliveries.webhook_deliveries_attempts_nonnegative',
  'webhook_deliveries.webhook_deliveries_pending_has_time',
  'mrr_movements.mrr_movements_delta',
  'external_refunds.external_refunds_amount_positive',
  'external_refunds.external_refunds_reason_length',
  'external_refunds.external_refunds_reference_length',
  'payment_attempts.payment_attempts_reason_only_refunds',
  'console_sessions.console_sessions_locale_check',
  'erasures.erasures_status_check',
  'erasures.erasures_retain_until_check',
  'erasures.erasures_vault_whole_check',
  'registrations.registrations_customerKey_gateway',
  'billing_keys.billing_keys_customerKey_gateway',
];
const SQL_ONLY_PARTIAL_INDEXES = [
  'payment_attempts.payment_attempts_billing_orderId_key(orderId) WHERE (operation = \'BILLING_CONFIRM\'::"GatewayOperation")',
  'payment_attempts.payment_attempts_one_in_flight(paymentId) WHERE (status = \'IN_FLIGHT\'::"AttemptStatus")',
  'payment_attempts.payment_attempts_inquiry_due(inquiryNextAt) WHERE (status = \'UNKNOWN\'::"AttemptStatus")',
  'payments.payments_one_initial_per_registration(registrationId) WHERE (kind = \'INITIAL\'::"PaymentKind")',
  'payments.payments_one_success_per_cycle(subscriptionId,cycle) WHERE (status = \'SUCCEEDED\'::"PaymentStatus")',
  'payments.payments_waiting_for_operator(createdAt,id) WHERE ((status = \'UNKNOWN\'::"PaymentStatus") OR ("attentionReason" IS NOT NULL))',
  // Unique among numbered events within a month (a partitioned table's unique index holds its partition key).
  'events.events_sequence_key(sequence,createdAt) WHERE (sequence IS NOT NULL)',
  'events.events_unsequenced(xid,pos) WHERE (sequence IS NULL)',
  'webhook_deliveries.webhook_deliveries_due(endpointId,nextAttemptAt) WHERE (status = \'PENDING\'::"WebhookDeliveryStatus")',
  // The reports' partial indexes (migration 20261124180000_report_indexes; INCLUDE columns listed after the key).
  'payments.payments_approved_approvedAt_idx(approvedAt,method,amount) WHERE (status = ANY (ARRAY[\'SUCCEEDED\'::"PaymentStatus", \'CANCELED\'::"PaymentStatus"]))',
  'payment_attempts.payment_attempts_refunds_at_idx(paymentId,amount) WHERE ((operation = \'CANCEL\'::"GatewayOperation") AND (status = \'SUCCEEDED\'::"AttemptStatus"))',
  'payment_attempts.payment_attempts_declines_completedAt_idx(completedAt,paymentId) WHERE ((operation = \'BILLING_CONFIRM\'::"GatewayOperation") AND (status = \'DECLINED\'::"AttemptStatus"))',
  'subscriptions.subscriptions_due_claim_idx(nextChargeAt) WHERE ((status = ANY (ARRAY[\'ACTIVE\'::"SubscriptionStatus", \'TRIALING\'::"SubscriptionStatus", \'PAST_DUE\'::"SubscriptionStatus"])) AND ("needsAttention" = false))',
  // The retention pass's sealed vaults (migration 20261130100000_erasures).
  'erasures.erasures_retainUntil_sealed_idx(retainUntil) WHERE ("identityCiphertext" IS NOT NULL)',
  // An erasure's idempotency answers naming the customer or one of their objects, by an expression (no column listed; migration
  // 20261130110000_erasure_lookups).
  "idempotency_records.idempotency_records_userId_idx() WHERE (COALESCE((\"responseBody\" ->> 'userId'::text), ((\"responseBody\" -> 'window'::text) ->> 'userId'::text)) IS NOT NULL)",
  "idempotency_records.idempotency_records_resource_idx() WHERE (split_part(scope, ' '::text, 3) <> ''::text)",
];

interface DmmfField {
  name: string;
  kind: 'scalar' | 'object' | 'enum';
  isRequired: boolean;
  isList: boolean;
  isId: boolean;
  isUnique: boolean;
  type: string;
  nativeType: [string, string[]] | null;
  dbName?: string | null;
  hasDefaultValue: boolean;
  default?: { name: string; args: unknown[] } | string | number | boolean;
  isUpdatedAt: boolean;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  dbName?: string | null;
  fields: Array<{ name: string }>;
}
interface Dmmf {
  datamodel: {
    models: DmmfModel[];
    enums: Array<{ name: string; dbName: string | null; values: Array<{ name: string; dbName: string | null }> }>;
    indexes: DmmfIndex[];
  };
}

const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8') }))) as Dmmf;
const models = dmmf.datamodel.models;
const tableOf = (model: string) => {
  const found = models.find((m) => m.name === model)!;
  return found.dbName ?? found.name;
};
const columnOf = (model: DmmfModel, field: string) => {
  const found = model.fields.find((f) => f.name === field)!;
  return found.dbName ?? found.name;
};

function expectedType(field: DmmfField): string {
  if (field.isList) return `${expectedType({ ...field, isList: false })}[]`;
  if (field.kind === 'enum') return `enum:${field.type}`;
  const native = field.nativeType?.[0];
  const args = field.nativeType?.[1] ?? [];
  switch (field.type) {
    case 'String':
      if (native === 'Uuid') return 'uuid';
      if (native === 'VarChar') return `character varying(${args[0]})`;
      return 'text';
    case 'Int':
      return native === 'SmallInt' ? 'smallint' : 'integer';
    case 'BigInt':
      return 'bigint';
    case 'Boolean':
      return 'boolean';
    case 'Bytes':
      return 'bytea';
    case 'Json':
      return 'jsonb';
    case 'DateTime':
      if (native === 'Date') return 'date';
      if (native === 'Timestamptz') return `timestamp with time zone(${args[0] ?? 6})`;
      return `timestamp without time zone(${args[0] ?? 3})`;
    default:
      throw new Error(`drift test does not know type ${field.type}; extend it`);
  }
}

/** The column default PostgreSQL reports for what Prisma's migrate would have written, or null. */
function expectedDefault(model: DmmfModel, field: DmmfField): string | null {
  if (!field.hasDefaultValue || field.default === undefined) return null;
  const value = field.default;
  if (typeof value === 'object') {
    if (value.name === 'now') return 'CURRENT_TIMESTAMP';
    if (value.name === 'dbgenerated') return String(value.args[0]);
    if (value.name === 'autoincrement') return `nextval('${model.dbName ?? model.name}_${field.dbName ?? field.name}_seq'::regclass)`;
    if (value.name === 'uuid' || value.name === 'cuid') return null; // generated by the client, not the database
    throw new Error(`drift test does not know default ${value.name}; extend it`);
  }
  if (field.kind === 'enum') return `'${value}'::"${field.type}"`;
  return String(value);
}

/** The partitions (of events and webhook_deliveries), by name: their parent stands for them. */
const PARTITIONS = `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relispartition`;

let database: TestDatabase;
let client: pg.Client;

async function rows<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  return (await client.query<T>(sql)).rows;
}

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});

afterAll(async () => {
  await client.end();
  await database.drop();
});

describe('schema.prisma and the migrated database', () => {
  it('have the same enums with the same values in the same order', async () => {
    const actual = await rows<{ name: string; values: string[] }>(`
      SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = current_schema() GROUP BY t.typname ORDER BY t.typname`);
    const expected = dmmf.datamodel.enums
      .map((e) => ({ name: e.dbName ?? e.name, values: e.values.map((v) => v.dbName ?? v.name) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(actual.sort((a, b) => a.name.localeCompare(b.name))).toEqual(expected);
  });

  it('have the same tables', async () => {
    const actual = await rows<{ table_name: string }>(`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT IN ('_prisma_migrations', '_function_files')
        AND table_name NOT IN (${PARTITIONS})`);
    expect(actual.map((r) => r.table_name).sort()).toEqual(models.map((m) => m.dbName ?? m.name).sort());
  });

  it('have the same columns with the same types, nullability and defaults', async () => {
    const actual = await rows<{
      table_name: string;
      column_name: string;
      data_type: string;
      udt_name: string;
      is_nullable: string;
      column_default: string | null;
      datetime_precision: number | null;
      character_maximum_length: number | null;
    }>(`
      SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default, datetime_precision, character_maximum_length
      FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT IN ('_prisma_migrations', '_function_files')
        AND table_name NOT IN (${PARTITIONS})`);
    const describe = (r: (typeof actual)[number]) => {
      let type = r.data_type;
      if (type === 'USER-DEFINED') type = `enum:${r.udt_name}`;
      else if (type === 'ARRAY') type = `${r.udt_name === '_text' ? 'text' : r.udt_name}[]`;
      else if (type.startsWith('timestamp')) type = `${type}(${r.datetime_precision})`;
      else if (type === 'character varying') type = `${type}(${r.character_maximum_length})`;
      return { column: `${r.table_name}.${r.column_name}`, type, nullable: r.is_nullable === 'YES', default: r.column_default };
    };
    const expected = models.flatMap((model) =>
      model.fields
        .filter((f) => f.kind !== 'object')
        .map((f) => ({
          column: `${model.dbName ?? model.name}.${f.dbName ?? f.name}`,
          type: expectedType(f),
          nullable: !f.isRequired,
          default: expectedDefault(model, f),
        })),
    );
    const byColumn = (a: { column: string }, b: { column: string }) => a.column.localeCompare(b.column);
    expect(actual.map(describe).sort(byColumn)).toEqual(expected.sort(byColumn));
  });

  it('have the same primary keys, unique constraints and indexes, named as Prisma names them', async () => {
    const actual = await rows<{ table: string; name: string; unique: boolean; primary: boolean; predicate: string | null; columns: string[] }>(`
      SELECT c.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary,
             pg_get_expr(ix.indpred, ix.indrelid) AS predicate,
             ARRAY(SELECT a.attname::text FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
                   JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
      FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class c ON c.oid = ix.indrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relname NOT IN ('_prisma_migrations', '_function_files') AND NOT c.relispartition`);

    const full = actual.filter((r) => r.predicate === null);
    const partial = actual.filter((r) => r.predicate !== null);
    const kind = (r: { unique: boolean; primary: boolean }) => (r.primary ? 'id' : r.unique ? 'unique' : 'normal');
    const actualDescribed = full.map((r) => `${r.table} ${kind(r)} ${r.name}(${r.columns.join(',')})`).sort();

    const expected = dmmf.datamodel.indexes.map((index) => {
      const model = models.find((m) => m.name === index.model)!;
      const table = tableOf(index.model);
      const columns = index.fields.map((f) => columnOf(model, f.name));
      const suffix = index.type === 'id' ? 'pkey' : index.type === 'unique' ? 'key' : 'idx';
      const name = index.dbName ?? (index.type === 'id' ? `${table}_pkey` : `${table}_${columns.join('_')}_${suffix}`);
      return `${table} ${index.type} ${name}(${columns.join(',')})`;
    });
    expect(actualDescribed).toEqual(expected.sort());

    expect(partial.map((r) => `${r.table}.${r.name}(${r.columns.join(',')}) WHERE ${r.predicate}`).sort()).toEqual([...SQL_ONLY_PARTIAL_INDEXES].sort());
  });

  it('have the same foreign keys with Prisma’s default referential actions', async () => {
    const actual = await rows<{
      name: string;
      table: string;
      columns: string[];
      target: string;
      target_columns: string[];
      on_delete: string;
      on_update: string;
    }>(`
      SELECT con.conname AS name, cl.relname AS table, fcl.relname AS target,
             ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, ord)
                   JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.ord) AS columns,
             ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, ord)
                   JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.ord) AS target_columns,
             con.confdeltype AS on_delete, con.confupdtype AS on_update
      FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_class fcl ON fcl.oid = con.confrelid
      JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE con.contype = 'f' AND n.nspname = current_schema() AND NOT cl.relispartition`);
    const actions: Record<string, string> = { a: 'NoAction', r: 'Restrict', c: 'Cascade', n: 'SetNull', d: 'SetDefault' };
    const expected = models.flatMap((model) =>
      model.fields
        .filter((f) => f.kind === 'object' && f.relationFromFields && f.relationFromFields.length > 0)
        .map((f) => {
          const table = model.dbName ?? model.name;
          const columns = f.relationFromFields!.map((name) => columnOf(model, name));
          const targetModel = models.find((m) => m.name === f.type)!;
          const scalars = f.relationFromFields!.map((name) => model.fields.find((x) => x.name === name)!);
          const onDelete = f.relationOnDelete ?? (scalars.every((s) => s.isRequired) ? 'Restrict' : 'SetNull');
          return `${table}_${columns.join('_')}_fkey ${table}(${columns.join(',')}) -> ${tableOf(f.type)}(${f
            .relationToFields!.map((name) => columnOf(targetModel, name))
            .join(',')}) delete=${onDelete} update=Cascade`;
        }),
    );
    const described = actual.map(
      (r) =>
        `${r.name} ${r.table}(${r.columns.join(',')}) -> ${r.target}(${r.target_columns.join(',')}) delete=${actions[r.on_delete]} update=${actions[r.on_update]}`,
    );
    expect(described.sort()).toEqual(expected.sort());
  });

  it('have no CHECK constraints beyond the SQL-only list', async () => {
    const actual = await rows<{ name: string }>(`
      SELECT cl.relname || '.' || con.conname AS name FROM pg_constraint con
      JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE con.contype = 'c' AND n.nspname = current_schema() AND NOT cl.relispartition`);
    expect(actual.map((r) => r.name).sort()).toEqual([...SQL_ONLY_CHECKS].sort());
  });
});
