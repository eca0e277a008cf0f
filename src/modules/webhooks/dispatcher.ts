// The webhook dispatcher (docs/api.md "Events and webhooks"): every (event, endpoint) delivery is sent at least once,
// signed per Standard Webhooks, retried after WEBHOOK_RETRY_DELAYS, with at most WEBHOOK_CONCURRENCY requests in
// flight per process. Claiming is in claims.ts, sending in sender.ts, recording outcomes in outcomes.ts, retention in
// retention.ts; this file schedules: which claimed delivery gets a slot, and when to claim more.
//
// Invariants kept here:
// - a delivery is claimed with a lease (FOR UPDATE SKIP LOCKED), so replicas never send it at once; a process that
//   dies mid-request leaves a lease that expires after 2 × WEBHOOK_TIMEOUT_MS + 5 s, and the delivery is sent again;
// - the outcome is written fenced on the claim's lease token: a delivery claimed again, or queued again by a resend
//   or a recover, is not overwritten by the outcome of an older send;
// - the lease covers a wait in the ready queue, the request (at most one timeout) and the recording: successes are
//   written within SUCCESS_FLUSH_MS (outcomes.ts), not when the claim loop next runs;
// - no head-of-line blocking: an endpoint holds at most its share of the slots (half; a failing one a quarter)
//   unless it has proven fast (its last request answered within a second, none in flight longer), so a new, slow
//   or dead endpoint never takes the slots the others need, and one fast endpoint can still use them all;
// - redirects are not followed (a 3xx is a failed attempt); `410 Gone` disables the endpoint at once; an endpoint
//   whose deliveries have all failed for WEBHOOK_DISABLE_AFTER is disabled;
// - times here (leases, retries, webhook-timestamp) are real time, never the simulated clock; what the service's
//   clock dates (an endpoint's updatedAt when it is disabled, the events' age for EVENT_RETENTION) keeps to it.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { renderEvent } from '../events/events.render.ts';
import { assignEventSequences } from '../events/events.service.ts';
import { createClaims, type Claimed } from './claims.ts';
import { createSender } from './sender.ts';
import { createOutcomes } from './outcomes.ts';
import type { WebhookObserver } from '../../plugins/metrics.ts';
import { createRetention } from './retention.ts';

/** An endpoint answering slower than this, or with a request in flight longer, is held to its share of the slots. */
const SLOW_MS = 1_000;
const SEQUENCE_EVERY_MS = 100;

export function createDispatcher(
  deps: Pick<ServiceDeps, 'db' | 'config' | 'keyring' | 'clock'> & {
    log: Pick<Logger, 'info' | 'warn' | 'error'>;
    observer?: WebhookObserver;
    wallClock?: () => Date;
  },
) {
  const { db, config, keyring, log } = deps;
  const settings = config.webhooks;
  const observer = deps.observer ?? { delivery() {}, endpointDisabled() {} };
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const claims = createClaims(db, owner, settings.timeoutMs);
  const send = createSender({ keyring, timeoutMs: settings.timeoutMs, wallClock: deps.wallClock ?? (() => new Date()) });
  const outcomes = createOutcomes({ db, clock: deps.clock, settings, log, observer });
  const applyRetention = createRetention(db, deps.clock, config.eventRetentionMs, log);
  const failingCap = Math.max(1, Math.floor(settings.concurrency / 4));
  const halfShare = Math.max(1, Math.ceil(settings.concurrency / 2));
  const started = new Map<string, { at: number; endpointId: string }>();
  const inflight = new Map<string, Promise<void>>();
  /** Deliveries claimed here (ready or in flight), by endpoint. */
  const perEndpoint = new Map<string, number>();
  /** Requests in flight here, by endpoint. */
  const sending = new Map<string, number>();
  /** How long each endpoint's last answered request took here (ms); absent until one was answered. */
  const lastAnswerMs = new Map<string, number>();
  /**
   * Claimed deliveries not yet started: up to WEBHOOK_CONCURRENCY of them wait here so that a freed slot starts the
   * next request at once instead of after a claim's round trip. Their lease covers the wait (one request).
   */
  const ready: Array<{ claimed: Claimed; body: string }> = [];
  let slotFreed: (() => void) | undefined;
  let running = false;
  let loopDone: Promise<void> | undefined;
  let lastSequenced = -Infinity;

  function unclaimed(endpointId: string): void {
    const left = (perEndpoint.get(endpointId) ?? 1) - 1;
    if (left > 0) perEndpoint.set(endpointId, left);
    else perEndpoint.delete(endpointId);
  }

  /**
   * Endpoints that may use more than their share: their last request was answered within SLOW_MS and none is in
   * flight for longer. A new or dead endpoint has proven nothing, so it stays within its share.
   */
  function fastEndpoints(): string[] {
    const now = performance.now();
    const slow = new Set([...started.values()].filter((at) => now - at.at > SLOW_MS).map((at) => at.endpointId));
    return [...lastAnswerMs.entries()].filter(([id, ms]) => ms < SLOW_MS && !slow.has(id)).map(([id]) => id);
  }

  function start({ claimed, body }: { claimed: Claimed; body: string }): void {
    const at = performance.now();
    started.set(claimed.deliveryId, { at, endpointId: claimed.endpointId });
    sending.set(claimed.endpointId, (sending.get(claimed.endpointId) ?? 0) + 1);
    const done = send(claimed, body)
      .then((result) => {
        if (result.status !== undefined) lastAnswerMs.set(claimed.endpointId, performance.now() - at);
        else lastAnswerMs.delete(claimed.endpointId);
        return outcomes.record(claimed, result, (performance.now() - at) / 1000);
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
        unclaimed(claimed.endpointId);
        pump();
        slotFreed?.();
      });
    inflight.set(claimed.deliveryId, done);
  }

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
    const free = room();
    if (free <= 0) return 0;
    const claimed = await claims.claim(free, { kind: 'shares', half: halfShare, failing: failingCap, busy: perEndpoint });
    if (claimed.length < free) {
      const fast = fastEndpoints();
      if (fast.length > 0) claimed.push(...(await claims.claim(free - claimed.length, { kind: 'fast', endpoints: fast })));
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

  /** For tests and operators: runs passes until nothing is due, queued or in flight, and every outcome is written. */
  async function drain(): Promise<void> {
    for (;;) {
      const claimed = await tick();
      if (inflight.size > 0) await slotsFree();
      else if (claimed === 0 && (await tick(true)) === 0 && inflight.size === 0) return outcomes.flush();
    }
  }

  /** Waits until there is room for a quarter of the slots (or nothing is in flight), so claims come in batches. */
  async function slotsFree(): Promise<void> {
    const wanted = Math.max(1, Math.floor(settings.concurrency / 4));
    while (inflight.size > 0 && room() < wanted) await Promise.race(inflight.values());
  }

  /** Gives back what was claimed but not started, so another process may send it at once. */
  async function releaseReady(): Promise<void> {
    const left = ready.splice(0).map((r) => r.claimed);
    for (const claimed of left) unclaimed(claimed.endpointId);
    await claims.release(left);
  }

  return {
    owner,
    drain,
    /** For tests and operators: writes every success known so far (they are otherwise written within SUCCESS_FLUSH_MS). */
    flush: outcomes.flush,
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
      await outcomes.flush();
      return drained;
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The webhook dispatcher of this app (app.ts), for tests and the bench. */
    webhooks: Dispatcher;
  }
}
