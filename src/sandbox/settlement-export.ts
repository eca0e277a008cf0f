// The sandbox's own ledger as the gateway's merchant console exports it (docs/reconciliation.md "Reconciling with the gateway"): Korean
// headers, amounts with thousands separators (a cancel's with a minus sign), Korea time, UTF-8 with BOM or CP949
// (what Excel on Korean Windows writes), comma- or tab-separated. A cancel row carries the original payment's
// transactionId, its own number in a column of its own. The card check of a key-only registration (charged and
// cancelled at once) is left out, as the gateway nets it out of its statement.
import iconv from 'iconv-lite';
import { DateTime } from 'luxon';
import { KOREA_ZONE } from '../lib/calendar.ts';
import type { LedgerEntry } from './sandbox.state.ts';

const HEADERS = ['거래일시', '거래구분', '결제수단', '거래번호', '취소번호', '주문번호', '거래금액', '가맹점ID'];
const METHODS = { CARD: '신용카드', MOBILE: '휴대폰' } as const;

const field = (value: string, delimiter: string) => (value.includes(delimiter) || /["\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

export function settlementExport(entries: LedgerEntry[], options: { encoding: 'utf-8' | 'cp949'; delimiter: ',' | '\t' }): Buffer {
  const charged = new Map(entries.filter((e) => e.type === 'CHARGE').map((e) => [e.transactionId, e]));
  const rows = entries
    .filter((e) => !e.verification)
    .map((entry) => {
      const original = entry.originalTransactionId ? charged.get(entry.originalTransactionId) : undefined;
      const type = entry.type === 'CHARGE' ? '승인' : original && entry.amount < original.amount ? '부분취소' : '취소';
      const amount = (entry.type === 'CANCEL' ? -entry.amount : entry.amount).toLocaleString('en-US');
      return [
        DateTime.fromISO(entry.at, { zone: KOREA_ZONE }).toFormat('yyyy-MM-dd HH:mm:ss'),
        type,
        METHODS[entry.method],
        entry.originalTransactionId ?? entry.transactionId,
        entry.type === 'CANCEL' ? entry.transactionId : '',
        entry.orderId ?? '',
        amount,
        entry.merchantId,
      ];
    });
  const text = [HEADERS, ...rows].map((row) => row.map((value) => field(value, options.delimiter)).join(options.delimiter)).join('\r\n');
  return options.encoding === 'cp949' ? iconv.encode(`${text}\r\n`, 'cp949') : Buffer.from(`\ufeff${text}\r\n`, 'utf8');
}
