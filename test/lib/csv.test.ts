// The service's CSV writer (src/lib/csv.ts): the reports' rows and the console's exports.
import { describe, expect, it } from 'vitest';
import { csvHead, csvRows, toCsv } from '../../src/lib/csv.ts';

describe('CSV', () => {
  it('starts with a BOM and a header of the field names, nested ones dotted, RFC 4180 quoting, CRLF lines', () => {
    const csv = toCsv([{ period: '2026-01', payments: { count: 2, amount: 19800 }, note: 'a, "b"\nc', rate: null }]);
    expect(csv).toBe('\uFEFFperiod,payments.count,payments.amount,note,rate\r\n2026-01,2,19800,"a, ""b""\nc",\r\n');
  });

  it('with fixed columns, puts each field under its column and leaves an absent one empty', () => {
    const columns = ['id', 'transactionId', 'billingKey.cardNumber', 'createdAt'];
    const rows = [
      { id: 'a', billingKey: { cardNumber: '4330-****' }, createdAt: '2026-01-01T00:00:00.000Z' },
      { id: 'b', transactionId: 'tx-1', createdAt: new Date('2026-01-02T00:00:00Z'), extra: 'not a column' },
    ];
    expect(toCsv(rows, columns)).toBe(
      '\uFEFFid,transactionId,billingKey.cardNumber,createdAt\r\na,,4330-****,2026-01-01T00:00:00.000Z\r\nb,tx-1,,2026-01-02T00:00:00.000Z\r\n',
    );
    // A streamed export is the head and then the rows in chunks: the same bytes.
    expect(csvHead(columns) + csvRows(rows.slice(0, 1), columns) + csvRows(rows.slice(1), columns)).toBe(toCsv(rows, columns));
  });

  it('writes a text cell a spreadsheet would run as a formula as text (a leading apostrophe), numbers as they are', () => {
    const csv = toCsv([{ orderName: '=HYPERLINK("http://evil.test","x")', userId: '@SUM(1)', note: '+1', other: '-2', tab: '\tx', rate: -0.25, plain: 'a=b' }]);
    expect(csv).toBe(`\uFEFForderName,userId,note,other,tab,rate,plain\r\n"'=HYPERLINK(""http://evil.test"",""x"")",'@SUM(1),'+1,'-2,'\tx,-0.25,a=b\r\n`);
  });

  it('is a BOM and an empty header line when there are no rows and no columns', () => {
    expect(toCsv([])).toBe('\uFEFF\r\n');
  });
});
