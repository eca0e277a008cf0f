// The billing keys of an erased customer at their gateways (docs/operating.md "A customer asks to be forgotten"): ours
// are revoked and their ciphertext destroyed inside the erasure's transaction; after its commit, each key's own gateway
// (billing_keys.gateway, through gatewayFor) is asked to delete it where its adapter can (capabilities.keyDeletion,
// deleteBillingKey with the key and its customerKey), and what it answered is recorded in the erasure's keyDeletions.
// A key whose gateway cannot delete keys (Danal documents no deletion call; Toss without TOSS_KEY_DELETION) is recorded
// as NOT_SUPPORTED: the key is dead on our side, since nothing can ever decrypt it again. The decrypted key lives only
// in memory between the read (before the ciphertext is destroyed) and the call; it is never logged nor stored.
import type { GatewayName, GatewayResult } from '../../gateway/gateway.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
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
  /** The gateway that issued it, which is asked to delete it. */
  gateway: GatewayName;
  /** The customer reference the gateway bound the key to (Toss's customerKey), if any. */
  customerKey: string | null;
  /** The decrypted key, or null when it could not be decrypted. */
  billingKey: string | null;
}

type GatewayDeps = Pick<ServiceDeps, 'gateway' | 'gateways'>;

/** Whether the gateway of a key deletes keys on request: only such keys are decrypted and sent. */
export function deletableAtGateway(deps: GatewayDeps, key: { gateway: GatewayName }): boolean {
  return gatewayFor(deps, key.gateway).capabilities.keyDeletion;
}

/** keyDeletions as the transaction records them, before any call: per key, by its own gateway's capability. */
export function keyDeletionsAtCommit(deps: GatewayDeps, keys: ReadonlyArray<{ id: string; gateway: GatewayName }>, toDelete: KeyToDelete[]): KeyDeletion[] {
  const decrypted = new Map(toDelete.map((key) => [key.billingKeyId, key.billingKey]));
  return keys.map((key) => {
    if (!deletableAtGateway(deps, key)) return { billingKeyId: key.id, outcome: 'NOT_SUPPORTED' };
    return { billingKeyId: key.id, outcome: (decrypted.get(key.id) ?? null) === null ? 'UNREADABLE' : 'PENDING' };
  });
}

const OUTCOMES: Record<GatewayResult['outcome'], KeyDeletionOutcome> = { SUCCEEDED: 'DELETED', DECLINED: 'REFUSED', NOT_SENT: 'NOT_SENT', UNKNOWN: 'UNKNOWN' };

/** After the commit: asks each key's gateway to delete it and records the answers. Never throws: the erasure is done. */
export async function deleteKeysAtGateway(
  deps: Pick<ServiceDeps, 'db' | 'clock' | 'gateway' | 'gateways' | 'log'>,
  erasureId: string,
  keys: KeyToDelete[],
  recorded: KeyDeletion[],
): Promise<void> {
  const answers = new Map<string, KeyDeletion>();
  for (const key of keys) {
    const adapter = gatewayFor(deps, key.gateway);
    if (key.billingKey === null || !adapter.capabilities.keyDeletion || !adapter.deleteBillingKey) continue;
    const at = deps.clock.now().toISOString();
    try {
      const result = await adapter.deleteBillingKey({ billingKey: key.billingKey, ...(key.customerKey ? { customerKey: key.customerKey } : {}) });
      answers.set(key.billingKeyId, { billingKeyId: key.billingKeyId, outcome: OUTCOMES[result.outcome], code: result.code, at });
    } catch {
      answers.set(key.billingKeyId, { billingKeyId: key.billingKeyId, outcome: 'UNKNOWN', at });
    }
  }
  if (answers.size === 0) return;
  const keyDeletions = recorded.map((entry) => answers.get(entry.billingKeyId) ?? entry);
  try {
    await deps.db.erasure.update({ where: { id: erasureId }, data: { keyDeletions: keyDeletions as never } });
  } catch (error) {
    deps.log.error({ erasureId, err: error }, 'the gateway’s answers to the key deletions could not be recorded');
  }
}
