// Replicas over both gateways: three app processes on one database drain, at the same moment, due subscriptions of
// Toss (CARD) and of Danal (CARD and MOBILE), each gateway a standalone sandbox of its own. Leases and SKIP LOCKED
// give every subscription to exactly one replica, and each charge goes through its billing key's gateway: one
// SUCCEEDED payment per subscription and cycle, each orderId approved once in its gateway's ledger, nothing left in
// flight. Most subscriptions are seeded with keys the sandboxes mint (test/helpers/bulk.ts); some are made through
// the public routes: Danal MOBILE ones (the MOBILE chain: charged a month after the registration's payment) and
// key-only Toss ones through the Toss sandbox's window. Every clock is simulated and set together, so the month
// passes for the services and both sandboxes alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEncryptionKeys } from '../../src/config.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';
import { type RunningTossSandbox, startTossSandbox } from '../helpers/sandbox.ts';
import { SERVICE_ADMIN_TOKEN, SERVICE_API_KEY, SERVICE_ENCRYPTION_KEYS, type StartedService, useServiceAgainstSandbox } from '../helpers/service.ts';

const service = useServiceAgainstSandbox();
let toss: RunningTossSandbox;
const replicas: StartedService[] = [];

const DANAL_CARD = 120;
const TOSS_CARD = 120;
const DANAL_MOBILE = 8;
const TOSS_BY_WINDOW = 8;
/** Each replica's slots: at most this many gateway calls in flight at once. */
const CONCURRENCY = 4;
/** Danal charges held until released: more than one replica's slots' worth. */
const HELD = CONCURRENCY + 2;
/** Every other charge takes this long, as a gateway's does. */
const LATENCY_MS = 20;

beforeAll(async () => {
  toss = await startTossSandbox();
  const env = {
    ...toss.env(),
    CLOCK: 'simulated',
    SCHEDULER_BATCH_SIZE: '10',
    SCHEDULER_CONCURRENCY: String(CONCURRENCY),
  };
  for (let i = 0; i < 3; i += 1) replicas.push(await service.start(env));
});
afterAll(async () => {
  await toss?.close();
});

const api = async (base: string, method: string, path: string, body?: unknown, token = SERVICE_API_KEY) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** Every clock at `instant`: the three services', and both sandboxes'. */
async function setClocks(instant: Date) {
  for (const replica of replicas) {
    const response = await api(replica.base, 'PUT', '/admin/clock', { now: instant.toISOString() }, SERVICE_ADMIN_TOKEN);
    expect(response.status, await response.text()).toBe(200);
  }
  service.sandbox.clock.set(instant);
  toss.clock.set(instant);
}

