// Revealing an erased customer's identity (docs/operating.md "A customer asks to be forgotten"): GET
// /admin/erasures/:id/identity?reason= opens the vault for an operator who says why (a dispute, a tax inquiry, a
// court order: the purposes the kept records serve), and writes `erasure.identity_revealed` with the operator and the
// reason in the same transaction, before anything is answered: no reveal without its audit entry. The entry names the
// erasure and its pseudonym, never the identity itself. After `retainUntil` (vault-retention.ts) the identity is not
// shown even if the daily pass has not destroyed it yet: the purpose it was kept for has ended.
import type { Db } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Keyring } from '../../lib/crypto.ts';
import { defineError, NotFoundError } from '../../lib/errors.ts';
import { type Actor, writeAudit } from '../audit/audit.ts';
import { openIdentity, type SealedIdentity } from './identity-vault.ts';
import { isRetentionOver } from './vault-retention.ts';

export const IdentityPurgedError = defineError('IDENTITY_PURGED', 'The identity of this erasure is no longer kept (%s)', 410);

export const IDENTITY_REVEALED = 'erasure.identity_revealed';

export async function revealIdentity(deps: { db: Db; keyring: Keyring; clock: Clock }, erasureId: string, by: Actor): Promise<SealedIdentity> {
  const { db, keyring, clock } = deps;
  return db.$transaction(async (tx) => {
    // FOR SHARE: a retention pass running now skips this row (SKIP LOCKED) until the reveal is recorded.
    const [row] = await tx.$queryRaw<
      Array<{
        pseudonym: string;
        retainUntil: string;
        identityKeyId: string | null;
        identityIv: Uint8Array<ArrayBuffer> | null;
        identityTag: Uint8Array<ArrayBuffer> | null;
        identityCiphertext: Uint8Array<ArrayBuffer> | null;
        identityPurgedAt: Date | null;
      }>
    >`SELECT "pseudonym", "retainUntil", "identityKeyId", "identityIv", "identityTag", "identityCiphertext", "identityPurgedAt"
        FROM "erasures" WHERE "id" = ${erasureId}::uuid FOR SHARE`;
    if (!row) throw new NotFoundError('Erasure');
    const { identityKeyId, identityIv, identityTag, identityCiphertext } = row;
    if (row.identityPurgedAt) throw new IdentityPurgedError(`destroyed at ${row.identityPurgedAt.toISOString()}, after ${row.retainUntil}`);
    if (isRetentionOver(row.retainUntil, clock.now())) throw new IdentityPurgedError(`its retention ended after ${row.retainUntil}`);
    if (!identityKeyId || !identityIv || !identityTag || !identityCiphertext) throw new IdentityPurgedError('nothing was kept');
    const identity = openIdentity(keyring, erasureId, { identityKeyId, identityIv, identityTag, identityCiphertext });
    await writeAudit(tx, {
      ...by,
      action: IDENTITY_REVEALED,
      entityType: 'erasure',
      entityId: erasureId,
      after: { pseudonym: row.pseudonym, retainUntil: row.retainUntil },
    });
    return identity;
  });
}
