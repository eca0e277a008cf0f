// The sandbox's hold: a fault with until 'released' parks each matching call where latencyMs would sleep, until the
// test releases it (POST /_control/release), so a test acts while a call is out by a condition, not by outrunning a
// clock. GET /_control/held says which calls have arrived; a reset or a close ends held calls unanswered.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../src/gateway/types.ts';
import { clientFor, startSandbox, type RunningSandbox } from '../helpers/sandbox.ts';

let sandbox: RunningSandbox;
let client: GatewayClient;
let billingKey: string;

// A client that never gives up first here: what ends a held call is the test's release, reset or close.
const PATIENT_MS = 10 * 60_000;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = clientFor(sandbox.url, { timeoutMs: PATIENT_MS });
});
afterAll(async () => {
  client.close();
  await sandbox.close();
});
beforeEach(async () => {
  await sandbox.reset();
  const { transactionId } = await sandbox.authorize({ method: 'CARD', issueKeyOnly: true });
  billingKey = (await client.issueBillingKey({ method: 'CARD', transactionId: transactionId! })).fields.billingKey!;
});

function charge(orderId: string, on = client, key = billingKey) {
  return on.chargeBillingKey({ method: 'CARD', billingKey: key, userId: 'user-1', amount: 9900, orderName: 'Monthly plan', orderId });
}

async function charges(orderId: string, on = sandbox) {
  return (await on.ledger()).filter((e) => e.type === 'CHARGE' && e.orderId === orderId);
}

/** A promise and whether it has settled yet. */
function watched<T>(promise: Promise<T>) {
  const state = { settled: false, promise };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

async function control(path: string, init?: RequestInit) {
  return fetch(`${sandbox.url}${path}`, init);
}

// biome-ignore lint/suspicious/noExplicitAny: the control routes' JSON, read by the assertions
const body = async (path: string): Promise<any> => (await control(path)).json();

const postJson = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a fault held until released', () => {
  it('the call waits, listed as held and unbooked, until released; then it is answered and booked', async () => {
    const fault = await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
    const charging = watched(charge('held-latency'));
    await sandbox.held(1);
    const held = (await body('/_control/held')).held;
    expect(held).toEqual([{ id: expect.any(Number), faultId: fault.id, operation: 'BILLING_CONFIRM', since: expect.any(String) }]);
    expect(charging.settled).toBe(false);
    expect(await charges('held-latency')).toHaveLength(0);

    expect(await sandbox.release()).toBe(1);
    expect(await charging.promise).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(await charges('held-latency')).toHaveLength(1);
    expect((await body('/_control/held')).held).toEqual([]);
  });

  it('the fault’s kind applies once released: a held decline declines and books nothing', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'decline', code: 'INSUFFICIENT_BALANCE', until: 'released' });
    const charging = charge('held-decline');
    await sandbox.held(1);
    await sandbox.release();
    expect(await charging).toMatchObject({ outcome: 'DECLINED', code: 'INSUFFICIENT_BALANCE' });
    expect(await charges('held-decline')).toHaveLength(0);
  });

  it('a release by fault id lets only that fault’s calls go on', async () => {
    const first = await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
    const second = await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
    const one = watched(charge('held-first'));
    await sandbox.held(1);
    const two = watched(charge('held-second'));
    await sandbox.held(2);

    expect(await sandbox.release(second.id)).toBe(1);
    expect(await two.promise).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(one.settled).toBe(false);
    expect((await body('/_control/held')).held).toEqual([expect.objectContaining({ faultId: first.id })]);

    expect(await sandbox.release(first.id)).toBe(1);
    expect(await one.promise).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(await sandbox.release()).toBe(0);
  });

  it('a reset ends held calls unanswered, nothing booked, so nothing waits into the next test', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
    const charging = charge('held-reset');
    await sandbox.held(1);
    await sandbox.reset();
    expect(await charging).toMatchObject({ outcome: 'UNKNOWN' });
    expect(await sandbox.ledger()).toEqual([]);
    expect((await body('/_control/held')).held).toEqual([]);
  });

  it('a close ends held calls: the sandbox closes', async () => {
    const other = await startSandbox();
    const otherClient = clientFor(other.url, { timeoutMs: PATIENT_MS });
    try {
      const { transactionId } = await other.authorize({ method: 'CARD', issueKeyOnly: true });
      const key = (await otherClient.issueBillingKey({ method: 'CARD', transactionId: transactionId! })).fields.billingKey!;
      await other.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
      const charging = charge('held-close', otherClient, key);
      await other.held(1);
      await other.close();
      expect(await charging).toMatchObject({ outcome: 'UNKNOWN' });
    } finally {
      otherClient.close();
    }
  });

  it('until takes only released, and not with latencyMs', async () => {
    const later = await control('/_control/faults', postJson({ kind: 'latency', until: 'later' }));
    expect(later.status).toBe(400);
    const both = await control('/_control/faults', postJson({ kind: 'latency', until: 'released', latencyMs: 100 }));
    expect(both.status).toBe(400);
    const badId = await control('/_control/release', postJson({ faultId: 'one' }));
    expect(badId.status).toBe(400);
    expect((await body('/_control/faults')).faults).toEqual([]);
  });
});
