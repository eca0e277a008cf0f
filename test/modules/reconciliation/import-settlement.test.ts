// POST /admin/settlement-imports with the sandbox gateway's own export as the file: CP949 and UTF-8, comma and tab,
// raw text/csv and multipart; the same bytes answer the stored import; a line from another file is stored once;
// two uploads of one file at once make one import; the size limit; imported lines cannot be changed.
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { adminHeaders, subscribe } from '../../helpers/billing.ts';
import { adminGet, importCsv, importMultipart, sandboxSettlementFile } from '../../helpers/settlement.ts';

const MAX_BYTES = 65_536;
const running = useRunningApp({ SETTLEMENT_MAX_BYTES: String(MAX_BYTES) });
const stored = async () => ({ imports: await running.app.db.settlementImport.count(), lines: await running.app.db.settlementLine.count() });

describe('importing a settlement file', () => {
  it('takes the gateway’s CP949 export (201, lines matched), and the same bytes again answer 200 and change nothing', async () => {
    await subscribe(running.app, { userId: 'u1' });
    await subscribe(running.app, { userId: 'u2', amount: 12_900 });
    const file = await sandboxSettlementFile(running.app, { encoding: 'cp949' });

    const first = await importCsv(running.app, file, 'filename=statement-cp949.csv');
    expect(first.statusCode, first.body).toBe(201);
    const created = first.json();
    expect(created).toMatchObject({
      filename: 'statement-cp949.csv',
      encoding: 'CP949',
      rows: 2,
      newLines: 2,
      duplicateLines: 0,
      summary: { matched: 2, mismatched: 0, unmatched: 0, missing: 0 },
      resolved: { payments: 0, refunds: 0 },
    });
    expect(created.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(created.coverage.from).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const again = await importCsv(running.app, file);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(created);
    expect(await stored()).toEqual({ imports: 1, lines: 2 });
    expect((await adminGet<{ items: unknown[] }>(running.app, '/admin/settlement-imports')).items).toEqual([created]);
    expect(await adminGet(running.app, `/admin/settlement-imports/${created.id}`)).toEqual(created);
  });

  it('takes a UTF-8, tab-separated export through multipart (fields in any order); lines already imported count once', async () => {
    await subscribe(running.app, { userId: 'u1' });
    await subscribe(running.app, { userId: 'u2', amount: 12_900 });
    expect((await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }))).statusCode).toBe(201);

    const tabbed = await sandboxSettlementFile(running.app, { encoding: 'utf-8', delimiter: 'tab' });
    expect(tabbed.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const response = await importMultipart(running.app, [
      { name: 'file', value: tabbed, filename: 'statement.tsv' },
      { name: 'to', value: '2099-12-31' },
      { name: 'from', value: '2000-01-01' },
    ]);
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({
      filename: 'statement.tsv',
      encoding: 'UTF-8',
      rows: 2,
      newLines: 0,
      duplicateLines: 2,
      coverage: { from: '2000-01-01', to: '2099-12-31' },
      summary: { matched: 2, mismatched: 0, unmatched: 0, missing: 0 },
    });
    expect(await stored()).toEqual({ imports: 2, lines: 2 });
  });

  it('two uploads of the same file at once make one import; the other answers it (never a 500)', async () => {
    await subscribe(running.app, {});
    const file = await sandboxSettlementFile(running.app);
    const answers = await Promise.all([importCsv(running.app, file), importCsv(running.app, file), importCsv(running.app, file)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.json().id)).size).toBe(1);
    expect(await stored()).toEqual({ imports: 1, lines: 1 });
  });

  it('honours Idempotency-Key: the same key and file replay, the same key with another file is 409', async () => {
    await subscribe(running.app, {});
    const file = await sandboxSettlementFile(running.app);
    const first = await importCsv(running.app, file, '', { 'idempotency-key': 'imp-1' });
    expect(first.statusCode).toBe(201);
    const replay = await importCsv(running.app, file, '', { 'idempotency-key': 'imp-1' });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    const other = await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }), '', { 'idempotency-key': 'imp-1' });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('refuses a file over SETTLEMENT_MAX_BYTES with 413, raw or multipart, and stores nothing', async () => {
    await subscribe(running.app, {});
    const file = await sandboxSettlementFile(running.app);
    const padded = Buffer.concat([file, Buffer.from('\r\n'.repeat(MAX_BYTES))]);
    const raw = await importCsv(running.app, padded);
    expect(raw.statusCode).toBe(413);
    expect(raw.json().code).toBe('PAYLOAD_TOO_LARGE');
    const form = await importMultipart(running.app, [{ name: 'file', value: padded, filename: 'big.csv' }]);
    expect(form.statusCode, form.body).toBe(413);
    expect(form.json().code).toBe('PAYLOAD_TOO_LARGE');
    expect(await stored()).toEqual({ imports: 0, lines: 0 });
    // The same file within the limit is taken.
    expect((await importCsv(running.app, file)).statusCode).toBe(201);
  });

  it('refuses a body that is neither text/csv nor multipart (415), and a multipart body without its file (400)', async () => {
    const json = await running.app.inject({ method: 'POST', url: '/admin/settlement-imports', headers: adminHeaders, payload: { file: 'x' } });
    expect(json.statusCode).toBe(415);
    const empty = await importMultipart(running.app, [{ name: 'from', value: '2026-01-01' }]);
    expect(empty.statusCode).toBe(400);
    expect(await stored()).toEqual({ imports: 0, lines: 0 });
  });

  it('keeps imported lines as they were: the database refuses to update or delete them', async () => {
    await subscribe(running.app, {});
    expect((await importCsv(running.app, await sandboxSettlementFile(running.app))).statusCode).toBe(201);
    await expect(running.app.db.$executeRawUnsafe(`UPDATE "settlement_lines" SET "amount" = 1`)).rejects.toThrow(/never edited/);
    await expect(running.app.db.$executeRawUnsafe(`DELETE FROM "settlement_lines"`)).rejects.toThrow(/never edited/);
    await expect(running.app.db.$executeRawUnsafe(`DELETE FROM "settlement_imports"`)).rejects.toThrow(/never edited/);
    expect(await stored()).toEqual({ imports: 1, lines: 1 });
  });
});
