// Faults injected by the sandbox, one test per kind: the outcome class the client reports, and whether the
// ledger shows that money moved. The rule under test is docs/architecture.md, invariant 3: only a provable "never reached
// the gateway" is NOT_SENT, and anything ambiguous after sending is UNKNOWN.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../src/gateway/types.ts';
import { freePort } from '../setup/global-setup.ts';
import { clientFor, startSandbox, type RunningSandbox } from '../helpers/sandbox.ts';
import { waitFor } from '../helpers/service.ts';

let sandbox: RunningSandbox;
let client: GatewayClient;
let billingKey: string;
let seq = 0;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = clientFor(sandbox.url, { timeoutMs: 700 });
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

function charge(orderId = `fault-${Date.now()}-${++seq}`, on = client) {
  return on.chargeBillingKey({ method: 'CARD', billingKey, userId: 'user-1', amount: 9900, orderName: 'Monthly plan', orderId });
}

async function charges(orderId: string) {
  return (await sandbox.ledger()).filter((e) => e.type === 'CHARGE' && e.orderId === orderId);
}

describe('fault injection', () => {
  it('latency below the timeout: SUCCEEDED, one charge', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs: 250 });
    const orderId = 'latency-ok';
    // A client of its own whose timeout a loaded machine cannot reach first (the shared one gives up at 700 ms for
    // the timeout cases): below the timeout is the case under test, not a race with it.
    const patient = clientFor(sandbox.url, { timeoutMs: 10 * 60_000 });
    try {
      const result = await charge(orderId, patient);
      expect(result.outcome).toBe('SUCCEEDED');
      expect(result.durationMs).toBeGreaterThanOrEqual(250);
    } finally {
      patient.close();
    }
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('a timeout after the charge is booked: UNKNOWN with exactly one ledger entry', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'timeout' });
    const orderId = 'timeout-booked';
    const result = await charge(orderId);
    expect(result).toMatchObject({ outcome: 'UNKNOWN', reason: 'TIMEOUT' });
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('latency longer than the timeout: UNKNOWN, and the late charge is still booked', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs: 1200 });
    const orderId = 'latency-late';
    const result = await charge(orderId);
    expect(result).toMatchObject({ outcome: 'UNKNOWN', reason: 'TIMEOUT' });
    // The sandbox books the charge when its latency is over, after the client gave up.
    await waitFor('the late charge booked', async () => (await charges(orderId)).length > 0);
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('a decline with a given code: DECLINED, nothing charged', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'decline', code: 'INSUFFICIENT_BALANCE', message: 'limit exceeded' });
    const orderId = 'declined';
    const result = await charge(orderId);
    expect(result).toMatchObject({ outcome: 'DECLINED', code: 'INSUFFICIENT_BALANCE', message: 'limit exceeded', httpStatus: 400 });
    expect(await charges(orderId)).toHaveLength(0);
  });

  it('HTTP 500 before booking: UNKNOWN (the client cannot tell), nothing charged', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'http_500' });
    const orderId = 'http-500';
    expect(await charge(orderId)).toMatchObject({ outcome: 'UNKNOWN', reason: 'HTTP_5XX', httpStatus: 500 });
    expect(await charges(orderId)).toHaveLength(0);
  });

  it('HTTP 500 after booking: UNKNOWN, one charge', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true });
    const orderId = 'http-500-booked';
    expect(await charge(orderId)).toMatchObject({ outcome: 'UNKNOWN', reason: 'HTTP_5XX' });
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('a malformed body: UNKNOWN, one charge', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'malformed' });
    const orderId = 'malformed';
    const result = await charge(orderId);
    expect(result).toMatchObject({ outcome: 'UNKNOWN', reason: 'MALFORMED_BODY', httpStatus: 200 });
    expect(result.raw).toEqual({ text: expect.stringContaining('"code":"SUCCESS"') });
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('a truncated body: UNKNOWN, one charge', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'truncated' });
    const orderId = 'truncated';
    expect(await charge(orderId)).toMatchObject({ outcome: 'UNKNOWN', reason: 'TRUNCATED_BODY' });
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('a connection reset after the request was sent: UNKNOWN, nothing charged', async () => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'reset' });
    const orderId = 'reset';
    expect(await charge(orderId)).toMatchObject({ outcome: 'UNKNOWN', reason: 'CONNECTION_RESET' });
    expect(await charges(orderId)).toHaveLength(0);
  });

  it.each(['amount', 'orderId'] as const)('an approval answering a different %s: UNKNOWN, one charge', async (field) => {
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'mismatch', field });
    const orderId = `mismatch-${field}`;
    const result = await charge(orderId);
    expect(result).toMatchObject({ outcome: 'UNKNOWN', reason: field === 'amount' ? 'AMOUNT_MISMATCH' : 'ORDER_ID_MISMATCH' });
    expect(await charges(orderId)).toHaveLength(1);
  });

  it('a fault applies to its operation only and is used up', async () => {
    await sandbox.fault({ operation: 'CANCEL', kind: 'decline' });
    expect((await charge('untouched')).outcome).toBe('SUCCEEDED');
    await sandbox.fault({ kind: 'decline', count: 2 });
    expect((await charge('any-1')).outcome).toBe('DECLINED');
    expect((await charge('any-2')).outcome).toBe('DECLINED');
    expect((await charge('any-3')).outcome).toBe('SUCCEEDED');
  });

  it('connection refused: NOT_SENT, safe to send again with the same orderId', async () => {
    const nowhere = clientFor(`http://127.0.0.1:${await freePort()}`);
    const orderId = 'refused-then-sent';
    const refused = await nowhere.chargeBillingKey({ method: 'CARD', billingKey, userId: 'user-1', amount: 9900, orderName: 'Monthly plan', orderId });
    nowhere.close();
    expect(refused).toMatchObject({ outcome: 'NOT_SENT', reason: 'CONNECT_FAILED' });
    expect(refused.detail).toContain('ECONNREFUSED');
    expect((await charge(orderId)).outcome).toBe('SUCCEEDED');
    expect(await charges(orderId)).toHaveLength(1);
  });
});
