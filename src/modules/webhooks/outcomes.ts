// Recording what a send came to (docs/api.md "Events and webhooks"). Every write is fenced on the claim's lease token
// (claims.ts): an outcome whose delivery was claimed again or queued again since its send began changes nothing.
//
// Successes are written in batches, one statement for many, but never later than SUCCESS_FLUSH_MS after they are
// known (or at once when a batch is full), whatever the claim loop is waiting for: the lease (leaseMsFor) budgets
// only seconds for recording, and a success left unwritten until the lease runs out is sent again.
// A failure is written at once: it decides the retry, the endpoint's failingSince and whether it is disabled
// (410 Gone at once; failing for WEBHOOK_DISABLE_AFTER). A delivery is found by its id and its partition key (its
// event's createdAt, claims.ts).
import type { Logger } from 'pino';
import { Prisma as P } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { Claimed } from './claims.ts';
import type { SendResult } from './sender.ts';
import type { WebhookObserver } from '../../plugins/metrics.ts';
import { deliveryMayMove, setDeliveryStatus } from '../events/delivery.state.ts';

export const GONE = 'GONE';
export const FAILING = 'FAILING';

/** The longest a known success waits to be written (plus a write already under way): far under any lease (> 5 s). */
export const SUCCESS_FLUSH_MS = 20;
/** A batch of successes this large is written without waiting for SUCCESS_FLUSH_MS. */
const SUCCESS_BATCH = 100;

export function createOutcomes(deps: {
  db: ServiceDeps['db'];
  /** The service's clock: dates an endpoint's disabling as every other write of it (its updatedAt, which GET shows). */
  clock: ServiceDeps['clock'];
  settings: ServiceDeps['config']['webhooks'];
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  observer: WebhookObserver;
}) {
  const { db, clock, settings, log, observer } = deps;
  let successes: Array<{ id: string; at: Date; lease: string; status: number }> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> | undefined;

  async function writeSuccesses(batch: typeof successes): Promise<void> {
    try {
      const updated = await db.$executeRaw`
        UPDATE "webhook_deliveries" d SET
          ${setDeliveryStatus('deliver')}, "attempts" = d."attempts" + 1, "nextAttemptAt" = NULL, "deliveredAt" = clock_timestamp(),
          "lastStatusCode" = v.code, "lastError" = NULL, "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()
          FROM unnest(${batch.map((b) => b.id)}::uuid[], ${batch.map((b) => b.at.toISOString())}::timestamptz[], ${batch.map((b) => b.lease)}::text[],
                      ${batch.map((b) => b.status)}::int[]) AS v(id, at, lease, code)
         WHERE d."id" = v.id AND d."eventCreatedAt" = v.at AND d."leaseOwner" = v.lease AND ${deliveryMayMove('deliver', P.sql`d."status"`)}`;
      if (updated < batch.length)
        log.warn({ lost: batch.length - updated }, 'webhook deliveries were queued again or reclaimed before their success was recorded; they are sent again');
    } catch (error) {
      log.error({ err: error, lost: batch.length }, 'webhook successes could not be recorded; they are sent again when their leases expire');
    }
  }

  /** Writes every success known so far, after the write under way if any. Never rejects. */
  async function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    // One write at a time: what arrives meanwhile goes into the next batch.
    while (writing) await writing;
    if (successes.length === 0) return;
    const batch = successes;
    successes = [];
    writing = writeSuccesses(batch).finally(() => {
      writing = undefined;
    });
    await writing;
  }

  function succeeded(claimed: Claimed, status: number): void {
    successes.push({ id: claimed.deliveryId, at: claimed.createdAt, lease: claimed.lease, status });
    if (successes.length >= SUCCESS_BATCH) void flush();
    else timer ??= setTimeout(() => void flush(), SUCCESS_FLUSH_MS);
  }

  async function disable(endpointId: string, reason: string, where: P.Sql): Promise<void> {
    const disabled = await db.$executeRaw`
      UPDATE "webhook_endpoints" SET "status" = 'DISABLED', "disabledReason" = ${reason}, "updatedAt" = ${clock.now()}
       WHERE "id" = ${endpointId}::uuid AND "status" = 'ENABLED' AND ${where}`;
    if (disabled > 0) {
      observer.endpointDisabled(reason);
      log.warn({ endpointId, reason }, 'webhook endpoint disabled');
    }
  }

  async function record(claimed: Claimed, result: SendResult, seconds: number): Promise<void> {
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const attempts = claimed.attempts + 1;
    const delays = settings.retryDelaysMs;
    const retry = !ok && !gone && attempts <= delays.length;
    observer.delivery(ok ? 'delivered' : gone ? 'gone' : retry ? 'retrying' : 'failed', seconds);
    if (ok) {
      succeeded(claimed, result.status!);
      if (claimed.failingSince) await db.$executeRaw`UPDATE "webhook_endpoints" SET "failingSince" = NULL WHERE "id" = ${claimed.endpointId}::uuid`;
      return;
    }
    const delayMs = retry ? delays[attempts - 1]! : 0;
    const updated = await db.$executeRaw`
      UPDATE "webhook_deliveries" SET
        ${setDeliveryStatus(retry ? 'retry' : 'fail')}, "attempts" = "attempts" + 1,
        "nextAttemptAt" = ${retry ? P.sql`clock_timestamp() + make_interval(secs => ${delayMs / 1000}::float8)` : P.sql`NULL`},
        "lastStatusCode" = ${result.status ?? null}::int, "lastError" = ${result.error ?? `HTTP ${result.status}`},
        "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()
      WHERE "id" = ${claimed.deliveryId}::uuid AND "eventCreatedAt" = ${claimed.createdAt} AND "leaseOwner" = ${claimed.lease} AND ${deliveryMayMove(retry ? 'retry' : 'fail', P.sql`"status"`)}`;
    if (updated === 0) {
      log.warn({ deliveryId: claimed.deliveryId }, 'webhook delivery was queued again or reclaimed before its outcome was recorded; it is sent again');
      return;
    }
    if (gone) return disable(claimed.endpointId, GONE, P.sql`TRUE`);
    if (!claimed.failingSince) {
      await db.$executeRaw`UPDATE "webhook_endpoints" SET "failingSince" = clock_timestamp() WHERE "id" = ${claimed.endpointId}::uuid AND "failingSince" IS NULL`;
      return;
    }
    const disableAfter = settings.disableAfterMs / 1000;
    await disable(claimed.endpointId, FAILING, P.sql`"failingSince" <= clock_timestamp() - make_interval(secs => ${disableAfter}::float8)`);
  }

  return { record, flush };
}
