// What an erasure leaves behind (docs/operating.md "A customer asks to be forgotten"): a customer whose personal data
// reached every table through the public routes (test/helpers/full-history-customer.ts), the whole database scanned
// for their userId, name and phone number in every stored form (test/helpers/personal-data-scan.ts) before and after
// the erasure, and every surface that showed them read again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { buildFullHistory, type FullHistory } from '../helpers/full-history-customer.ts';
import { describeHits, placeOf, placesOf, scanForPersonalData, type Needle, type ScanResult } from '../helpers/personal-data-scan.ts';

let database: TestDatabase;
let app: App;
let client: pg.Client;
let history: FullHistory;
let before: ScanResult;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated', WEBHOOK_RETRY_DELAYS: '50ms,50ms,50ms' } }));
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  history = await buildFullHistory(app);
  before = await scan(history.subject.needles);
});

/**
 * The whole database but the `sandbox` schema: the built-in sandbox plays the gateway, and keeps the customer's
 * window and key as a gateway does on its side; what the gateway keeps is its own (the erasure asks it to delete the
 * billing key where it can), not a table of this service.
 */
const scan = (needles: Needle[]) => scanForPersonalData(client, needles, { excludeSchemas: ['sandbox'] });

afterAll(async () => {
  await history?.close();
  await client?.end();
  await app?.close();
  await database?.drop();
});

/**
 * Where the customer's data lives once they have done everything a customer can: the inventory the erasure must
 * clear (docs/operating.md "A customer asks to be forgotten" lists the same places and what happens to each).
 */
const INVENTORY = [
  'audit_events.actor',
  'audit_events.after',
  'audit_events.before',
  'billing_keys.phoneNumber',
  'billing_keys.userId',
  'consents.reference',
  'events.snapshot',
  'external_refunds.reference',
  'idempotency_records.responseBody',
  'orders.userId',
  'portal_sessions.userId',
  'registrations.userId',
  'registrations.userName',
  'registrations.userPhoneNumber',
  'settlement_lines.extra',
  'subscriptions.userId',
];

describe('before the erasure', () => {
  it('the scan finds the customer in every place of the inventory, and nowhere else', () => {
    console.info(`personal-data inventory (table.column [needle]: rows, forms):\n${describeHits(before.hits)}`);
    expect(placesOf(before.hits)).toEqual(INVENTORY);
  });

  it('finds each of userId, name and phone number', () => {
    expect(new Set(before.hits.map((h) => h.needle))).toEqual(new Set(['userId', 'name', 'phone']));
  });

  it('reads every column of every table that can hold text, by a second way of listing them', async () => {
    // information_schema, independently of the scanner's pg_catalog query: every column of a type that can hold text.
    const { rows } = await client.query<{ place: string }>(
      `SELECT table_name || '.' || column_name AS place
         FROM information_schema.columns
        WHERE table_schema = 'public'
          AND (data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'xml')
               OR (data_type = 'ARRAY' AND udt_name IN ('_text', '_varchar', '_bpchar', '_json', '_jsonb')))`,
    );
    const scanned = new Set(before.columns.map(placeOf));
    expect(rows.map((r) => r.place).filter((place) => !scanned.has(place))).toEqual([]);
    const tables = await client.query<{ table: string }>(`SELECT table_name AS "table" FROM information_schema.tables WHERE table_schema = 'public'`);
    console.info(
      `tables with no column that can hold text (ids, amounts, times only): ${tables.rows
        .map((r) => r.table)
        .filter((t) => !before.tables.includes(t))
        .sort()
        .join(', ')}`,
    );
  });
});
