// The webhook dispatcher (DESIGN.md §5 "Delivery"): every (event, endpoint) delivery is sent at least once,
// signed per Standard Webhooks, retried after WEBHOOK_RETRY_DELAYS, with at most WEBHOOK_CONCURRENCY requests in
// flight per process.
//
// Invariants kept here:
// - a delivery is claimed with a lease (FOR UPDATE SKIP LOCKED), so replicas never send it at once; a process that
//   dies mid-request leaves a lease that expires after 2 × WEBHOOK_TIMEOUT_MS + 5 s, and the delivery is sent again;
// - the outcome is written fenced on our lease: a delivery reclaimed by another process is not overwritten;
// - no head-of-line blocking: an endpoint holds at most its share of the slots (half; a failing one a quarter)
//   unless it has proven fast (its last request answered within a second, none in flight longer), so a new, slow
//   or dead endpoint never takes the slots the others need, and one fast endpoint can still use them all;
// - redirects are not followed (a 3xx is a failed attempt); `410 Gone` disables the endpoint at once; an endpoint
//   whose deliveries have all failed for WEBHOOK_DISABLE_AFTER is disabled;
// - times here (leases, retries, webhook-timestamp) are real time, never the simulated clock.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Prisma as P } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { EVENT_COLUMNS, renderEvent, type EventRow } from '../events/events.render.ts';
import { assignEventSequences } from '../events/events.service.ts';
import { request } from 'undici';
import { isLive, openSecret, signatureHeader, type StoredSecret } from './secrets.ts';

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

export interface WebhookObserver {
  delivery(outcome: DeliveryOutcome, seconds: number): void;
  endpointDisabled(reason: string): void;
}

/** A claimed delivery with what sending it needs: its endpoint and its event (one statement). */
interface Claimed extends EventRow {
  deliveryId: string;
  endpointId: string;
  attempts: number;
  url: string;
  secrets: StoredSecret[];
  failingSince: Date | null;
}

