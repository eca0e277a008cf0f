// The console's lists, Reconciliation and Reports pages through their routes (no browser; test/e2e/console-pages.test.ts
// drives them in Chromium): the session guard in front of every page and export, the upload's own input checks, and
// a list export that spans several of the pages it reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { EXPORT_PAGE_SIZE } from '../../../src/modules/console/list-export.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { startTestApp, TEST_ADMIN_TOKEN } from '../../helpers/app.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { consoleCookie, formFields } from '../../helpers/console.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: App;
let baseUrl: string;
let cookie: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app, baseUrl } = await startTestApp(database.url));
  cookie = await consoleCookie(app, TEST_ADMIN_TOKEN);
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function multipart(parts: Array<{ name: string; value: string | Buffer; filename?: string }>) {
  const boundary = `----console${Math.random().toString(36).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: Buffer.concat(chunks) };
}

const importCount = async () =>
  ((await app.inject({ method: 'GET', url: '/admin/settlement-imports?limit=100', headers: adminHeaders })).json() as { items: unknown[] }).items.length;

describe('console lists, reconciliation and reports routes', () => {
  it('every page and export sends a visitor without a session to sign in, and exports nothing', async () => {
    for (const url of [
      '/console/subscriptions',
      '/console/subscriptions/export',
      '/console/payments',
      '/console/payments/export?status=SUCCEEDED',
      '/console/reconciliation',
      '/console/reconciliation/export',
      '/console/reports',
      '/console/reports/mrr/export',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location, url).toBe(`/console/login?next=${encodeURIComponent(url)}`);
    }
    const upload = multipart([{ name: 'file', value: 'x', filename: 'a.csv' }]);
    const response = await app.inject({ method: 'POST', url: '/console/reconciliation/imports', ...upload });
    expect(response.statusCode).toBe(303);
    expect(await importCount()).toBe(0);
  });

  it('the upload refuses a NUL in its fields and a form without a file, importing nothing', async () => {
    const page = await app.inject({ method: 'GET', url: '/console/reconciliation', headers: { cookie } });
    const form = formFields(page.body, '/console/reconciliation/imports');
    expect(form._csrf).not.toBe('');
    const file = { name: 'file', value: '거래번호,주문번호,거래구분,금액,거래일시\nT1,O1,승인,1000,20261101120000\n', filename: 'one.csv' };
    const withNul = multipart([{ name: '_csrf', value: form._csrf }, { name: 'idempotencyKey', value: 'key\u0000' }, file]);
    const nul = await app.inject({ method: 'POST', url: '/console/reconciliation/imports', headers: { cookie, ...withNul.headers }, payload: withNul.payload });
    expect(nul.statusCode).toBe(400);
    const noFile = multipart([
      { name: '_csrf', value: form._csrf },
      { name: 'idempotencyKey', value: form.idempotencyKey },
    ]);
    const empty = await app.inject({ method: 'POST', url: '/console/reconciliation/imports', headers: { cookie, ...noFile.headers }, payload: noFile.payload });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('Choose a settlement file');
    expect(await importCount()).toBe(0);
  });

  it('a list export reads every page of the filtered list, not only the first, in the list’s order', async () => {
    const ids = await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), {
      count: EXPORT_PAGE_SIZE + 3,
      sandboxUrl: `${baseUrl}/sandbox`,
      dueAt: new Date('2026-12-01T00:00:00Z'),
    });
    const response = await app.inject({ method: 'GET', url: '/console/subscriptions/export?status=ACTIVE', headers: { cookie } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe('attachment; filename="subscriptions.csv"');
    const [header, ...rows] = response.body.slice(1).split('\r\n').filter(Boolean);
    expect(header!.startsWith('id,userId,')).toBe(true);
    const exported = rows.map((row) => row.split(',')[0]);
    expect(exported).toHaveLength(ids.length);
    expect(new Set(exported)).toEqual(new Set(ids));
    // Newest first, as the admin list pages them.
    const first = (await app.inject({ method: 'GET', url: '/admin/subscriptions?status=ACTIVE&limit=100', headers: adminHeaders })).json() as {
      items: Array<{ id: string }>;
    };
    expect(exported.slice(0, 100)).toEqual(first.items.map((s) => s.id));
  });
});
