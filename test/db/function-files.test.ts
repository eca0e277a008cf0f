// The database's functions and triggers are exactly those of prisma/functions/ (docs/architecture.md "What the
// database adds to each write"), each defined once; the rules both the SQL and the TypeScript spell are held equal:
// the events trigger's watched columns and the public field lists, the event types it can write and EVENT_TYPES,
// counts_as_paid and PAID_STATUSES, the roll-ups' Korea zone. Read on the migrated database, never assumed.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFunctionFiles } from '../../src/db/apply-functions.ts';
import { MIGRATIONS_DIR } from '../../src/db/migrator.ts';
import { SUBSCRIPTION_COLUMNS, PAYMENT_COLUMNS } from '../../src/modules/console/list-export.ts';
import { EVENT_TYPES } from '../../src/modules/events/event-types.ts';
import { PAID_STATUSES, type PaymentStatus } from '../../src/modules/ledger/payment.state.ts';
import { KOREA_ZONE } from '../../src/lib/calendar.ts';
import { PUBLIC_COLUMNS } from '../../src/modules/subscriptions/subscriptions.read.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { definitionsOf, FUNCTIONS_SQL, readCatalog, TRIGGERS_SQL, withClient } from '../helpers/function-files.ts';

const files = readFunctionFiles();
const defined = definitionsOf(files);
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const query = <T>(sql: string, values: unknown[] = []) => withClient(database.url, async (client) => (await client.query(sql, values)).rows as T[]);
const duplicates = (names: string[]) => names.filter((name, index) => names.indexOf(name) !== index);

describe('the function files', () => {
  it('define every function and trigger with CREATE OR REPLACE (applying a file again is harmless), each once', () => {
    // Applied in name order: the rules the others use come first.
    expect(files[0]!.name).toBe('common.sql');
    for (const file of files) expect(file.sql, file.name).not.toMatch(/\bCREATE\s+(FUNCTION|TRIGGER|PROCEDURE)\b/i);
    expect(duplicates(defined.functions.map((f) => f.name))).toEqual([]);
    expect(duplicates(defined.triggers.map((t) => `${t.table}.${t.name}`))).toEqual([]);
    expect(defined.functions.length).toBeGreaterThan(30);
    expect(defined.triggers.length).toBeGreaterThan(30);
  });

  it('are the only definitions: no versioned migration after the last shipped one defines a function or trigger', () => {
    const later = readdirSync(MIGRATIONS_DIR).filter((name) => /^\d{14}_/.test(name) && name.slice(0, 14) > '20261124220000');
    for (const name of later) {
      const sql = readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');
      expect(sql, name).not.toMatch(/\bCREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE|TRIGGER)\b/i);
    }
  });
});

describe("the database's functions and triggers", () => {
  it('are exactly those of the files: the same functions (one each, the same text) and the same triggers', async () => {
    const functions = await query<{ name: string; source: string }>(FUNCTIONS_SQL);
    expect(duplicates(functions.map((f) => f.name))).toEqual([]);
    expect(functions.map((f) => f.name).sort()).toEqual(defined.functions.map((f) => f.name).sort());
    const source = new Map(functions.map((f) => [f.name, f.source]));
    for (const f of defined.functions) expect(source.get(f.name), `${f.name} (${f.file})`).toBe(f.body);

    const triggers = await query<{ table: string; name: string }>(TRIGGERS_SQL);
    expect(triggers.map((t) => `${t.table}.${t.name}`).sort()).toEqual(defined.triggers.map((t) => `${t.table}.${t.name}`).sort());
  });

  it('do not change when the files are applied again (every definition, trigger conditions and arguments included)', async () => {
    await withClient(database.url, async (client) => {
      const before = await readCatalog(client);
      await client.query('BEGIN');
      try {
        for (const file of files) await client.query(file.sql);
        expect(await readCatalog(client)).toEqual(before);
      } finally {
        await client.query('ROLLBACK');
      }
    });
  });
});

interface EventTrigger {
  table: string;
  name: string;
  insert: boolean;
  objectType: string;
  watched: string[];
  hidden: string[];
  /** UPDATE triggers: the columns their WHEN compares. */
  when: string[];
}