/** An endpoint answering slower than this, or with a request in flight longer, is held to its share of the slots. */
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
   * quarter), less what it already has claimed here; without, only endpoints proven fast (`fast`) may take the
   * room still free, so one healthy endpoint can use every slot.
   */
  async function claim(limit: number, shares: boolean, fast: string[]): Promise<Claimed[]> {
    const busy = JSON.stringify(Object.fromEntries(perEndpoint));
    const leaseMs = leaseMsFor(settings.timeoutMs);
    const quota = shares
      ? P.sql`GREATEST(0, (CASE WHEN w."failingSince" IS NULL THEN ${halfShare}::int ELSE ${failingCap}::int END)
                          - COALESCE((${busy}::jsonb ->> w."id"::text)::int, 0))`
      : P.sql`CASE WHEN w."failingSince" IS NULL AND w."id" = ANY (${fast}::uuid[]) THEN ${limit}::int ELSE 0 END`;
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
        FROM picked, "events" e, "webhook_endpoints" w
       WHERE d."id" = picked."id" AND e."id" = d."eventId" AND w."id" = d."endpointId"
      RETURNING d."id" AS "deliveryId", d."endpointId", d."attempts", w."url", w."secrets", w."failingSince", ${EVENT_COLUMNS}`;
  }

  /** How long each endpoint's last answered request took here (ms); absent until one was answered. */
  const lastAnswerMs = new Map<string, number>();

  /**
   * Endpoints that may use more than their share: their last request was answered within SLOW_MS and none is in
   * flight for longer. A new or dead endpoint has proven nothing, so it stays within its share.
   */
  function fastEndpoints(): string[] {
    const now = performance.now();
    const slow = new Set([...started.values()].filter((at) => now - at.at > SLOW_MS).map((at) => at.endpointId));
    return [...lastAnswerMs.entries()].filter(([id, ms]) => ms < SLOW_MS && !slow.has(id)).map(([id]) => id);
  }

  /** Signers by endpoint, rebuilt when its stored secrets change (a rotation); decrypting per request is waste. */
  const signers = new Map<string, { stored: string; secrets: Array<{ secret: string; expiresAt: string | null }> }>();
  function secretsOf(claimed: Claimed, now: Date): string[] {
    const stored = JSON.stringify(claimed.secrets);
    let entry = signers.get(claimed.endpointId);
    if (!entry || entry.stored !== stored) {
      entry = { stored, secrets: claimed.secrets.map((s) => ({ secret: openSecret(keyring, claimed.endpointId, s), expiresAt: s.expiresAt })) };
      signers.set(claimed.endpointId, entry);
    }
    return entry.secrets.filter((s) => isLive(s, now)).map((s) => s.secret);
  }

  /** One POST; undici's request never follows a redirect (a 3xx is an answer, and not a 2xx). */
  async function send(claimed: Claimed, body: string): Promise<{ status?: number; error?: string }> {
    const timestamp = wallClock();
    try {
      const response = await request(claimed.url, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(settings.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'merchant-billing-webhooks/1',
          'webhook-id': claimed.id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signatureHeader(secretsOf(claimed, timestamp), claimed.id, timestamp, body),
        },
      });
      await response.body.dump().catch(() => undefined);
      return { status: response.statusCode };
    } catch (error) {
      const e = error as Error & { code?: string };
      const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${settings.timeoutMs} ms` : (e.code ?? e.message);
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

  /** Successes waiting to be written: one statement for all of them, before the next claim (and at stop). */
  let delivered: Array<{ id: string; status: number }> = [];

  async function flushDelivered(): Promise<void> {
    if (delivered.length === 0) return;
    const batch = delivered;
    delivered = [];
    const updated = await db.$executeRaw`
      UPDATE "webhook_deliveries" d SET
        "status" = 'SUCCEEDED', "attempts" = d."attempts" + 1, "nextAttemptAt" = NULL, "deliveredAt" = clock_timestamp(),
        "lastStatusCode" = v.code, "lastError" = NULL, "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()
        FROM unnest(${batch.map((b) => b.id)}::uuid[], ${batch.map((b) => b.status)}::int[]) AS v(id, code)
       WHERE d."id" = v.id AND d."leaseOwner" = ${owner}`;
    if (updated < batch.length)
      log.warn({ lost: batch.length - updated }, 'webhook deliveries were reclaimed before their success was recorded; they may be sent again');
  }

  async function record(claimed: Claimed, result: { status?: number; error?: string }, seconds: number): Promise<void> {
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const attempts = claimed.attempts + 1;
    const delays = settings.retryDelaysMs;
    const retry = !ok && !gone && attempts <= delays.length;
    observer.delivery(ok ? 'delivered' : gone ? 'gone' : retry ? 'retrying' : 'failed', seconds);
    if (ok) {
      delivered.push({ id: claimed.deliveryId, status: result.status! });
      if (claimed.failingSince) await db.$executeRaw`UPDATE "webhook_endpoints" SET "failingSince" = NULL WHERE "id" = ${claimed.endpointId}::uuid`;
      return;
    }
    const delayMs = retry ? delays[attempts - 1]! : 0;
    const updated = await db.$executeRaw`
      UPDATE "webhook_deliveries" SET
        "status" = ${retry ? 'PENDING' : 'FAILED'}::"WebhookDeliveryStatus", "attempts" = "attempts" + 1,
        "nextAttemptAt" = ${retry ? P.sql`clock_timestamp() + make_interval(secs => ${delayMs / 1000}::float8)` : P.sql`NULL`},
        "lastStatusCode" = ${result.status ?? null}::int, "lastError" = ${result.error ?? `HTTP ${result.status}`},
        "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()
      WHERE "id" = ${claimed.deliveryId}::uuid AND "leaseOwner" = ${owner}`;
    if (updated === 0) {
      log.warn({ deliveryId: claimed.deliveryId }, 'webhook delivery was reclaimed before its outcome was recorded; it may be sent again');
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

  /**
   * Claimed deliveries not yet started: up to WEBHOOK_CONCURRENCY of them wait here so that a freed slot starts the
   * next request at once instead of after a claim's round trip. Their lease covers the wait (at most one request).
   */
  const ready: Array<{ claimed: Claimed; body: string }> = [];

  function start({ claimed, body }: { claimed: Claimed; body: string }): void {
    started.set(claimed.deliveryId, { at: performance.now(), endpointId: claimed.endpointId });
    sending.set(claimed.endpointId, (sending.get(claimed.endpointId) ?? 0) + 1);
    const at = performance.now();
    const done = send(claimed, body)
      .then((result) => {
        if (result.status !== undefined) lastAnswerMs.set(claimed.endpointId, performance.now() - at);
        else lastAnswerMs.delete(claimed.endpointId);
        return record(claimed, result, (performance.now() - at) / 1000);
      })
      .catch((error: unknown) =>
        log.error({ err: error, deliveryId: claimed.deliveryId }, 'webhook delivery failed to record; its lease will expire and it will be sent again'),
      )
      .finally(() => {
        inflight.delete(claimed.deliveryId);
        started.delete(claimed.deliveryId);
        const still = (sending.get(claimed.endpointId) ?? 1) - 1;
        if (still > 0) sending.set(claimed.endpointId, still);
        else sending.delete(claimed.endpointId);
        const left = (perEndpoint.get(claimed.endpointId) ?? 1) - 1;
        if (left > 0) perEndpoint.set(claimed.endpointId, left);
        else perEndpoint.delete(claimed.endpointId);
        pump();
        slotFreed?.();
      });
    inflight.set(claimed.deliveryId, done);
  }

  /** Requests in flight here, by endpoint. */
  const sending = new Map<string, number>();

  /**
   * Fills free slots from the ready queue, oldest first, but an endpoint past its share (half the slots, a failing
   * one a quarter) gets another slot only while it is neither failing nor slow: a dead endpoint's backlog never
   * takes the slots the others need.
   */
  function pump(): void {
    const fast = new Set(fastEndpoints());
    while (inflight.size < settings.concurrency && ready.length > 0) {
      const withinShare = (c: Claimed) => (sending.get(c.endpointId) ?? 0) < (c.failingSince ? failingCap : halfShare);
      let index = ready.findIndex((r) => withinShare(r.claimed));
      if (index < 0) index = ready.findIndex((r) => !r.claimed.failingSince && fast.has(r.claimed.endpointId));
      if (index < 0) return;
      const [next] = ready.splice(index, 1);
      start(next!);
    }
  }

  /** Room for more claims: the slots plus a ready queue as long as the slots. */
  const room = () => 2 * settings.concurrency - inflight.size - ready.length;

  /** Numbers ready events, claims what fits and starts what a slot is free for; returns how many it claimed. */
  async function tick(force = false): Promise<number> {
    // Numbering runs at most every SEQUENCE_EVERY_MS (a tick may claim a single delivery; numbering per tick would
    // double the statements per delivery); `force` numbers now.
    if (force || performance.now() - lastSequenced >= SEQUENCE_EVERY_MS) {
      lastSequenced = performance.now();
      await assignEventSequences(db);
    }
    await flushDelivered();
    const free = room();
    if (free <= 0) return 0;
    const claimed = await claim(free, true, []);
    if (claimed.length < free) {
      const fast = fastEndpoints();
      if (fast.length > 0) claimed.push(...(await claim(free - claimed.length, false, fast)));
    }
    const bodies = new Map<string, string>();
    for (const c of claimed) {
      perEndpoint.set(c.endpointId, (perEndpoint.get(c.endpointId) ?? 0) + 1);
      let body = bodies.get(c.id);
      if (!body) {
        body = JSON.stringify(renderEvent(c, config));
        bodies.set(c.id, body);
      }
      ready.push({ claimed: c, body });
    }
    pump();
    return claimed.length;
  }

  /** Deletes events (and their delivery log) older than EVENT_RETENTION; at most every ten minutes. */
  async function applyRetention(force = false): Promise<void> {
    if (!force && Date.now() - lastRetention < 600_000) return;
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
        const claimed = await tick();
        // Nothing due: wait for the next poll (or a finished delivery). Otherwise go on when there is room.
        if (claimed === 0) await sleep(settings.pollMs);
        else await slotsFree();
      } catch (error) {
        log.error({ err: error }, 'webhook dispatcher pass failed');
        await sleep(settings.pollMs);
      }
    }
  }

  /** For tests and operators: runs passes until nothing is due, queued or in flight. */
  async function drain(): Promise<void> {
    for (;;) {
      const claimed = await tick();
      if (inflight.size > 0) await slotsFree();
      else if (claimed === 0 && (await tick(true)) === 0 && inflight.size === 0) return flushDelivered();
    }
  }

  /** Waits until there is room for a quarter of the slots (or nothing is in flight), so claims come in batches. */
  async function slotsFree(): Promise<void> {
    const wanted = Math.max(1, Math.floor(settings.concurrency / 4));
    while (inflight.size > 0 && room() < wanted) await Promise.race(inflight.values());
  }

  /** Gives back what was claimed but not started, so another process may send it at once. */
  async function releaseReady(): Promise<void> {
    const left = ready.splice(0);
    if (left.length === 0) return;
    await db.$executeRaw`
      UPDATE "webhook_deliveries" SET "leaseOwner" = NULL, "leaseExpiresAt" = NULL
       WHERE "id" = ANY (${left.map((r) => r.claimed.deliveryId)}::uuid[]) AND "leaseOwner" = ${owner}`;
  }

  return {
    owner,
    drain,
    applyRetention,
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
      await releaseReady();
      const all = Promise.all(inflight.values()).then(() => true);
      const drained = await Promise.race([all, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref())]);
      await flushDelivered();
      return drained;
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
