// Key rotation of the erasure vaults (docs/production.md "Billing keys at rest and key rotation"): `npm run
// keys:rotate` re-seals every vault not under the keyring's current key, as it re-encrypts the billing keys, so the old
// key can be dropped without losing the identities the law still needs. A vault is opened and sealed again under its
// own erasure's associated data (identity-vault.ts); a destroyed one (NULL) is left alone.
//
// Safe while the service runs: each row is rewritten with an optimistic update that applies only if it still holds
// the ciphertext that was read, so a concurrent rotation, or the retention pass destroying the vault meanwhile, is
// never overwritten (a destroyed vault is never brought back).
import type { Db } from '../../db/prisma.ts';
import type { Keyring } from '../../lib/crypto.ts';
import type { RotationResult } from '../billing-keys/billing-keys.service.ts';
import { openIdentity, sealIdentity } from './identity-vault.ts';

export async function resealIdentityVaults(db: Db, keyring: Keyring, options: { batchSize?: number } = {}): Promise<RotationResult> {
  const batchSize = options.batchSize ?? 200;
  // A vault still sealed, under another key than the current one (a destroyed vault is never read).
  const stale = { identityCiphertext: { not: null }, identityKeyId: { not: keyring.currentKeyId } };
  let rotated = 0;
  let skipped = 0;
  let afterId: string | undefined;
  for (;;) {
    const rows = await db.erasure.findMany({
      where: { ...stale, ...(afterId ? { id: { gt: afterId } } : {}) },
      orderBy: { id: 'asc' },
      take: batchSize,
      select: { id: true, identityKeyId: true, identityIv: true, identityTag: true, identityCiphertext: true },
    });
    if (rows.length === 0) break;
    for (const row of rows) {
      const { id, identityKeyId, identityIv, identityTag, identityCiphertext } = row;
      if (!identityKeyId || !identityIv || !identityTag || !identityCiphertext) continue;
      const identity = openIdentity(keyring, id, { identityKeyId, identityIv, identityTag, identityCiphertext });
      const updated = await db.erasure.updateMany({
        where: { id, identityKeyId, identityCiphertext: { equals: Uint8Array.from(identityCiphertext) } },
        data: sealIdentity(keyring, id, identity),
      });
      if (updated.count === 1) rotated += 1;
      else skipped += 1;
    }
    afterId = rows[rows.length - 1]!.id;
  }
  const remaining = await db.erasure.count({ where: stale });
  return { rotated, skipped, remaining };
}
