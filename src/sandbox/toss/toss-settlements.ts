// GET /v1/settlements as the Toss sandbox answers it (facts and sources: toss.routes.ts): one line per approval
// (amount positive) and per cancel (amount negative, with the cancel), dated by the Korea date it happened on
// (soldDate) and the date it is paid out (paidOutDate), filtered by one of them and paged.
import { DateTime } from 'luxon';
import { calendarDate, KOREA_ZONE } from '../../lib/calendar.ts';
import { SandboxError } from '../sandbox-error.ts';
import { koreaDateTime } from './toss-objects.ts';
import type { TossLedgerEntry } from './toss.state.ts';

/** Days from the sale to its payout in the sandbox (a real contract sets its own cycle). */
export const PAYOUT_DAYS = 2;
/** The sandbox's fee on a sale: 2.5 %, VAT included, refunded with a cancel. */
const FEE_RATE = 0.025;
const DEFAULT_SIZE = 100;
const MAX_SIZE = 10_000;

export interface SettlementQuery {
  startDate: string;
  endDate: string;
  dateType: 'soldDate' | 'paidOutDate';
  page: number;
  size: number;
}

function invalid(message: string): never {
  throw new SandboxError(400, 'INVALID_REQUEST', message);
}

const isDate = (value: unknown): value is string =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && DateTime.fromISO(value, { zone: 'UTC' }).isValid;

function whole(value: unknown, name: string, fallback: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || number < 1 || number > max) invalid(`${name} must be a whole number from 1 to ${max}`);
  return number;
}

export function parseSettlementQuery(raw: Record<string, unknown>): SettlementQuery {
  if (!isDate(raw.startDate) || !isDate(raw.endDate)) invalid('startDate and endDate are required, as yyyy-MM-dd');
  if (raw.endDate < raw.startDate) invalid('endDate is before startDate');
  const dateType = raw.dateType ?? 'soldDate';
  if (dateType !== 'soldDate' && dateType !== 'paidOutDate') invalid('dateType is soldDate or paidOutDate');
  return {
    startDate: raw.startDate,
    endDate: raw.endDate,
    dateType,
    page: whole(raw.page, 'page', 1, Number.MAX_SAFE_INTEGER),
    size: whole(raw.size, 'size', DEFAULT_SIZE, MAX_SIZE),
  };
}

function settlementLine(entry: TossLedgerEntry, original: TossLedgerEntry | undefined, mId: string): Record<string, unknown> {
  const sign = entry.type === 'CANCEL' ? -1 : 1;
  const fee = sign * Math.round(entry.amount * FEE_RATE);
  const vat = sign * Math.round(Math.abs(fee) / 11);
  const soldDate = calendarDate(new Date(entry.at), KOREA_ZONE);
  return {
    mId,
    paymentKey: entry.paymentKey,
    transactionKey: entry.transactionKey,
    orderId: entry.orderId,
    currency: 'KRW',
    method: '카드',
    amount: sign * entry.amount,
    interestFee: 0,
    fees: [{ type: 'BASE', fee }],
    supplyAmount: fee - vat,
    vat,
    payOutAmount: sign * entry.amount - fee,
    approvedAt: koreaDateTime(original?.at ?? entry.at),
    soldDate,
    paidOutDate: DateTime.fromISO(soldDate, { zone: 'UTC' }).plus({ days: PAYOUT_DAYS }).toISODate(),
    cancel:
      entry.type === 'CANCEL'
        ? { transactionKey: entry.transactionKey, cancelAmount: entry.amount, canceledAt: koreaDateTime(entry.at), cancelStatus: 'DONE' }
        : null,
  };
}

/** The page of settlement lines whose date (of the query's type) falls from startDate to endDate, in booking order. */
export function settlementLines(entries: TossLedgerEntry[], query: SettlementQuery, mId: string): Array<Record<string, unknown>> {
  const charges = new Map(entries.filter((e) => e.type === 'CHARGE').map((e) => [e.paymentKey, e]));
  const lines = entries
    .map((entry) => settlementLine(entry, charges.get(entry.paymentKey), mId))
    .filter((line) => {
      const date = line[query.dateType] as string;
      return date >= query.startDate && date <= query.endDate;
    });
  const from = (query.page - 1) * query.size;
  return lines.slice(from, from + query.size);
}
