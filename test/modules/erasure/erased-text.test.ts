// The erasure's rules for text it keeps (prisma/functions/erasure.sql; docs/operating.md "A customer asks to be
// forgotten"): a userId in an operator's words is replaced only as a word of its own, and in a URL as written and
// URL-encoded (an email address as userId is written differently in a query string).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await database?.drop();
});

const call = async (sql: string, ...values: string[]) => (await client.query<{ v: string }>(`SELECT ${sql} AS v`, values)).rows[0]!.v;

describe('url_encoded, erased_url and erased_text', () => {
  it('percent-encodes all but the unreserved characters, as encodeURIComponent does for an email address or a name', async () => {
    for (const value of ['a.b+c@shop.example', '탁예린', 'x y/z?&=', 'plain-id_1.2~']) {
      expect(await call(`"url_encoded"($1)`, value), value).toBe(encodeURIComponent(value));
    }
  });

  it('replaces the userId in a URL as written and as URL-encoded', async () => {
    const url = `https://shop.example/return?customer=${encodeURIComponent('a.b+c@shop.example')}&raw=a.b+c@shop.example`;
    expect(await call(`"erased_url"($1, $2, $3)`, url, 'a.b+c@shop.example', 'erased_x')).toBe('https://shop.example/return?customer=erased_x&raw=erased_x');
  });

  it('replaces the userId in words only where it stands alone', async () => {
    expect(await call(`"erased_text"($1, $2, $3)`, '고객 a.b+c@shop.example 요청', 'a.b+c@shop.example', 'erased_x')).toBe('고객 erased_x 요청');
    expect(await call(`"erased_text"($1, $2, $3)`, 'u1 asked; menu1 and u10 stay (u1)', 'u1', 'erased_x')).toBe(
      'erased_x asked; menu1 and u10 stay (erased_x)',
    );
  });
});
