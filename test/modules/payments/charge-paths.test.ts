// The charge's write, rendered twice: new cycles' common case in one SQL statement per batch for prepare and for record
// (charge.prepare-batch.ts prepareNewCycles, charge.record.ts recordApprovals; a single charge is a batch of one), everything
// else through Prisma in short transactions. Both render the ledger's one write (chargeSuccessWrite, subscriptionAfterSuccess). This twin test
// runs the same charge down each path, against the sandbox over HTTP, and compares every row it wrote and every event
// the database's triggers recorded, with the values that differ by nature (ids, the gateway's transactionId and
// approval time, write times) replaced by names.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { claimDue } from '../../../src/modules/payments/charge.claim.ts';
import { prepareNewCycles } from '../../../src/modules/payments/charge.prepare-batch.ts';
import { recordApprovals } from '../../../src/modules/payments/charge.record.ts';
import { createChargeService } from '../../../src/modules/payments/charge.service.ts';
import { noteTrialsEnding } from '../../../src/modules/subscriptions/trials.ts';
import type { SimulatedClock } from '../../../src/lib/clock.ts';
import { adminHeaders, subscribe } from '../../helpers/billing.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { sandboxFault, sandboxHeld, sandboxRelease } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';

// Consents are not required here so that a trial's conversion takes the one-statement path too. The clock is the
// simulated one, which follows the system's time until the MOBILE case (the last) sets it.
const running = useRunningApp({ SCHEDULER_CONCURRENCY: '2', CONSENT_REQUIRED: 'false', CLOCK: 'simulated' });

afterEach(() => {
  vi.restoreAllMocks();
});

type Path = 'oneStatement' | 'transactional';

/** What each engine logged as an answer it could not record (ledger/gateway-call.ts). */
const unrecorded: Record<Path, unknown[]> = { oneStatement: [], transactional: [] };

function engine(path: Path) {
  const { app } = running;
  // The app's logger, with the error lines of this engine kept for the test.
  const log = Object.assign(Object.create(app.log), {
    error: (object: { reason?: string }, message?: string) => {
      unrecorded[path].push(object.reason);
      app.log.error(object, message);
    },
  }) as typeof app.log;
  const deps = { db: app.db, gateway: app.gateway, clock: app.clock, config: app.config, keyring: createKeyring(app.config.encryptionKeys), log };
  return createChargeService(deps, { oneStatement: path === 'oneStatement' });
}

/**
 * Columns written at the time of writing (the database's or the process's clock), or holding the gateway's raw answer,
 * never equal between two runs: compared as set or not ('<set>' or null), so a column one path writes and the other
 * leaves null is still a difference.
 */
const WRITE_TIMES = new Set([
  'createdAt',
  'updatedAt',
  'changedAt',
  'sentAt',
  'completedAt',
  'trialWillEndAt',
  'pausedAt',
  'leaseExpiresAt',
  'rawResponse',
  'pos',
  'xid',
]);
/** An event's public sequence, given after its commit by assign_event_sequences(), whenever that runs: dropped. */
const ASSIGNED_LATER = new Set(['sequence']);

/** Replaces every occurrence of a run's own values by their names, and the write times by whether they are set. */
function normalize(value: unknown, names: Map<string, string>): unknown {
  if (value instanceof Date) return names.get(value.toISOString()) ?? value.toISOString();
  // The events' snapshots hold instants as PostgreSQL prints them (+00:00): compared as instants.
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) return normalize(new Date(value), names);
  if (typeof value === 'string') {
    let out = names.get(value) ?? value;
    for (const [raw, name] of names) if (raw.length >= 8) out = out.split(raw).join(name);
    return out;
  }
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map((v) => normalize(v, names));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !ASSIGNED_LATER.has(key))
        .map(([key, v]) => [key, WRITE_TIMES.has(key) ? (v === null || v === undefined ? null : '<set>') : normalize(v, names)]),
    );
  }
  return value;
}

