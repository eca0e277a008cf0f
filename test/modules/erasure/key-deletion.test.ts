// The after-commit deletion of an erased customer's billing keys at a gateway that can delete them
// (capabilities.keyDeletion; src/modules/erasure/key-deletion.ts). No gateway on this branch can (Danal documents no
// deletion call: NOT_SUPPORTED, covered through the route in erasure.routes.test.ts), so the adapter here is a stub:
// the one fault the sandbox cannot produce is a gateway that deletes keys. Its answers are recorded per key by
// outcome class; a call that throws is UNKNOWN; a key that could not be decrypted is never sent.
import { describe, expect, it } from 'vitest';
import type { GatewayAdapter, GatewayResult } from '../../../src/gateway/gateway.ts';
import { createSimulatedClock } from '../../../src/lib/clock.ts';
import { deleteKeysAtGateway, keyDeletionsAtCommit } from '../../../src/modules/erasure/key-deletion.ts';
import { useTestDatabase } from '../../helpers/database.ts';

const t = useTestDatabase();
const AT = new Date('2030-03-01T01:00:00.000Z');

function deletingGateway(answers: Record<string, GatewayResult['outcome'] | 'throw'>, sent: string[]): GatewayAdapter {
  return {
    name: 'TOSS',
    capabilities: { keyDeletion: true },
    async deleteBillingKey({ billingKey }: { billingKey: string }) {
      sent.push(billingKey);
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
    const gateway = deletingGateway({ 'key-a': 'SUCCEEDED', 'key-b': 'DECLINED', 'key-c': 'throw' }, sent);
    const keys = [
      { billingKeyId: 'a', billingKey: 'key-a' },
      { billingKeyId: 'b', billingKey: 'key-b' },
      { billingKeyId: 'c', billingKey: 'key-c' },
      { billingKeyId: 'd', billingKey: null },
    ];
    const recorded = keyDeletionsAtCommit(
      gateway,
      keys.map((k) => ({ id: k.billingKeyId })),
      keys,
    );
    expect(recorded.map((k) => k.outcome)).toEqual(['PENDING', 'PENDING', 'PENDING', 'UNREADABLE']);
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
    await deleteKeysAtGateway({ db: t.db, clock: createSimulatedClock(AT), gateway, log }, erasure.id, keys, recorded);
    expect(sent).toEqual(['key-a', 'key-b', 'key-c']);
    const row = await t.db.erasure.findUniqueOrThrow({ where: { id: erasure.id } });
    expect(row.keyDeletions).toEqual([
      { billingKeyId: 'a', outcome: 'DELETED', code: 'SUCCESS', at: AT.toISOString() },
      { billingKeyId: 'b', outcome: 'REFUSED', code: 'NOT_FOUND_KEY', at: AT.toISOString() },
      { billingKeyId: 'c', outcome: 'UNKNOWN', at: AT.toISOString() },
      { billingKeyId: 'd', outcome: 'UNREADABLE' },
    ]);
    expect(JSON.stringify(row.keyDeletions)).not.toContain('key-');
  });

  it('records NOT_SUPPORTED for every key at a gateway that cannot delete keys, and calls nothing', async () => {
    const gateway = { name: 'DANAL', capabilities: { keyDeletion: false } } as unknown as GatewayAdapter;
    expect(keyDeletionsAtCommit(gateway, [{ id: 'a' }, { id: 'b' }], [])).toEqual([
      { billingKeyId: 'a', outcome: 'NOT_SUPPORTED' },
      { billingKeyId: 'b', outcome: 'NOT_SUPPORTED' },
    ]);
  });
});
