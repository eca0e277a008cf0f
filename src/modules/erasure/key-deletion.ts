// The billing keys of an erased customer at the gateway (docs/operating.md "A customer asks to be forgotten"): ours are
// revoked and their ciphertext destroyed inside the erasure's transaction; after its commit, a gateway whose adapter can
// delete keys (capabilities.keyDeletion, deleteBillingKey) is asked to, and what it answered is recorded in the
// erasure's keyDeletions. A gateway without it (Danal documents no deletion call) is recorded as NOT_SUPPORTED: the
// key is dead on our side, since nothing can ever decrypt it again. The decrypted key lives only in memory between the
// read (before the ciphertext is destroyed) and the call; it is never logged nor stored.
import type { GatewayAdapter, GatewayResult } from '../../gateway/gateway.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';

/**
 * NOT_SUPPORTED: the gateway cannot delete keys. PENDING: to be asked after the commit (a crash in between leaves it
 * so). DELETED, REFUSED (a decline), NOT_SENT, UNKNOWN: the gateway's answer's outcome class. UNREADABLE: the key
 * could not be decrypted to be sent (its encryption key is no longer configured).
 */
export type KeyDeletionOutcome = 'NOT_SUPPORTED' | 'PENDING' | 'DELETED' | 'REFUSED' | 'NOT_SENT' | 'UNKNOWN' | 'UNREADABLE';

export interface KeyDeletion {
  billingKeyId: string;
  outcome: KeyDeletionOutcome;
  /** The gateway's code, when it answered one. */
  code?: string;
  /** When the gateway was asked (the service's clock). */
  at?: string;
}

export interface KeyToDelete {
  billingKeyId: string;
  /** The decrypted key, or null when it could not be decrypted. */
  billingKey: string | null;
}

/** keyDeletions as the transaction records them, before any call. */
export function keyDeletionsAtCommit(gateway: GatewayAdapter, keys: ReadonlyArray<{ id: string }>, toDelete: KeyToDelete[]): KeyDeletion[] {
  if (!gateway.capabilities.keyDeletion) return keys.map((key) => ({ billingKeyId: key.id, outcome: 'NOT_SUPPORTED' }));
  return toDelete.map((key) => ({ billingKeyId: key.billingKeyId, outcome: key.billingKey === null ? 'UNREADABLE' : 'PENDING' }));
}

const OUTCOMES: Record<GatewayResult['outcome'], KeyDeletionOutcome> = { SUCCEEDED: 'DELETED', DECLINED: 'REFUSED', NOT_SENT: 'NOT_SENT', UNKNOWN: 'UNKNOWN' };

/** After the commit: asks the gateway to delete each key and records the answers. Never throws: the erasure is done. */
export async function deleteKeysAtGateway(
  deps: Pick<ServiceDeps, 'db' | 'clock' | 'gateway' | 'log'>,
  erasureId: string,
  keys: KeyToDelete[],
  recorded: KeyDeletion[],
): Promise<void> {
  const remove = deps.gateway.deleteBillingKey?.bind(deps.gateway);
  const due = keys.filter((key) => key.billingKey !== null);
  if (!remove || due.length === 0) return;
  const answers = new Map<string, KeyDeletion>();
  for (const key of due) {
    const at = deps.clock.now().toISOString();
    try {
      const result = await remove({ billingKey: key.billingKey! });
      answers.set(key.billingKeyId, { billingKeyId: key.billingKeyId, outcome: OUTCOMES[result.outcome], code: result.code, at });
    } catch {
      answers.set(key.billingKeyId, { billingKeyId: key.billingKeyId, outcome: 'UNKNOWN', at });
    }
  }
  const keyDeletions = recorded.map((entry) => answers.get(entry.billingKeyId) ?? entry);
  try {
    await deps.db.erasure.update({ where: { id: erasureId }, data: { keyDeletions: keyDeletions as never } });
  } catch (error) {
    deps.log.error({ erasureId, err: error }, 'the gateway’s answers to the key deletions could not be recorded');
  }
}
