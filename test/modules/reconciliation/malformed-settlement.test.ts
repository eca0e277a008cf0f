// All or nothing: any invalid row refuses the whole file (422 SETTLEMENT_FILE_INVALID, details.errors with the
// physical line, the header being line 1) and nothing is stored. Malformed files are typed here by hand; what a
// valid file may look like (headers by alias or mapping, amounts with separators, the date formats) is derived from
// the sandbox gateway's own export.
import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { useRunningApp } from '../../helpers/database.ts';
import { subscribe } from '../../helpers/billing.ts';
import { importCsv, importMultipart, sandboxSettlementFile } from '../../helpers/settlement.ts';

const running = useRunningApp();
const HEADER = '거래번호,주문번호,거래구분,거래금액,거래일시';
const refused = async (file: string | Buffer, query = '') => {
  const response = await importCsv(running.app, file, query);
  expect(response.statusCode, response.body).toBe(422);
  expect(response.json().code).toBe('SETTLEMENT_FILE_INVALID');
  expect(await running.app.db.settlementLine.count()).toBe(0);
  expect(await running.app.db.settlementImport.count()).toBe(0);
  return response.json().details.errors as Array<{ line: number; column?: string; message: string }>;
};

describe('a malformed settlement file', () => {
  it('without a header row, or without a required column, is refused on line 1', async () => {
    expect(await refused('\r\n\r\n')).toEqual([expect.objectContaining({ line: 1 })]);
    const missing = await refused('거래번호,주문번호,거래구분,거래일시\r\nT1,O1,승인,20261124100000\r\n');
    expect(missing).toEqual([expect.objectContaining({ line: 1, column: 'amount' })]);
  });

  it('names every bad row by its physical line (blank lines and quoted line breaks counted), and stores nothing', async () => {
    const file = [
      HEADER,
      'T1,O1,승인,"12,900",20261124100000',
      '',
      'T2,O2,승인,12.5,20261124100000',
      'T3,O3,승인,1e3,20261124100000',
      'T4,"O4',
      'continued",승인,1000,20270231000000',
      'T5,O5,승인,1000',
      'T6,O6,환불,1000,20261124100000',
      'T7,,승인,1000,2026-11-24 10:00:00',
      'T8,O8,승인,-1000,2026-11-24T10:00:00+09:00',
    ].join('\r\n');
    const errors = await refused(file);
    expect(errors.map((e) => [e.line, e.column])).toEqual([
      [4, '거래금액'],
      [5, '거래금액'],
      [6, '거래일시'],
      [8, undefined],
      [9, '거래구분'],
      [10, 'orderId'],
      [11, '거래금액'],
    ]);
    expect(errors[2]!.message).toContain('20270231000000');
  });

  it('with a line outside the given from/to is refused', async () => {
    const errors = await refused(`${HEADER}\nT1,O1,승인,1000,20261124100000\nT2,O2,승인,1000,20261130235959\n`, 'from=2026-11-24&to=2026-11-29');
    expect(errors).toEqual([expect.objectContaining({ line: 3, column: 'tradedAt' })]);
  });

  it('of binary junk, or with an unclosed quote, is refused', async () => {
    expect((await refused(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0xff, 0x10, 0x0a])))[0]).toMatchObject({ line: 1 });
    expect((await refused(`${HEADER}\nT1,"O1,승인,1000,20261124100000\n`))[0]!.message).toMatch(/CSV/);
  });

  it('reports at most 100 errors', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => `T${i},O${i},승인,abc,20261124100000`);
    const errors = await refused([HEADER, ...rows].join('\n'));
    expect(errors).toHaveLength(100);
    expect(errors[99]!.line).toBe(101);
  });

  it('with a bad mapping is refused: not JSON (400), or naming a column the file lacks (422)', async () => {
    expect((await importCsv(running.app, `${HEADER}\nT1,O1,승인,1000,20261124100000\n`, `mapping=${encodeURIComponent('{oops')}`)).statusCode).toBe(400);
    const errors = await refused(`${HEADER}\nT1,O1,승인,1000,20261124100000\n`, `mapping=${encodeURIComponent('{"amount":"Net"}')}`);
    expect(errors).toEqual([expect.objectContaining({ line: 1, column: 'Net' })]);
  });
});

describe('what a valid file may look like', () => {
  it('English headers in any case and spacing, a mapping for an unknown header, ISO and compact dates: the same lines as the export', async () => {
    await subscribe(running.app, { userId: 'u1', amount: 12_900 });
    const exported = (await sandboxSettlementFile(running.app)).toString('utf8').replace(/^\ufeff/, '');
    const [, row] = exported.split('\r\n');
    const [at, , , transactionId, , orderId, amount] = row!.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/);
    const compact = at!.replace(/[- :]/g, '');
    const iso = `${at!.replace(' ', 'T')}+09:00`;
    // One line in three spellings: the first import stores it, the others count it as a duplicate.
    const english = `Transaction ID,order id,TYPE,Settled Amount,tradedAt,METHOD\r\n${transactionId},${orderId},approval,${amount},${compact},card\r\n`;
    const mapped = await importCsv(running.app, english, `mapping=${encodeURIComponent('{"amount":"settledamount"}')}`);
    expect(mapped.statusCode, mapped.body).toBe(201);
    expect(mapped.json()).toMatchObject({ rows: 1, newLines: 1, summary: { matched: 1 } });
    const tabbed = `\r\nTID\t주문 번호\t구분\t승인금액\t승인일시\r\n\r\n${transactionId}\t${orderId}\t승인\t${amount!.replace(/"/g, '')}\t${iso}\r\n\r\n`;
    const second = await importMultipart(running.app, [{ name: 'file', value: iconv.encode(tabbed, 'cp949'), filename: 'x.csv' }]);
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ encoding: 'CP949', rows: 1, newLines: 0, duplicateLines: 1 });
  });
});
