// Key rotation of the erasure vaults (npm run keys:rotate): every vault still sealed under an old key is re-sealed
// under the current one, opening with the new key alone to the same identity; a destroyed vault stays destroyed; a
// second run finds nothing; a vault changed under the rotation is not overwritten.
import { describe, expect, it } from 'vitest';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { openIdentity, type VaultColumns } from '../../../src/modules/erasure/identity-vault.ts';
import { resealIdentityVaults } from '../../../src/modules/erasure/reseal-identities.ts';
import { useTestDatabase } from '../../helpers/database.ts';
import { createErasure } from '../../helpers/erasure.ts';

const K0 = { id: 'k0', key: Buffer.alloc(32, 1) };
const K1 = { id: 'k1', key: Buffer.alloc(32, 2) };
const t = useTestDatabase();

const identityOf = (n: number) => ({ userId: `shop-user-${n}`, names: [`고객${n}`], phoneNumbers: [`0101234000${n}`] });
const vault = async (id: string) => (await t.db.erasure.findUniqueOrThrow({ where: { id } })) as unknown as VaultColumns & { identityPurgedAt: Date | null };

describe('resealIdentityVaults', () => {
  it('re-seals every vault under an old key with the current key, leaves destroyed and current ones alone, and finds nothing the second time', async () => {
    const old = createKeyring([K0]);
    const sealed = [];
    for (let n = 1; n <= 3; n++) sealed.push(await createErasure(t.db, { identity: identityOf(n), keyring: old }));
    const current = await createErasure(t.db, { identity: identityOf(4), keyring: createKeyring([K1]) });
    const destroyed = await createErasure(t.db, { sealed: false, overrides: { identityPurgedAt: new Date('2031-12-01T00:00:00Z') } });
    const currentBefore = await vault(current.id);

    const rotating = createKeyring([K1, K0]);
    // A batch smaller than the rows: the pass pages through them.
    expect(await resealIdentityVaults(t.db, rotating, { batchSize: 2 })).toEqual({ rotated: 3, skipped: 0, remaining: 0 });

    const newOnly = createKeyring([K1]);
    for (const [i, erasure] of sealed.entries()) {
      const row = await vault(erasure.id);
      expect(row.identityKeyId).toBe('k1');
      expect(openIdentity(newOnly, erasure.id, row)).toEqual(identityOf(i + 1));
      expect(() => openIdentity(old, erasure.id, row)).toThrow(/BILLING_KEY_UNREADABLE|not configured/);
    }
    // Already under the current key: not rewritten.
    expect(Buffer.from((await vault(current.id)).identityCiphertext).equals(Buffer.from(currentBefore.identityCiphertext))).toBe(true);
    // Destroyed: still nothing.
    expect(await vault(destroyed.id)).toMatchObject({ identityKeyId: null, identityCiphertext: null, identityPurgedAt: new Date('2031-12-01T00:00:00Z') });

    expect(await resealIdentityVaults(t.db, rotating)).toEqual({ rotated: 0, skipped: 0, remaining: 0 });
  });

  it('never brings back a vault the retention pass destroyed between the read and the write (skipped, still destroyed)', async () => {
    const erasure = await createErasure(t.db, { keyring: createKeyring([K0]) });
    // The interleaving made certain: the retention pass's write lands right after the rotation's read.
    const racing = t.db.$extends({
      query: {
        erasure: {
          async findMany({ args, query }) {
            const rows = await query(args);
            await t.db.erasure.update({
              where: { id: erasure.id },
              data: { identityKeyId: null, identityIv: null, identityTag: null, identityCiphertext: null, identityPurgedAt: new Date('2031-12-01T00:00:00Z') },
            });
            return rows;
          },
        },
      },
    });
    expect(await resealIdentityVaults(racing as unknown as typeof t.db, createKeyring([K1, K0]))).toEqual({ rotated: 0, skipped: 1, remaining: 0 });
    expect(await vault(erasure.id)).toMatchObject({ identityKeyId: null, identityCiphertext: null, identityPurgedAt: new Date('2031-12-01T00:00:00Z') });
  });

  it('keeps each vault bound to its own erasure: a re-sealed vault copied to another row does not open there', async () => {
    const [a, b] = [await createErasure(t.db, { keyring: createKeyring([K0]) }), await createErasure(t.db, { keyring: createKeyring([K0]) })];
    await resealIdentityVaults(t.db, createKeyring([K1, K0]));
    const rowA = await vault(a.id);
    expect(() => openIdentity(createKeyring([K1]), b.id, rowA)).toThrow(/authentication failed/);
  });

  it('reports a vault it cannot open (its key no longer configured) by throwing, rewriting nothing', async () => {
    const lost = { id: 'lost', key: Buffer.alloc(32, 3) };
    const erasure = await createErasure(t.db, { keyring: createKeyring([lost]) });
    const before = await vault(erasure.id);
    await expect(resealIdentityVaults(t.db, createKeyring([K1, K0]))).rejects.toThrow(/key id lost is not configured/);
    expect(Buffer.from((await vault(erasure.id)).identityCiphertext).equals(Buffer.from(before.identityCiphertext))).toBe(true);
  });
});
