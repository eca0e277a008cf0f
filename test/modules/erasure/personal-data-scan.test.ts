// The scan itself (test/helpers/personal-data-scan.ts): a table created here, after the migrations, is scanned
// without anyone listing it; each stored form of a name and a phone number is found in each kind of column; a
// value that only resembles the needle is not.
import iconv from 'iconv-lite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { phoneForms, scanForPersonalData, storedForms } from '../../helpers/personal-data-scan.ts';

let database: TestDatabase;
let client: pg.Client;

const NEEDLES = [
  { label: 'userId', value: 'Probe-User-42' },
  { label: 'name', value: '홍길동' },
  { label: 'phone', value: '010-2345-6789', phone: true },
];

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  // A table no migration knows, without a primary key, with every kind of column the scan reads.
  await client.query(`CREATE DOMAIN probe_text AS text`);
  await client.query(`CREATE TABLE probe_added_later (
    label text NOT NULL, t text, v varchar(80), c char(40), d probe_text, j json, jb jsonb, a text[], b bytea, n integer)`);
  const rows: Array<[string, Record<string, unknown>]> = [
    ['as is', { t: 'customer Probe-User-42 asked' }],
    ['other case', { v: 'PROBE-USER-42' }],
    ['char', { c: 'probe-user-42' }],
    ['domain', { d: '고객 홍길동' }],
    ['json escaped', { j: '{"name":"\\ud64d\\uae38\\ub3d9"}' }],
    ['jsonb', { jb: JSON.stringify({ buyer: { phone: '01023456789' } }) }],
    ['array', { a: ['x', '+82-10-2345-6789'] }],
    ['url-encoded', { t: `https://x.test/w?userName=${encodeURIComponent('홍길동')}&p=010%202345%206789` }],
    ['bytea utf-8', { b: Buffer.from('..홍길동..', 'utf8') }],
    ['bytea cp949', { b: iconv.encode('이름,홍길동', 'cp949') }],
    ['nfd', { t: '홍길동'.normalize('NFD') }],
    ['spaces +82', { t: 'call +82 10 2345 6789' }],
    ['nothing', { t: 'Probe-User-4 and 010-2345-678 and 홍길', n: 1 }],
  ];
  for (const [label, values] of rows) {
    const columns = Object.keys(values);
    await client.query(`INSERT INTO probe_added_later (label, ${columns.join(', ')}) VALUES ($1, ${columns.map((_, i) => `$${i + 2}`).join(', ')})`, [
      label,
      ...Object.values(values),
    ]);
  }
});

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

describe('scanForPersonalData', () => {
  it('finds every stored form in a table created after the migrations, and not what only resembles the needles', async () => {
    const result = await scanForPersonalData(client, NEEDLES);
    expect(result.tables).toContain('probe_added_later');
    const probe = result.hits.filter((h) => h.table === 'probe_added_later');
    const { rows } = await client.query<{ ctid: string; label: string }>(`SELECT ctid::text, label FROM probe_added_later`);
    const labelOf = new Map(rows.map((r) => [r.ctid, r.label]));
    const found = new Map<string, Set<string>>();
    for (const hit of probe) found.set(labelOf.get(hit.rowId)!, (found.get(labelOf.get(hit.rowId)!) ?? new Set()).add(`${hit.column}:${hit.needle}`));
    expect(Object.fromEntries([...found].map(([label, set]) => [label, [...set].sort()]))).toEqual({
      'as is': ['t:userId'],
      'other case': ['v:userId'],
      char: ['c:userId'],
      domain: ['d:name'],
      'json escaped': ['j:name'],
      jsonb: ['jb:phone'],
      array: ['a:phone'],
      'url-encoded': ['t:name', 't:phone'],
      'bytea utf-8': ['b:name'],
      'bytea cp949': ['b:name'],
      nfd: ['t:name'],
      'spaces +82': ['t:phone'],
    });
    // The migrated tables are empty: nothing found there.
    expect(result.hits.filter((h) => h.table !== 'probe_added_later')).toEqual([]);
  });

  it('writes a phone number in each usual way, and a needle in its escaped and encoded forms', () => {
    expect(phoneForms('01023456789').map((f) => f.text)).toEqual(
      expect.arrayContaining(['01023456789', '010-2345-6789', '010 2345 6789', '+821023456789', '+82-10-2345-6789', '+82 10 2345 6789']),
    );
    expect(phoneForms('+82 10-2345-6789').map((f) => f.text)).toContain('010-2345-6789');
    const forms = storedForms({ label: 'name', value: '홍길동' }).map((f) => f.text);
    expect(forms).toEqual(expect.arrayContaining(['홍길동', '\\ud64d\\uae38\\ub3d9', encodeURIComponent('홍길동')]));
  });
});