/** Everything one charge of subscription `id` left in the database, normalized. */
async function written(id: string) {
  const { db } = running.app;
  const subscription = await db.subscription.findUniqueOrThrow({ where: { id } });
  const payments = await db.payment.findMany({ where: { subscriptionId: id }, include: { attempts: true } });
  const names = new Map<string, string>([
    [id, '<subscription>'],
    [id.replace(/-/g, ''), '<subscription>'],
    [subscription.billingKeyId, '<billingKey>'],
    [subscription.registrationId, '<registration>'],
    [subscription.registrationId.replace(/-/g, ''), '<registration>'],
    [subscription.userId, '<user>'],
  ]);
  // Payments in cycle order (a MOBILE subscription's first one is its window's), each attempt of each by number.
  payments.sort((a, b) => (a.cycle ?? 0) - (b.cycle ?? 0));
  for (const [index, payment] of payments.entries()) {
    const suffix = index === 0 ? '' : ` ${index}`;
    names.set(payment.id, `<payment${suffix}>`);
    payment.attempts.sort((a, b) => a.attemptNumber - b.attemptNumber);
    for (const [number, attempt] of payment.attempts.entries()) {
      names.set(attempt.id, number === 0 ? `<attempt${suffix}>` : `<attempt${suffix} ${number}>`);
      if (attempt.leaseOwner) names.set(attempt.leaseOwner, '<the pass’s lease>');
    }
    if (payment.transactionId) names.set(payment.transactionId, `<transactionId${suffix}>`);
    if (payment.approvedAt) names.set(payment.approvedAt.toISOString(), `<approvedAt${suffix}>`);
  }
  const events = await db.event.findMany({ where: { objectId: { in: [id, ...payments.map((p) => p.id)] } }, orderBy: { pos: 'asc' } });
  for (const [index, event] of events.entries()) names.set(event.id, `<event ${index}>`);
  return normalize({ subscription, payments, events }, names);
}

/**
 * Charges one due subscription through `path`'s engine and reports whether the charge itself opened a transaction
 * (the one-statement path opens none; the sweep and trial notice before it are counted apart by an empty pass).
 */
async function chargeDown(path: Path) {
  const charges = engine(path);
  const spy = vi.spyOn(running.app.db, '$transaction');
  const report = await charges.runPass();
  const transactions = spy.mock.calls.length;
  spy.mockClear();
  await charges.runPass();
  const baseline = spy.mock.calls.length;
  spy.mockRestore();
  return { report, chargeTransactions: transactions - baseline };
}

async function seedOne(dueAt: Date, change?: (id: string) => Promise<void>) {
  const { app } = running;
  const [id] = await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), { count: 1, sandboxUrl: `${running.baseUrl}/sandbox`, dueAt });
  await change?.(id!);
  return id!;
}

/**
 * Does `action` while the charge's gateway call is out: the call is held at the sandbox (a fault with until
 * 'released') until the action is done, however long a loaded machine takes; released even if the action throws.
 */
async function whileHeld(action: () => Promise<void>) {
  await sandboxHeld(running.app);
  try {
    await action();
  } finally {
    await sandboxRelease(running.app);
  }
}

/** Seeds the same subscription twice, one after the other, and charges each down one path. */
async function twin(change?: (id: string) => Promise<void>, during?: (id: string) => Promise<void>) {
  const dueAt = new Date(Date.now() - 60_000);
  const results: Record<Path, { rows: unknown; chargeTransactions: number; succeeded: number }> = {} as never;
  for (const path of ['oneStatement', 'transactional'] as const) {
    const id = await seedOne(dueAt, change);
    const charging = chargeDown(path);
    try {
      await during?.(id);
    } finally {
      await charging.catch(() => undefined);
    }
    const { report, chargeTransactions } = await charging;
    results[path] = { rows: await written(id), chargeTransactions, succeeded: report.succeeded };
  }
  return results;
}

