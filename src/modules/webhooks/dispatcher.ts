// The webhook dispatcher (DESIGN.md §5 "Delivery"): every (event, endpoint) delivery is sent at least once,
// signed per Standard Webhooks, retried after WEBHOOK_RETRY_DELAYS, with at most WEBHOOK_CONCURRENCY requests in
// flight per process.
//
// Invariants kept here:
// - a delivery is claimed with a lease (FOR UPDATE SKIP LOCKED), so replicas never send it at once; a process that
//   dies mid-request leaves a lease that expires after 2 × WEBHOOK_TIMEOUT_MS + 5 s, and the delivery is sent again;
// - the outcome is written fenced on our lease: a delivery reclaimed by another process is not overwritten;
// - no head-of-line blocking: each claim first gives every endpoint with due work its share (half the slots, a
//   failing endpoint a quarter), in a random order; only then may healthy endpoints that are not slow take the
//   slots left, so a dead endpoint holds at most half the slots once it is seen failing or slow;
// - redirects are not followed (a 3xx is a failed attempt); `410 Gone` disables the endpoint at once; an endpoint
//   whose deliveries have all failed for WEBHOOK_DISABLE_AFTER is disabled;
// - times here (leases, retries, webhook-timestamp) are real time, never the simulated clock.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Prisma as P } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../service-deps.ts';
import { renderEvent } from '../events/events.render.ts';
import { assignEventSequences, loadEvents } from '../events/events.service.ts';
import { liveSecrets, openSecret, signatureHeader, type StoredSecret } from './secrets.ts';

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

export interface WebhookObserver {
  delivery(outcome: DeliveryOutcome, seconds: number): void;
  endpointDisabled(reason: string): void;
}

interface Claimed {
  id: string;
  eventId: string;
  endpointId: string;
  attempts: number;
}

interface EndpointInfo {
  id: string;
  url: string;
  secrets: StoredSecret[];
  failingSince: Date | null;
}

/** A request in flight longer than this marks its endpoint slow (held to its share of the slots). */
const SLOW_MS = 1_000;
const SEQUENCE_EVERY_MS = 100;

export const GONE = 'GONE';
export const FAILING = 'FAILING';

/** How long a delivery's claim holds: one request's timeout plus time to record the outcome. */
export const leaseMsFor = (timeoutMs: number) => 2 * timeoutMs + 5_000;

