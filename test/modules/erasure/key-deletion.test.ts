// The after-commit deletion of an erased customer's billing keys at their gateways (capabilities.keyDeletion;
// src/modules/erasure/key-deletion.ts), each key at its own gateway. Through the route against the Toss sandbox's
// deletion call: erasure.gateways.test.ts. Here the deleting adapter is a stub, for what the sandbox cannot produce: a
// call that throws (UNKNOWN), and answers of every outcome class recorded per key; a key that could not be decrypted
// is never sent, and a key whose gateway cannot delete keys is NOT_SUPPORTED beside one whose gateway can.
import { describe, expect, it } from 'vitest';
import type { GatewayAdapter, GatewayResult } from '../../../src/gateway/gateway.ts';
import { createSimulatedClock } from '../../../src/lib/clock.ts';
import { deleteKeysAtGateway, keyDeletionsAtCommit } from '../../../src/modules/erasure/key-deletion.ts';
import { useTestDatabase } from '../../helpers/database.ts';

const t = useTestDatabase();
const AT = new Date('2030-03-01T01:00:00.000Z');

const danal = { name: 'DANAL', capabilities: { keyDeletion: false } } as unknown as GatewayAdapter;

function deletingGateway(answers: Record<string, GatewayResult['outcome'] | 'throw'>, sent: string[]): GatewayAdapter {
  return {
    name: 'TOSS',
    capabilities: { keyDeletion: true },
    async deleteBillingKey({ billingKey, customerKey }: { billingKey: string; customerKey?: string }) {
      sent.push(`${billingKey} for ${customerKey}`);
      const outcome = answers[billingKey]!;
      if (outcome === 'throw') throw new Error('socket hang up');
      return {
        operation: 'DELETE_KEY',
        outcome,
        reason: 'APPROVED',
        code: outcome === 'DECLINED' ? 'NOT_FOUND_KEY' : 'SUCCESS',
        fields: { extra: {} },
        durationMs: 1,
      };
    },
  } as unknown as GatewayAdapter;
}

describe('deleting an erased customer’s keys at the gateway', () => {
  it('asks once per readable key after the commit and records each answer by outcome class', async () => {
    const sent: string[] = [];
    const toss = deletingGateway({ 'key-a': 'SUCCEEDED', 'key-b': 'DECLINED', 'key-c': 'throw' }, sent);
    const gateways = { gateway: danal, gateways: { DANAL: danal, TOSS: toss } };
    const keys = (['a', 'b', 'c', 'd'] as const).map((id) => ({
      billingKeyId: id,
      gateway: 'TOSS' as const,
      customerKey: `ck_${id}`,
      billingKey: id === 'd' ? null : `key-${id}`,
    }));
    const recorded = keyDeletionsAtCommit(gateways, [...keys.map((k) => ({ id: k.billingKeyId, gateway: k.gateway })), { id: 'e', gateway: 'DANAL' }], keys);
    expect(recorded.map((k) => k.outcome)).toEqual(['PENDING', 'PENDING', 'PENDING', 'UNREADABLE', 'NOT_SUPPORTED']);
    const erasure = await t.db.erasure.create({
      data: {
        pseudonym: 'erased_aaaaaaaaaaaaaaaaaaaa',
        status: 'COMPLETED',
        reason: 'r',
        actor: 'op',
        counts: {},
        erasedAt: AT,
        retainUntil: '2035-03-01',
        identityPurgedAt: AT,
        keyDeletions: recorded as never,
      },
    });

    const log = { info() {}, warn() {}, error() {} };
    await deleteKeysAtGateway({ db: t.db, clock: createSimulatedClock(AT), ...gateways, log }, erasure.id, keys, recorded);
    expect(sent).toEqual(['key-a for ck_a', 'key-b for ck_b', 'key-c for ck_c']);
    const row = await t.db.erasure.findUniqueOrThrow({ where: { id: erasure.id } });
    expect(row.keyDeletions).toEqual([
      { billingKeyId: 'a', outcome: 'DELETED', code: 'SUCCESS', at: AT.toISOString() },
      { billingKeyId: 'b', outcome: 'REFUSED', code: 'NOT_FOUND_KEY', at: AT.toISOString() },
      { billingKeyId: 'c', outcome: 'UNKNOWN', at: AT.toISOString() },
      { billingKeyId: 'd', outcome: 'UNREADABLE' },
      { billingKeyId: 'e', outcome: 'NOT_SUPPORTED' },
    ]);
    expect(JSON.stringify(row.keyDeletions)).not.toContain('key-');
  });

  it('records NOT_SUPPORTED for every key at a gateway that cannot delete keys, and calls nothing', async () => {
    const deps = { gateway: danal, gateways: { DANAL: danal } };
    expect(
      keyDeletionsAtCommit(
        deps,
        [
          { id: 'a', gateway: 'DANAL' },
          { id: 'b', gateway: 'TOSS' },
        ],
        [],
      ),
    ).toEqual([
      { billingKeyId: 'a', outcome: 'NOT_SUPPORTED' },
      { billingKeyId: 'b', outcome: 'NOT_SUPPORTED' },
    ]);
  });
});
