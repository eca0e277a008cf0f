// The console's CSV exports of the subscriptions and payments lists (docs/console.md "Operator console"): the whole
// filtered list, read through the lists' own services a keyset page at a time and streamed, so a million payments
// cost one page of memory. The CSV is the service's (lib/csv.ts: UTF-8 with BOM, the JSON field names as header,
// nested ones dotted, UTC ISO-8601 times); the columns are fixed, so items that leave an optional field out line up.
import { Readable } from 'node:stream';
import { csvHead, csvRows } from '../../lib/csv.ts';
import { PUBLIC_FIELD_PATHS } from '../subscriptions/subscriptions.shape.ts';

/** The public subscription shape's fields (subscriptions.shape.ts), consents left out (a list of their own). */
export const SUBSCRIPTION_COLUMNS = PUBLIC_FIELD_PATHS;

/** The public payment shape's fields (payments.service.ts serializePayment), attempts left out. */
export const PAYMENT_COLUMNS = [
  'id',
  'subscriptionId',
  'registrationId',
  'oneTimeOrderId',
  'cycle',
  'orderId',
  'kind',
  'method',
  'amount',
  'status',
  'transactionId',
  'approvedAt',
  'failureCode',
  'failureMessage',
  'canceledAmount',
  'needsAttention',
  'attentionReason',
  'refundOutcomeUnknown',
  'createdAt',
  'updatedAt',
] as const;

/** Rows per page read for an export: large enough to amortise each query, small enough to hold. */
export const EXPORT_PAGE_SIZE = 500;

export type PageReader<T> = (cursor: string | undefined, limit: number) => Promise<{ items: T[]; nextCursor: string | null }>;

/** The CSV of every item the reader pages through, as text chunks: the head, then one chunk per page. */
export async function* csvPages<T extends object>(columns: readonly string[], readPage: PageReader<T>, pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<string> {
  yield csvHead(columns);
  let cursor: string | undefined;
  do {
    const page = await readPage(cursor, pageSize);
    if (page.items.length > 0) yield csvRows(page.items, columns);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

/** The export as a stream to send (reply.send), UTF-8 encoded. */
export function csvStream<T extends object>(columns: readonly string[], readPage: PageReader<T>, pageSize = EXPORT_PAGE_SIZE): Readable {
  return Readable.from(csvPages(columns, readPage, pageSize), { objectMode: false });
}