export function createDispatcher(
  deps: Pick<ServiceDeps, 'db' | 'config' | 'keyring'> & { log: Pick<Logger, 'info' | 'warn' | 'error'>; observer?: WebhookObserver; wallClock?: () => Date },
) {
  const { db, config, keyring, log } = deps;
  const settings = config.webhooks;
  const observer = deps.observer ?? { delivery() {}, endpointDisabled() {} };
  const wallClock = deps.wallClock ?? (() => new Date());
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const failingCap = Math.max(1, Math.floor(settings.concurrency / 4));
  const halfShare = Math.max(1, Math.ceil(settings.concurrency / 2));
  const started = new Map<string, { at: number; endpointId: string }>();
  const inflight = new Map<string, Promise<void>>();
  const perEndpoint = new Map<string, number>();
  let slotFreed: (() => void) | undefined;
  let running = false;
  let loopDone: Promise<void> | undefined;
  let lastRetention = 0;
  let lastSequenced = -Infinity;

  /**
   * Claims up to `limit` due deliveries. With `shares`, each endpoint gets at most half the slots (a failing one a
   * quarter), less what it already has in flight here; without, only endpoints that are neither failing nor slow
   * (`exclude`) may take the slots still free, so one healthy endpoint can use them all.
   */
  async function claim(limit: number, shares: boolean, exclude: string[]): Promise<Claimed[]> {
    const busy = JSON.stringify(Object.fromEntries(perEndpoint));
    const leaseMs = leaseMsFor(settings.timeoutMs);
    const quota = shares
      ? P.sql`GREATEST(0, (CASE WHEN w."failingSince" IS NULL THEN ${halfShare}::int ELSE ${failingCap}::int END)
                          - COALESCE((${busy}::jsonb ->> w."id"::text)::int, 0))`
      : P.sql`CASE WHEN w."failingSince" IS NULL AND NOT (w."id" = ANY (${exclude}::uuid[])) THEN ${limit}::int ELSE 0 END`;
    return db.$queryRaw<Claimed[]>`
      WITH picked AS (
        SELECT d."id" FROM (SELECT "id", "failingSince" FROM "webhook_endpoints" WHERE "status" = 'ENABLED' ORDER BY random()) w
        CROSS JOIN LATERAL (
          SELECT d."id" FROM "webhook_deliveries" d
           WHERE d."endpointId" = w."id" AND d."status" = 'PENDING' AND d."nextAttemptAt" <= clock_timestamp()
             AND (d."leaseExpiresAt" IS NULL OR d."leaseExpiresAt" < clock_timestamp())
           ORDER BY d."nextAttemptAt"
           LIMIT ${quota}
           FOR UPDATE OF d SKIP LOCKED) d
        LIMIT ${limit}::int)
      UPDATE "webhook_deliveries" d
         SET "leaseOwner" = ${owner}, "leaseExpiresAt" = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8)
        FROM picked WHERE d."id" = picked."id"
      RETURNING d."id", d."eventId", d."endpointId", d."attempts"`;
  }

  /** Endpoints with a request in flight here for longer than SLOW_MS: they get no more than their share. */
  function slowEndpoints(): string[] {
    const now = performance.now();
    return [...new Set([...started.entries()].filter(([, at]) => now - at.at > SLOW_MS).map(([, at]) => at.endpointId))];
  }

  async function send(endpoint: EndpointInfo, eventId: string, body: string): Promise<{ status?: number; error?: string }> {
    const timestamp = wallClock();
    const secrets = liveSecrets(endpoint.secrets, timestamp).map((s) => openSecret(keyring, endpoint.id, s));
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(settings.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'merchant-billing-webhooks/1',
          'webhook-id': eventId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signatureHeader(secrets, eventId, timestamp, body),
        },
      });
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status };
    } catch (error) {
      const e = error as Error & { cause?: { code?: string } };
      const reason = e.name === 'TimeoutError' ? `timed out after ${settings.timeoutMs} ms` : (e.cause?.code ?? e.message);
      return { error: reason.slice(0, 200) };
    }
  }

  async function disable(endpointId: string, reason: string, where: P.Sql): Promise<void> {
    const disabled = await db.$executeRaw`
      UPDATE "webhook_endpoints" SET "status" = 'DISABLED', "disabledReason" = ${reason}, "updatedAt" = clock_timestamp()
       WHERE "id" = ${endpointId}::uuid AND "status" = 'ENABLED' AND ${where}`;
    if (disabled > 0) {
      observer.endpointDisabled(reason);
      log.warn({ endpointId, reason }, 'webhook endpoint disabled');
    }
  }

  async function record(claimed: Claimed, endpoint: EndpointInfo, result: { status?: number; error?: string }, seconds: number): Promise<void> {
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const attempts = claimed.attempts + 1;
    const delays = settings.retryDelaysMs;
    const retry = !ok && !gone && attempts <= delays.length;
    const outcome: DeliveryOutcome = ok ? 'delivered' : gone ? 'gone' : retry ? 'retrying' : 'failed';
    const status = ok ? 'SUCCEEDED' : retry ? 'PENDING' : 'FAILED';
    const delayMs = retry ? delays[attempts - 1]! : 0;
    const lastError = ok ? null : (result.error ?? `HTTP ${result.status}`);
    const updated = await db.$executeRaw`
      UPDATE "webhook_deliveries" SET
        "status" = ${status}::"WebhookDeliveryStatus", "attempts" = "attempts" + 1,
        "nextAttemptAt" = ${retry ? P.sql`clock_timestamp() + make_interval(secs => ${delayMs / 1000}::float8)` : P.sql`NULL`},
        "deliveredAt" = ${ok ? P.sql`clock_timestamp()` : P.sql`"deliveredAt"`},
        "lastStatusCode" = ${result.status ?? null}::int, "lastError" = ${lastError},
        "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()
      WHERE "id" = ${claimed.id}::uuid AND "leaseOwner" = ${owner}`;
    observer.delivery(outcome, seconds);
    if (updated === 0) {
      log.warn({ deliveryId: claimed.id }, 'webhook delivery was reclaimed before its outcome was recorded; it may be sent again');
      return;
    }
    if (ok) {
      if (endpoint.failingSince) await db.$executeRaw`UPDATE "webhook_endpoints" SET "failingSince" = NULL WHERE "id" = ${endpoint.id}::uuid`;
      return;
    }
    if (gone) return disable(endpoint.id, GONE, P.sql`TRUE`);
    if (!endpoint.failingSince) {
      await db.$executeRaw`UPDATE "webhook_endpoints" SET "failingSince" = clock_timestamp() WHERE "id" = ${endpoint.id}::uuid AND "failingSince" IS NULL`;
      return;
    }
    const disableAfter = settings.disableAfterMs / 1000;
    await disable(endpoint.id, FAILING, P.sql`"failingSince" <= clock_timestamp() - make_interval(secs => ${disableAfter}::float8)`);
  }

  function track(claimed: Claimed, work: Promise<void>): void {
    perEndpoint.set(claimed.endpointId, (perEndpoint.get(claimed.endpointId) ?? 0) + 1);
    started.set(claimed.id, { at: performance.now(), endpointId: claimed.endpointId });
    const done = work
      .catch((error: unknown) => log.error({ err: error, deliveryId: claimed.id }, 'webhook delivery failed to record; its lease will expire and it will be sent again'))
      .finally(() => {
        inflight.delete(claimed.id);
        started.delete(claimed.id);
        const left = (perEndpoint.get(claimed.endpointId) ?? 1) - 1;
        if (left > 0) perEndpoint.set(claimed.endpointId, left);
        else perEndpoint.delete(claimed.endpointId);
        slotFreed?.();
      });
    inflight.set(claimed.id, done);
  }

  /** Numbers ready events, claims what fits in the free slots and starts sending it; returns how many it started. */
  async function tick(force = false): Promise<number> {
    // Numbering runs at most every SEQUENCE_EVERY_MS (each tick may start a single delivery; numbering per tick
    // would double the statements per delivery); `force` numbers now.
    if (force || performance.now() - lastSequenced >= SEQUENCE_EVERY_MS) {
      lastSequenced = performance.now();
      await assignEventSequences(db);
    }
    const free = settings.concurrency - inflight.size;
    if (free <= 0) return 0;
    const claimed = await claim(free, true, []);
    if (claimed.length < free) claimed.push(...(await claim(free - claimed.length, false, slowEndpoints())));
    if (claimed.length === 0) return 0;
    const eventIds = [...new Set(claimed.map((c) => c.eventId))];
    const endpointIds = [...new Set(claimed.map((c) => c.endpointId))];
    const [events, endpoints] = await Promise.all([
      loadEvents(db, P.sql`e."id" = ANY (${eventIds}::uuid[])`),
      db.webhookEndpoint.findMany({ where: { id: { in: endpointIds } }, select: { id: true, url: true, secrets: true, failingSince: true } }),
    ]);
    const bodies = new Map(events.map((e) => [e.id, JSON.stringify(renderEvent(e, config))]));
    const byId = new Map(endpoints.map((e) => [e.id, e as unknown as EndpointInfo]));
    for (const c of claimed) {
      const endpoint = byId.get(c.endpointId);
      const body = bodies.get(c.eventId);
      if (!endpoint || !body) continue; // deleted meanwhile (the cascade removes the delivery too)
      const started = performance.now();
      track(c, send(endpoint, c.eventId, body).then((result) => record(c, endpoint, result, (performance.now() - started) / 1000)));
    }
    return claimed.length;
  }

  /** Deletes events (and their delivery log) older than EVENT_RETENTION; at most every ten minutes. */
  async function applyRetention(): Promise<void> {
    if (Date.now() - lastRetention < 600_000) return;
    lastRetention = Date.now();
    const seconds = config.eventRetentionMs / 1000;
    const deleted = await db.$executeRaw`
      DELETE FROM "events" WHERE "id" IN (
        SELECT "id" FROM "events" WHERE "sequence" IS NOT NULL AND "createdAt" < clock_timestamp() - make_interval(secs => ${seconds}::float8) LIMIT 10000)`;
    if (deleted > 0) log.info({ deleted }, 'events past EVENT_RETENTION deleted');
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      slotFreed = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function loop(): Promise<void> {
    while (running) {
      try {
        await applyRetention();
        const started = await tick();
        // Nothing due: wait for the next poll (or a finished delivery). Otherwise go on when slots are free.
        if (started === 0) await sleep(settings.pollMs);
        else await slotsFree();
      } catch (error) {
        log.error({ err: error }, 'webhook dispatcher pass failed');
        await sleep(settings.pollMs);
      }
    }
  }

  /** For tests and operators: runs passes until nothing is due and nothing is in flight. */
  async function drain(): Promise<void> {
    for (;;) {
      const started = await tick();
      if (inflight.size > 0) await slotsFree();
      else if (started === 0 && (await tick(true)) === 0 && inflight.size === 0) return;
    }
  }

  /** Waits until a quarter of the slots are free (or all that are in flight are done), so claims come in batches. */
  async function slotsFree(): Promise<void> {
    const wanted = Math.max(1, Math.floor(settings.concurrency / 4));
    while (inflight.size > 0 && settings.concurrency - inflight.size < wanted) await Promise.race(inflight.values());
  }

  return {
    owner,
    drain,
    start() {
      if (running) return;
      running = true;
      loopDone = loop();
    },
    /** Stops claiming and waits (bounded) for the requests in flight to be recorded. */
    async stop(timeoutMs: number): Promise<boolean> {
      running = false;
      slotFreed?.();
      await loopDone;
      const all = Promise.all(inflight.values()).then(() => true);
      return Promise.race([all, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref())]);
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