async function eventTriggers(): Promise<EventTrigger[]> {
  const rows = await query<{ table: string; name: string; definition: string }>(TRIGGERS_SQL);
  return rows
    .filter((row) => row.definition.includes('record_merchant_event('))
    .map((row) => {
      const args = row.definition.match(/record_merchant_event\('(\w+)', '\{([^}]*)\}', '\{([^}]*)\}'\)/);
      if (!args) throw new Error(`unexpected arguments: ${row.definition}`);
      const when = row.definition.match(/ WHEN \(([\s\S]*)\) EXECUTE /)?.[1] ?? '';
      return {
        table: row.table,
        name: row.name,
        insert: / AFTER INSERT ON /.test(row.definition),
        objectType: args[1]!,
        watched: args[2]!.split(',').filter(Boolean),
        hidden: args[3]!.split(',').filter(Boolean),
        when: [...when.matchAll(/\bold\.("?)(\w+)\1/g)].map((m) => m[2]!),
      };
    });
}

/** The columns of one object type's triggers, after checking its insert and update triggers spell the same lists. */
async function watchedColumns(objectType: string): Promise<string[]> {
  const triggers = (await eventTriggers()).filter((t) => t.objectType === objectType);
  const insert = triggers.filter((t) => t.insert);
  const update = triggers.filter((t) => !t.insert);
  expect(insert, objectType).toHaveLength(1);
  expect(update, objectType).toHaveLength(1);
  expect(update[0]!.watched).toEqual(insert[0]!.watched);
  expect(update[0]!.hidden).toEqual(insert[0]!.hidden);
  // The update trigger's WHEN: its watched columns, and updatedAt (a write that moves only updatedAt refreshes the
  // transaction's event of the row without making one).
  expect(update[0]!.when).toEqual([...update[0]!.watched, 'updatedAt']);
  return [...insert[0]!.watched].sort();
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
const without = (values: readonly string[], left: Record<string, string>) => values.filter((v) => !(v in left));

describe("the events trigger's watched columns", () => {
  it('are, for a subscription, its public columns that can change (PUBLIC_COLUMNS and the list export tied)', async () => {
    // Public columns no event needs to watch, each with its reason.
    const notWatched: Record<string, string> = {
      id: 'fixed at creation',
      userId: 'fixed at creation',
      createdAt: 'fixed at creation',
      updatedAt: "in the update trigger's WHEN: it refreshes the transaction's event, it makes none",
    };
    // Watched columns that are not public columns of the row, each with its reason.
    const watchedNotPublic: Record<string, string> = {
      billingKeyId: 'shown as the public billingKey object (read through a join on it)',
      trialWillEndAt: 'the notice subscription.trial_will_end, an event of its own',
    };
    expect(await watchedColumns('subscription')).toEqual(sorted([...without(PUBLIC_COLUMNS, notWatched), ...Object.keys(watchedNotPublic)]));

    // The list export (public field names, nested ones dotted) names the same columns, consents aside.
    const exportColumn = (field: string) =>
      ({ 'interval.unit': 'intervalUnit', 'interval.count': 'intervalCount', pendingAmountReason: 'pendingAmount' })[field] ??
      (field.startsWith('billingKey.') ? 'billingKeyId' : field);
    expect(sorted(SUBSCRIPTION_COLUMNS.map(exportColumn))).toEqual(sorted([...PUBLIC_COLUMNS, 'billingKeyId']));
  });

  it("are, for a payment, the list export's columns that can change", async () => {
    const notWatched: Record<string, string> = {
      id: 'fixed at creation',
      subscriptionId: 'fixed at creation',
      oneTimeOrderId: 'fixed at creation',
      cycle: 'fixed at creation',
      kind: 'fixed at creation',
      createdAt: 'fixed at creation',
      updatedAt: "in the update trigger's WHEN: it refreshes the transaction's event, it makes none",
      needsAttention: 'derived from status and attentionReason, both watched',
      refundOutcomeUnknown: 'derived from attentionReason, watched',
      // A MOBILE payment-method window takes over an owed cycle's payment before its charge (replace-payment-method.ts):
      // the charge's outcome moves the status, which writes the event.
      method: "moved only with registrationId, by a payment-method window before the payment's charge",
      registrationId: "moved only with method, by a payment-method window before the payment's charge",
    };
    expect(await watchedColumns('payment')).toEqual(sorted(without(PAYMENT_COLUMNS, notWatched)));
  });

  it('are spelled alike by the insert and update triggers of registrations and orders too', async () => {
    expect(await watchedColumns('registration')).toEqual(sorted(['status', 'failureCode', 'failureMessage', 'completedAt']));
    expect(await watchedColumns('order')).toEqual(sorted(['status', 'failureCode', 'failureMessage', 'completedAt']));
  });
});

describe('the event types', () => {
  it('the trigger function can write are exactly EVENT_TYPES, for the object types its triggers pass', async () => {
    const events = files.find((file) => file.name === 'events.sql')!;
    const body = definitionsOf([events]).functions.find((f) => f.name === 'record_merchant_event')!.body;
    const written = sorted([...body.matchAll(/'([a-z_]+\.[a-z_]+)'/g)].map((m) => m[1]!));
    expect(written).toEqual(sorted(EVENT_TYPES));
    const objectTypes = sorted((await eventTriggers()).map((t) => t.objectType));
    expect(objectTypes).toEqual(sorted(EVENT_TYPES.map((type) => type.split('.')[0]!)));
  });
});

describe('the rules both languages spell', () => {
  it('counts_as_paid answers true exactly for PAID_STATUSES, over every payment status', async () => {
    const rows = await query<{ status: PaymentStatus; paid: boolean }>(
      `SELECT s::text AS status, "counts_as_paid"(s) AS paid FROM unnest(enum_range(NULL::"PaymentStatus")) s ORDER BY 1`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.filter((row) => row.paid).map((row) => row.status)).toEqual([...PAID_STATUSES].sort());
  });

  it("the roll-ups' Korea zone is the one the reports split their ranges by", async () => {
    const [row] = await query<{ zone: string }>('SELECT "korea_zone"() AS zone');
    expect(row!.zone).toBe(KOREA_ZONE);
  });
});