describe('one write, two renderings: the one-statement charge writes what the transactional charge writes', () => {
  it('an ACTIVE subscription’s new cycle: the same payment, attempt, subscription and events', async () => {
    const { oneStatement, transactional } = await twin();
    expect(oneStatement.succeeded).toBe(1);
    expect(transactional.succeeded).toBe(1);
    // Each went down its own path: the one-statement charge opened no transaction.
    expect(oneStatement.chargeTransactions).toBe(0);
    expect(transactional.chargeTransactions).toBeGreaterThan(0);
    expect(oneStatement.rows).toEqual(transactional.rows);
    expect(oneStatement.rows).toMatchObject({ subscription: { status: 'ACTIVE', cycle: 2, lastTransactionId: '<transactionId>' } });
  });

  it('a trial’s first paid charge: both make it ACTIVE through the recover move, with the same events', async () => {
    const trialEnd = new Date(Date.now() - 60_000);
    const trialing = (id: string) => running.app.db.subscription.update({ where: { id }, data: { status: 'TRIALING', trialEnd } }).then(() => undefined);
    const { oneStatement, transactional } = await twin(trialing);
    expect(oneStatement.chargeTransactions).toBe(0);
    expect(transactional.chargeTransactions).toBeGreaterThan(0);
    expect(oneStatement.rows).toEqual(transactional.rows);
    expect(oneStatement.rows).toMatchObject({ subscription: { status: 'ACTIVE' } });
  });

  it('the lease lost while the call was out: both record nothing, leave the attempt for the sweeper, and say LEASE_LOST', async () => {
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
    const stealLease = (id: string) =>
      whileHeld(async () => {
        await running.app.db.subscription.update({ where: { id }, data: { leaseOwner: 'another-replica' } });
      });
    unrecorded.oneStatement = [];
    unrecorded.transactional = [];
    const { oneStatement, transactional } = await twin(undefined, stealLease);
    expect(oneStatement.chargeTransactions).toBe(0);
    expect(transactional.chargeTransactions).toBeGreaterThan(0);
    expect(oneStatement.rows).toEqual(transactional.rows);
    expect(oneStatement.rows).toMatchObject({
      payments: [{ status: 'PENDING', attempts: [{ status: 'IN_FLIGHT' }] }],
      subscription: { leaseOwner: 'another-replica' },
    });
    expect(unrecorded).toEqual({ oneStatement: ['LEASE_LOST'], transactional: ['LEASE_LOST'] });
  });

  it('leases held but the payment moved on while the call was out: both record nothing and say RECORD_FAILED', async () => {
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
    // No writer of ours moves an in-flight payment; a fixture does, to reach the record's guard on the payment's state.
    const failPayment = (id: string) =>
      whileHeld(async () => {
        await running.app.db.payment.updateMany({ where: { subscriptionId: id }, data: { status: 'CANCELED' } });
      });
    unrecorded.oneStatement = [];
    unrecorded.transactional = [];
    const { oneStatement, transactional } = await twin(undefined, failPayment);
    expect(oneStatement.chargeTransactions).toBe(0);
    expect(transactional.chargeTransactions).toBeGreaterThan(0);
    expect(oneStatement.rows).toEqual(transactional.rows);
    expect(oneStatement.rows).toMatchObject({ payments: [{ status: 'CANCELED', attempts: [{ status: 'IN_FLIGHT' }] }] });
    expect(unrecorded).toEqual({ oneStatement: ['RECORD_FAILED'], transactional: ['RECORD_FAILED'] });
  });

  it('paused while the call was out: the success is recorded and nothing is scheduled, on both paths', async () => {
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
    const pauseInFlight = (id: string) =>
      whileHeld(async () => {
        const answer = await running.app.inject({
          method: 'POST',
          url: `/admin/subscriptions/${id}/pause`,
          headers: { ...adminHeaders, 'idempotency-key': `pause-${id}` },
          payload: { reason: 'twin test' },
        });
        expect(answer.statusCode).toBe(200);
      });
    const { oneStatement, transactional } = await twin(undefined, pauseInFlight);
    // The operator's pause opened a transaction of its own on both runs.
    expect(oneStatement.chargeTransactions).toBeLessThan(transactional.chargeTransactions);
    expect(oneStatement.rows).toEqual(transactional.rows);
    expect(oneStatement.rows).toMatchObject({ subscription: { status: 'PAUSED', nextChargeAt: null }, payments: [{ status: 'SUCCEEDED' }] });
  });

  it('a batch of new cycles: one statement prepares them all and one records them all, each row what the transactional charge writes', async () => {
    const { app } = running;
    const dueAt = new Date(Date.now() - 60_000);
    const trialEnd = new Date(Date.now() - 60_000);
    const variants: Array<((id: string) => Promise<void>) | undefined> = [
      undefined,
      (id) => app.db.subscription.update({ where: { id }, data: { status: 'TRIALING', trialEnd } }).then(() => undefined),
      (id) => app.db.subscription.update({ where: { id }, data: { amount: 12_300 } }).then(() => undefined),
    ];
    const batch: string[] = [];
    for (const change of variants) batch.push(await seedOne(dueAt, change));
    const sorted = (ids: Iterable<string>) => [...ids].sort();

    // The scheduler's steps, driven one by one against the database and the sandbox: claim, prepare the batch, call each, record the batch.
    const deps = { db: app.db, clock: app.clock, config: app.config, keyring: createKeyring(app.config.encryptionKeys), log: app.log };
    const owner = randomUUID();
    const seeded = (await app.db.event.aggregate({ _max: { pos: true } }))._max.pos ?? 0n;
    const now = app.clock.now();
    await noteTrialsEnding(app.db, now); // as every pass does before it claims
    const claimed = await claimDue(app.db, { owner, leaseExpiresAt: new Date(now.getTime() + 60_000), dueBy: now, now, exclude: [], limit: 10 });
    expect(sorted(claimed.map((row) => row.id))).toEqual(sorted(batch));
    const ready = await prepareNewCycles(deps, claimed, owner);
    expect(sorted(ready.keys())).toEqual(sorted(batch));
    const answers = await Promise.all(
      [...ready.values()].map(async (prepared) => ({
        ready: prepared,
        result: await app.gateway.chargeBillingKey({
          method: prepared.method,
          billingKey: prepared.billingKey,
          userId: prepared.userId,
          amount: prepared.plan.amount,
          orderName: prepared.orderName,
          orderId: prepared.orderId,
        }),
      })),
    );
    expect(answers.map(({ result }) => result.outcome)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const recorded = await recordApprovals(deps, answers, app.clock.now());
    expect(sorted(recorded)).toEqual(sorted(batch));

    // One statement each: every kind of event the batch caused was written by one transaction, for all three rows.
    const paymentIds = (await app.db.payment.findMany({ where: { subscriptionId: { in: batch } }, select: { id: true } })).map((p) => p.id);
    const events = await app.db.event.findMany({
      where: { objectId: { in: [...batch, ...paymentIds] }, pos: { gt: seeded } },
      select: { type: true, xid: true },
    });
    const transactions = new Map<string, Set<bigint>>();
    for (const { type, xid } of events) transactions.set(type, (transactions.get(type) ?? new Set()).add(xid));
    expect(events.filter((event) => event.type === 'payment.succeeded')).toHaveLength(3);
    expect(Object.fromEntries([...transactions].map(([type, xids]) => [type, xids.size]))).toEqual(
      Object.fromEntries([...transactions.keys()].map((type) => [type, 1])),
    );

    // The same three subscriptions again, charged by the transactional engine: each row written the same.
    const twins: string[] = [];
    for (const change of variants) twins.push(await seedOne(dueAt, change));
    expect(await engine('transactional').runPass()).toMatchObject({ claimed: 3, succeeded: 3 });
    for (const [index, id] of batch.entries()) expect(await written(id)).toEqual(await written(twins[index]!));
    expect(await written(batch[1]!)).toMatchObject({ subscription: { status: 'ACTIVE' } });
    expect(await written(batch[2]!)).toMatchObject({ payments: [{ amount: 12_300, status: 'SUCCEEDED' }] });
  });

  it('a batch where rows fail their fences: the one statement writes the others, and leaves those as they were', async () => {
    const { app } = running;
    const dueAt = new Date(Date.now() - 60_000);
    const [kept, changed, recordStolen, prepareStolen] = [await seedOne(dueAt), await seedOne(dueAt), await seedOne(dueAt), await seedOne(dueAt)];
    const sorted = (ids: Iterable<string>) => [...ids].sort();
    const deps = { db: app.db, clock: app.clock, config: app.config, keyring: createKeyring(app.config.encryptionKeys), log: app.log };
    const owner = randomUUID();
    const now = app.clock.now();
    const claimed = await claimDue(app.db, { owner, leaseExpiresAt: new Date(now.getTime() + 60_000), dueBy: now, now, exclude: [], limit: 10 });
    expect(claimed).toHaveLength(4);

    // Between the claim and the prepare: an operator's change to one row (its updatedAt moves), and another row's lease
    // taken by another replica (raw SQL, so that only the lease differs from what the claim read).
    await app.db.subscription.update({ where: { id: changed }, data: { orderName: 'renamed after the claim' } });
    await app.db.$executeRaw`UPDATE "subscriptions" SET "leaseOwner" = 'another-replica' WHERE "id" = ${prepareStolen}::uuid`;
    const ready = await prepareNewCycles(deps, claimed, owner);
    expect(sorted(ready.keys())).toEqual(sorted([kept, recordStolen]));
    // Nothing written for the fenced rows: no payment, no lease renewed; the changed one is still ours, for the
    // transactional prepare to decide with every rule.
    expect(await app.db.payment.count({ where: { subscriptionId: { in: [changed, prepareStolen] } } })).toBe(0);
    const fenced = await app.db.subscription.findMany({
      where: { id: { in: [changed, prepareStolen] } },
      select: { id: true, leaseOwner: true, leaseExpiresAt: true },
    });
    expect(Object.fromEntries(fenced.map((row) => [row.id, row.leaseOwner]))).toEqual({ [changed]: owner, [prepareStolen]: 'another-replica' });
    expect(fenced.find((row) => row.id === changed)!.leaseExpiresAt).toEqual(new Date(now.getTime() + 60_000));

    const answers = await Promise.all(
      [...ready.values()].map(async (prepared) => ({
        ready: prepared,
        result: await app.gateway.chargeBillingKey({
          method: prepared.method,
          billingKey: prepared.billingKey,
          userId: prepared.userId,
          amount: prepared.plan.amount,
          orderName: prepared.orderName,
          orderId: prepared.orderId,
        }),
      })),
    );
    expect(answers.map(({ result }) => result.outcome)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    // While the calls were out, one row's lease was taken over: its approval is not written, the other's is.
    await app.db.$executeRaw`UPDATE "subscriptions" SET "leaseOwner" = 'another-replica' WHERE "id" = ${recordStolen}::uuid`;
    const recorded = await recordApprovals(deps, answers, app.clock.now());
    expect([...recorded]).toEqual([kept]);
    expect(await written(recordStolen)).toMatchObject({
      subscription: { leaseOwner: 'another-replica', cycle: 1, lastTransactionId: null },
      payments: [
        { status: 'PENDING', transactionId: null, attempts: [{ status: 'IN_FLIGHT', sentAt: null, completedAt: null, leaseOwner: '<the pass’s lease>' }] },
      ],
    });

    // The row written is what the transactional charge writes for the same subscription.
    const twin = await seedOne(dueAt);
    expect(await engine('transactional').runPass()).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(await written(kept)).toEqual(await written(twin));
    expect(await written(kept)).toMatchObject({ subscription: { cycle: 2 }, payments: [{ status: 'SUCCEEDED' }] });
  });

  // Last: it sets the simulated clock, which then no longer follows the system's time.
  it('a MOBILE subscription’s next cycle: the same chain check, the same chain head written, the same events', async () => {
    const { app } = running;
    const clock = app.clock as SimulatedClock;
    const start = new Date(Math.floor(Date.now() / 1000) * 1000);
    const results: Partial<Record<Path, { rows: unknown; chargeTransactions: number; succeeded: number }>> = {};
    // Same-length user ids: the sandbox picks the carrier from the user id's length.
    for (const [path, userId] of [
      ['oneStatement', 'mobile-one'],
      ['transactional', 'mobile-two'],
    ] as const) {
      clock.set(start);
      const id = await subscribe(app, { method: 'MOBILE', amount: 5500, itemCode: 'ITEM01', userId });
      const { nextChargeAt } = await app.db.subscription.findUniqueOrThrow({ where: { id } });
      clock.set(nextChargeAt!);
      const { report, chargeTransactions } = await chargeDown(path);
      results[path] = { rows: await written(id), chargeTransactions, succeeded: report.succeeded };
    }
    const { oneStatement, transactional } = results as Record<Path, { rows: unknown; chargeTransactions: number; succeeded: number }>;
    expect(oneStatement.succeeded).toBe(1);
    expect(transactional.succeeded).toBe(1);
    expect(oneStatement.chargeTransactions).toBe(0);
    expect(transactional.chargeTransactions).toBeGreaterThan(0);
    expect(oneStatement.rows).toEqual(transactional.rows);
    // The chain: the second charge was sent on the first's transactionId and its own is the new head.
    expect(oneStatement.rows).toMatchObject({
      subscription: { method: 'MOBILE', cycle: 2, lastTransactionId: '<transactionId 1>', lastAmount: 5500 },
      payments: [
        { status: 'SUCCEEDED', transactionId: '<transactionId>' },
        { status: 'SUCCEEDED', transactionId: '<transactionId 1>' },
      ],
    });
  });

  // Also sets the clock.
  it('a MOBILE row whose chain head changed after the claim: the one statement does not prepare it', async () => {
    const { app } = running;
    const clock = app.clock as SimulatedClock;
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
    const id = await subscribe(app, { method: 'MOBILE', amount: 5500, itemCode: 'ITEM01', userId: 'mobile-one' });
    const { nextChargeAt } = await app.db.subscription.findUniqueOrThrow({ where: { id } });
    clock.set(nextChargeAt!);
    const deps = { db: app.db, clock: app.clock, config: app.config, keyring: createKeyring(app.config.encryptionKeys), log: app.log };
    const owner = randomUUID();
    const now = clock.now();
    const claimed = await claimDue(app.db, { owner, leaseExpiresAt: new Date(now.getTime() + 60_000), dueBy: now, now, exclude: [], limit: 10 });
    expect(claimed.map((row) => row.id)).toEqual([id]);
    // Only the chain head differs from what the claim read (raw SQL: updatedAt unchanged).
    await app.db.$executeRaw`UPDATE "subscriptions" SET "lastTransactionId" = 'another-head' WHERE "id" = ${id}::uuid`;
    const ready = await prepareNewCycles(deps, claimed, owner);
    expect(ready.size).toBe(0);
    expect(await app.db.payment.count({ where: { subscriptionId: id } })).toBe(1);
    expect(await app.db.subscription.findUniqueOrThrow({ where: { id } })).toMatchObject({ leaseOwner: owner, lastTransactionId: 'another-head' });
  });
});
