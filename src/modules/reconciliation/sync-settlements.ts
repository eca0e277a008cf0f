// Settlements read from a gateway's API (docs/reconciliation.md "Toss settlements by API"), for a gateway whose
// capabilities say it serves them (settlementFeed): POST /admin/settlement-imports/toss and the daily pass
// (src/plugins/settlement-sync.ts). Read top-down: the range is checked (Korea dates, from ≤ to ≤ today, at most
// SYNC_MAX_DAYS days); every page is read before anything is stored (a page that fails refuses the whole range: 502
// or 503 naming the gateway's answer, nothing half-imported); the lines are stored as the gateway's statement exactly
// like a file's (store-statement.ts: the same matching, statuses and resolutions), its sha256 over a canonical
// rendering of the lines and the range, so the same lines again answer the stored import and double nothing.
// The database adds (prisma/functions/): through store-statement.ts, the guards and the erasure trigger on lines.
import { DateTime } from 'luxon';
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { GatewayAdapter, GatewayName, GatewayResult, SettlementFeedLine } from '../../gateway/gateway.ts';
import type { Clock } from '../../lib/clock.ts';
import { KOREA_ZONE } from '../../lib/calendar.ts';
import { defineError, withDetails } from '../../lib/errors.ts';
import { GatewayNotConfiguredError, gatewayFor } from '../shared/gateway-for.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { ParsedLine } from './parse-settlement.ts';
import { koreaDate } from './settlement-fields.ts';
import { coveringImport, sha256Of, type Statement, type StatementStore } from './store-statement.ts';

/** A range of Korea dates out of order, longer than SYNC_MAX_DAYS, or ending after today. */
export const SettlementRangeInvalidError = defineError('SETTLEMENT_RANGE_INVALID', '%s', 400);
/** The gateway answered the settlements call with an error, or with nothing readable (it may work if asked again). */
export const SettlementFeedFailedError = defineError('SETTLEMENT_FEED_FAILED', '%s', 502);
/** The settlements call never reached the gateway (or the gateway refused our credentials): nothing was read. */
export const SettlementFeedUnavailableError = defineError('SETTLEMENT_FEED_UNAVAILABLE', '%s', 503);

/** The longest range one call reads, in days: a month of lines, read into memory before they are stored. */
export const SYNC_MAX_DAYS = 31;
/** Pages read for one range at most: a gateway that never ends its pages is refused rather than followed forever. */
const MAX_PAGES = 10_000;

/** Who the daily pass acts as (audit entries, the import's actor). */
export const SETTLEMENT_SYNC_ACTOR = 'settlement-sync';

export interface SyncRange {
  from: string;
  to: string;
}

const daysBetween = (from: string, to: string) => DateTime.fromISO(to, { zone: KOREA_ZONE }).diff(DateTime.fromISO(from, { zone: KOREA_ZONE }), 'days').days;

/** The range's problems, refused 400 before any call: its order, its length, a day that has not begun. */
function checkRange(range: SyncRange, today: string): void {
  if (range.from > range.to) throw new SettlementRangeInvalidError('from is after to');
  if (daysBetween(range.from, range.to) + 1 > SYNC_MAX_DAYS) {
    throw new SettlementRangeInvalidError(`from to to spans more than ${SYNC_MAX_DAYS} days: read it in parts`);
  }
  if (range.to > today) throw new SettlementRangeInvalidError(`to (${range.to}) is after today (${today}, Korea time): no settlement of it exists yet`);
}

/** The coded error of a settlements call that did not succeed, naming the gateway's answer. */
function feedError(gateway: GatewayName, page: number, result: GatewayResult): Error {
  const answer = result.code ?? result.reason;
  const details = { gateway, page, outcome: result.outcome, reason: result.reason, code: result.code, httpStatus: result.httpStatus };
  if (result.outcome === 'NOT_SENT') {
    return withDetails(new SettlementFeedUnavailableError(`${gateway}'s settlements were not read (page ${page}: ${answer}); nothing was imported`), details);
  }
  return withDetails(new SettlementFeedFailedError(`${gateway} answered the settlements call with ${answer} (page ${page}); nothing was imported`), details);
}

/** Every page of the range's lines, or the error of the first page that failed. */
async function fetchAll(adapter: GatewayAdapter, range: SyncRange): Promise<SettlementFeedLine[]> {
  const lines: SettlementFeedLine[] = [];
  let page: string | undefined;
  for (let n = 1; n <= MAX_PAGES; n += 1) {
    const answer = await adapter.fetchSettlements!({ ...range, ...(page ? { page } : {}) });
    if (answer.result.outcome !== 'SUCCEEDED') throw feedError(adapter.name, n, answer.result);
    lines.push(...answer.lines);
    if (!answer.nextPage) return lines;
    page = answer.nextPage;
  }
  throw new SettlementFeedFailedError(
    `${adapter.name} answered more than ${MAX_PAGES} pages of settlements for ${range.from}..${range.to}; read a shorter range`,
  );
}

