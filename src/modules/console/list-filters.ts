// The console's lists of subscriptions and payments take the admin routes' filters (one schema, one service:
// subscriptions.read.ts pageSubscriptions, payment-actions.service.ts listPayments), with one difference a form
// needs: the creation window is two Korea calendar dates (a date field), not two instants, turned here into the
// admin filter's createdFrom (inclusive) and createdTo (exclusive). Blank form fields mean "any" (dropBlankFields).
import { DateTime } from 'luxon';
import { type Static, type TObject, type TSchema, Type } from 'typebox';
import { KOREA_ZONE } from '../../lib/calendar.ts';
import { ValidationError } from '../../lib/errors.ts';
import { AdminPaymentsQuery } from '../payments/payments.schemas.ts';
import { KoreaDate } from '../reconciliation/reconciliation.schemas.ts';
import { AdminSubscriptionsQuery } from '../subscriptions/subscriptions.schemas.ts';

/** An admin list query with its createdFrom/createdTo instants replaced by `from`/`to` Korea dates. */
function withKoreaDates<P extends { createdFrom: TSchema; createdTo: TSchema; [key: string]: TSchema }>(query: TObject<P>) {
  const { createdFrom: _from, createdTo: _to, ...filters } = query.properties;
  return Type.Object(
    {
      ...(filters as Omit<P, 'createdFrom' | 'createdTo'>),
      from: Type.Optional(KoreaDate),
      to: Type.Optional(KoreaDate),
    },
    { additionalProperties: false },
  );
}

export const ConsoleSubscriptionsQuery = withKoreaDates(AdminSubscriptionsQuery);
export const ConsolePaymentsQuery = withKoreaDates(AdminPaymentsQuery);
export type ConsoleSubscriptionsQuery = Static<typeof ConsoleSubscriptionsQuery>;
export type ConsolePaymentsQuery = Static<typeof ConsolePaymentsQuery>;

/** A form sends every field, the empty ones as "": those filter nothing. Mutates and returns the parsed query. */
export function dropBlankFields(query: unknown): unknown {
  if (query && typeof query === 'object') {
    for (const [key, value] of Object.entries(query)) if (value === '') delete (query as Record<string, unknown>)[key];
  }
  return query;
}

/**
 * The admin filter of a console query: `from` is 00:00 Korea time of that date, `to` the end of its day (the next
 * day's 00:00, exclusive), so both dates are included, as they read on the form.
 */
export function toAdminFilter<Q extends { from?: string; to?: string; [key: string]: unknown }>(
  query: Q,
): Omit<Q, 'from' | 'to'> & { createdFrom?: string; createdTo?: string } {
  const { from, to, ...filter } = query;
  if (from && to && from > to) throw new ValidationError(`to (${to}) is before from (${from})`);
  const startOf = (date: string) => DateTime.fromISO(date, { zone: KOREA_ZONE }).startOf('day');
  return {
    ...filter,
    ...(from ? { createdFrom: startOf(from).toUTC().toISO() as string } : {}),
    ...(to ? { createdTo: startOf(to).plus({ days: 1 }).toUTC().toISO() as string } : {}),
  };
}

/** The query string of a list page: the filters as given (defaults left out), and the page's cursor if any. */
export function listHref(path: string, filters: Record<string, unknown>, cursor?: string | null): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (key === 'cursor' || value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  if (cursor) params.set('cursor', cursor);
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}