/** Follows a window's redirect back to the service, as the browser would; answers the subscription made. */
async function completeRedirect(redirectUrl: string): Promise<string> {
  const response = await fetch(redirectUrl, { headers: { accept: 'application/json' } });
  const body = (await response.json()) as { subscriptionId?: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.subscriptionId!;
}

/** A Danal MOBILE subscription through the public routes: its registration charges the first month. */
async function danalMobileSubscription(base: string, userId: string): Promise<string> {
  const created = await api(base, 'POST', '/api/v1/registrations', { userId, method: 'MOBILE', amount: 5500, orderName: 'Phone plan', itemCode: 'ITEM01' });
  const registration = (await created.json()) as { window: Record<string, unknown> };
  expect(created.status, JSON.stringify(registration)).toBe(201);
  const { window } = registration;
  const approved = await service.sandbox.authorize({
    method: 'MOBILE',
    orderId: window.orderId as string,
    orderName: window.orderName as string,
    amount: window.amount as number,
    userId: window.userId as string,
    successUrl: window.successUrl as string,
    failUrl: window.failUrl as string,
    issueKeyOnly: window.issueKeyOnly as boolean,
    itemCode: window.itemCode as string,
  });
  return completeRedirect(approved.redirectUrl);
}

/** A key-only Toss subscription through the public routes and the Toss sandbox's window: due at once. */
async function tossSubscription(base: string, userId: string): Promise<string> {
  const created = await api(base, 'POST', '/api/v1/registrations', {
    userId,
    method: 'CARD',
    amount: 15000,
    orderName: 'Toss plan',
    gateway: 'TOSS',
    issueKeyOnly: true,
  });
  const registration = (await created.json()) as { window: { clientKey: string; customerKey: string; successUrl: string; failUrl: string } };
  expect(created.status, JSON.stringify(registration)).toBe(201);
  const { clientKey, customerKey, successUrl, failUrl } = registration.window;
  const authorized = await fetch(`${toss.url}/window/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientKey, customerKey, successUrl, failUrl, decision: 'approve' }),
  });
  const answer = (await authorized.json()) as { redirectUrl: string };
  expect(authorized.status, JSON.stringify(answer)).toBe(200);
  return completeRedirect(answer.redirectUrl);
}

interface PassReport {
  claimed: number;
  succeeded: number;
  declined: number;
  unknown: number;
  skipped: number;
}

const runPass = async (replica: StartedService) => {
  const response = await api(replica.base, 'POST', '/admin/scheduler/run', undefined, SERVICE_ADMIN_TOKEN);
  const body = (await response.json()) as PassReport;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
};

describe('three replicas, Toss and Danal', () => {
  it('drain Toss CARD, Danal CARD and Danal MOBILE subscriptions at once: each charged once, through its own gateway', async () => {
    const { db } = service;
    const [first] = replicas;
    // The month before: the MOBILE registrations' payments.
    await setClocks(new Date(Date.now() - 31 * 86_400_000));
    const mobileIds: string[] = [];
    for (let i = 0; i < DANAL_MOBILE; i += 1) mobileIds.push(await danalMobileSubscription(first!.base, `mobile-${i}`));
    const mobileRows = await db.subscription.findMany({ where: { id: { in: mobileIds } }, select: { nextChargeAt: true } });
    const due = new Date(Math.max(...mobileRows.map((s) => s.nextChargeAt!.getTime())));

    // Ten minutes before the MOBILE renewals fall due: the key-only Toss registrations, due at once.
    await setClocks(new Date(due.getTime() - 600_000));
    const tossWindowIds: string[] = [];
    for (let i = 0; i < TOSS_BY_WINDOW; i += 1) tossWindowIds.push(await tossSubscription(first!.base, `toss-${i}`));
    const keyring = createKeyring(parseEncryptionKeys(SERVICE_ENCRYPTION_KEYS));
    const dueAt = new Date(due.getTime() - 60_000);
    const danalCardIds = await seedDueSubscriptions(db, keyring, { count: DANAL_CARD, sandboxUrl: service.sandbox.url, dueAt });
    const tossCardIds = await seedDueSubscriptions(db, keyring, { count: TOSS_CARD, sandboxUrl: toss.url, dueAt, gateway: 'TOSS', amount: 12000 });
    const tossIds = [...tossCardIds, ...tossWindowIds];
    const danalIds = [...danalCardIds, ...mobileIds];
    const allIds = [...tossIds, ...danalIds];

    await setClocks(due);
    const dueCycles = new Map(
      (await db.subscription.findMany({ where: { id: { in: allIds } }, select: { id: true, cycle: true } })).map((s) => [s.id, s.cycle]),
    );
    const danalBefore = new Set((await service.sandbox.ledger()).map((e) => e.transactionId));
    expect(await toss.ledger()).toEqual([]);
    // The first HELD Danal charges wait until released: more than one replica's slots (SCHEDULER_CONCURRENCY each)
    // are needed to hold that many, so the passes provably overlap; the rest take LATENCY_MS each.
    await service.sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: HELD });
    await service.sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs: LATENCY_MS, count: danalIds.length * 2 });
    await toss.fault({ operation: 'CHARGE', kind: 'latency', latencyMs: LATENCY_MS, count: tossIds.length * 2 });

    const passes = Promise.all(replicas.map(runPass));
    await service.sandbox.held(HELD);
    expect(await service.sandbox.release()).toBe(HELD);
    const reports = await passes;
    const total = reports.reduce((sum, r) => ({
      claimed: sum.claimed + r.claimed,
      succeeded: sum.succeeded + r.succeeded,
      declined: sum.declined + r.declined,
      unknown: sum.unknown + r.unknown,
      skipped: sum.skipped + r.skipped,
    }));
    expect(total).toEqual({ claimed: allIds.length, succeeded: allIds.length, declined: 0, unknown: 0, skipped: 0 });
    // The passes overlapped: more than one replica claimed (the held charges needed the slots of two at least).
    expect(reports.filter((r) => r.claimed > 0).length).toBeGreaterThanOrEqual(2);

    // One SUCCEEDED payment per subscription for the cycle that was due, through its key's gateway.
    const payments = await db.payment.findMany({
      where: { subscriptionId: { in: allIds }, kind: 'RECURRING' },
      select: { subscriptionId: true, cycle: true, status: true, gateway: true, orderId: true, transactionId: true },
    });
    expect(payments).toHaveLength(allIds.length);
    expect(payments.every((p) => p.status === 'SUCCEEDED')).toBe(true);
    expect(new Set(payments.map((p) => p.subscriptionId))).toEqual(new Set(allIds));
    const gatewayOf = new Map([...tossIds.map((id) => [id, 'TOSS'] as const), ...danalIds.map((id) => [id, 'DANAL'] as const)]);
    expect(payments.filter((p) => p.gateway !== gatewayOf.get(p.subscriptionId!))).toEqual([]);
    expect(payments.filter((p) => p.cycle !== dueCycles.get(p.subscriptionId!))).toEqual([]);

    // Each gateway approved each of its orderIds once, as many as it had subscriptions due, and no other.
    const succeededAttempts = await db.paymentAttempt.findMany({
      where: { status: 'SUCCEEDED', payment: { subscriptionId: { in: allIds }, kind: 'RECURRING' } },
      select: { orderId: true, transactionId: true, payment: { select: { gateway: true } } },
    });
    const tossCharges = (await toss.ledger()).filter((e) => e.type === 'CHARGE');
    expect(tossCharges).toHaveLength(tossIds.length);
    expect(new Set(tossCharges.map((e) => e.orderId)).size).toBe(tossIds.length);
    expect(new Set(tossCharges.map((e) => e.orderId))).toEqual(new Set(succeededAttempts.filter((a) => a.payment.gateway === 'TOSS').map((a) => a.orderId)));
    const danalCharges = (await service.sandbox.ledger()).filter((e) => e.type === 'CHARGE' && !danalBefore.has(e.transactionId));
    expect(danalCharges).toHaveLength(danalIds.length);
    expect(new Set(danalCharges.map((e) => e.orderId)).size).toBe(danalIds.length);
    expect(new Set(danalCharges.map((e) => e.orderId))).toEqual(new Set(succeededAttempts.filter((a) => a.payment.gateway === 'DANAL').map((a) => a.orderId)));
    expect(new Set(payments.map((p) => p.transactionId))).toEqual(
      new Set([...tossCharges.map((e) => e.paymentKey), ...danalCharges.map((e) => e.transactionId)]),
    );

    // Nothing in flight, no lease held, nobody needing attention.
    expect(await db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })).toBe(0);
    expect(await db.subscription.count({ where: { id: { in: allIds }, OR: [{ leaseOwner: { not: null } }, { needsAttention: true }] } })).toBe(0);

    // Another round on every replica finds nothing due, and charges nothing.
    expect((await Promise.all(replicas.map(runPass))).map((r) => r.claimed)).toEqual([0, 0, 0]);
    expect((await toss.ledger()).filter((e) => e.type === 'CHARGE')).toHaveLength(tossIds.length);
    expect((await service.sandbox.ledger()).filter((e) => e.type === 'CHARGE' && !danalBefore.has(e.transactionId))).toHaveLength(danalIds.length);
  });
});