/** A line's fields in a fixed order, the canonical rendering hashed (and the order lines are numbered in). */
const renderLine = (l: SettlementFeedLine) =>
  JSON.stringify([l.tradedAt.toISOString(), l.transactionId, l.type, l.amount, l.orderId, l.method, l.fee, l.settlementDate]);

/**
 * The lines as one gateway's statement of the range. Its sha256 is over the gateway, the range and the lines rendered
 * canonically and sorted, so the same lines answered in another order or on other pages are the same statement, and
 * the same lines for another range (an empty day, a day more) are another (their coverage differs).
 */
export function statementOf(gateway: GatewayName, range: SyncRange, feed: SettlementFeedLine[]): Statement {
  const rendered = feed.map((line) => ({ line, text: renderLine(line) })).sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  const label = `${gateway.toLowerCase()}:${range.from}..${range.to}`;
  const sha256 = sha256Of([label, ...rendered.map((r) => r.text)].join('\n'));
  const lines: ParsedLine[] = rendered.map(({ line }, i) => ({
    line: i + 1,
    transactionId: line.transactionId,
    orderId: line.orderId,
    type: line.type,
    amount: line.amount,
    tradedAt: line.tradedAt,
    tradeDate: koreaDate(line.tradedAt),
    method: line.method,
    fee: line.fee,
    settlementDate: line.settlementDate,
    extra: null,
  }));
  return {
    gateway,
    sha256,
    encoding: 'API',
    filename: label,
    rows: lines.length,
    lines,
    coverage: { from: range.from, to: range.to },
    reason: `settlements of ${label} read from the gateway's API`,
    what: 'settlement statement',
  };
}

export function createSettlementSync(
  deps: Pick<ServiceDeps, 'gateway' | 'gateways'> & { db: Db; clock: Clock; log: Pick<Logger, 'info' | 'warn'>; store: StatementStore },
) {
  const { db, clock, log, store } = deps;

  /** The adapter of `gateway` that serves settlements, else 422 GATEWAY_NOT_CONFIGURED. */
  function feedOf(gateway: GatewayName): GatewayAdapter {
    const adapter = gatewayFor(deps, gateway);
    if (!adapter.capabilities.settlementFeed || !adapter.fetchSettlements) {
      throw new GatewayNotConfiguredError(`The ${gateway} gateway's settlements API is not configured here`);
    }
    return adapter;
  }

  /** Reads the range's settlements from `gateway` and imports them like a file (201 new, 200 the stored import). */
  async function syncSettlements(
    gateway: GatewayName,
    range: SyncRange,
    who: { actor: string; requestId?: string },
    options: { onlyIfUncovered?: boolean } = {},
  ) {
    checkRange(range, koreaDate(clock.now()));
    const adapter = feedOf(gateway);
    const lines = await fetchAll(adapter, range);
    return store.storeStatement({ ...statementOf(gateway, range, lines), onlyIfUncovered: options.onlyIfUncovered }, who);
  }

  /**
   * The daily pass: yesterday's settlements (Korea date, by the service's clock) of every configured gateway that
   * serves them, once. A day already covered by an import of that gateway is skipped before any call, and checked
   * again under the imports' lock before storing, so replicas running the pass at once import it once.
   */
  async function syncYesterday() {
    const yesterday = DateTime.fromJSDate(clock.now(), { zone: KOREA_ZONE }).minus({ days: 1 }).toISODate()!;
    const range = { from: yesterday, to: yesterday };
    const adapters = Object.values(deps.gateways ?? { DANAL: deps.gateway }).filter((a) => a?.capabilities.settlementFeed);
    const results: Array<{ gateway: GatewayName; date: string; importId: string; imported: boolean }> = [];
    for (const adapter of adapters) {
      const covering = await coveringImport(db, adapter!.name, range);
      if (covering) {
        results.push({ gateway: adapter!.name, date: yesterday, importId: covering.id, imported: false });
        continue;
      }
      const answer = await syncSettlements(adapter!.name, range, { actor: SETTLEMENT_SYNC_ACTOR }, { onlyIfUncovered: true });
      results.push({ gateway: adapter!.name, date: yesterday, importId: answer.body.id, imported: answer.statusCode === 201 });
      log.info({ gateway: adapter!.name, date: yesterday, importId: answer.body.id, imported: answer.statusCode === 201 }, 'daily settlement sync');
    }
    return results;
  }

  return { syncSettlements, syncYesterday };
}

export type SettlementSync = ReturnType<typeof createSettlementSync>;
