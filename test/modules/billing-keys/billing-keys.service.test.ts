import { createCipheriv, createDecipheriv } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { billingKeyAad, createKeyring } from '../../../src/lib/crypto.ts';
import { readBillingKey, rotateBillingKeys, storeBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { useTestDatabase } from '../../helpers/database.ts';
import { createRegistration } from '../../factories/index.ts';

const K0 = { id: 'k0', key: Buffer.alloc(32, 1) };
const K1 = { id: 'k1', key: Buffer.alloc(32, 2) };

const t = useTestDatabase();

async function storeKeys(count: number, keyring = createKeyring([K0])) {
  const stored: Array<{ id: string; plaintext: string }> = [];
  for (let i = 0; i < count; i += 1) {
    const registration = await createRegistration(t.db);
    const plaintext = `BK_PLAINTEXT_${i}_${registration.id.slice(0, 6)}`;
    const row = await t.db.$transaction((tx) =>
      storeBillingKey(tx, keyring, { registrationId: registration.id, userId: 'u', method: 'CARD', fields: { billingKey: plaintext, extra: {} } }),
    );
    stored.push({ id: row.id, plaintext });
  }
  return stored;
}

describe('billing key encryption at rest', () => {
  it('stores ciphertext with a fresh IV per key and the key id, never the plaintext', async () => {
    const [a, b] = await storeKeys(2);
    const rows = await t.db.billingKey.findMany({ orderBy: { createdAt: 'asc' } });
    expect(rows.map((r) => r.encryptionKeyId)).toEqual(['k0', 'k0']);
    expect(Buffer.from(rows[0]!.keyIv).equals(Buffer.from(rows[1]!.keyIv))).toBe(false);
    for (const row of rows) expect(Buffer.from(row.keyCiphertext).toString('latin1')).not.toContain('BK_PLAINTEXT');
    const keyring = createKeyring([K0]);
    expect(rows.map((r) => readBillingKey(keyring, r)).sort()).toEqual([a!.plaintext, b!.plaintext].sort());
  });

  it('twin: reads what AES-256-GCM with the raw key bytes wrote (every key stored so far), and writes what it reads', () => {
    const keyring = createKeyring([K0, K1]);
    const aad = billingKeyAad('4f7c1a52-1f0e-4c55-9d6a-0b4c1f9a2e01');
    // Written as the keyring wrote before it made KeyObjects: the configured bytes given to the cipher.
    const iv = Buffer.alloc(12, 7);
    const cipher = createCipheriv('aes-256-gcm', K1.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update('BK_WRITTEN_WITH_RAW_BYTES', 'utf8'), cipher.final()]);
    expect(keyring.decrypt({ keyId: 'k1', iv, tag: cipher.getAuthTag(), ciphertext }, aad)).toBe('BK_WRITTEN_WITH_RAW_BYTES');
    const envelope = keyring.encrypt('BK_WRITTEN_BY_THE_KEYRING', aad);
    expect(envelope.keyId).toBe('k0');
    const decipher = createDecipheriv('aes-256-gcm', K0.key, envelope.iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(envelope.tag);
    expect(Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString('utf8')).toBe('BK_WRITTEN_BY_THE_KEYRING');
  });

  it('refuses a ciphertext copied to another row, and a key id that is not configured', async () => {
    const [a, b] = await storeKeys(2);
    const rowA = await t.db.billingKey.findUniqueOrThrow({ where: { id: a!.id } });
    await t.db.billingKey.update({ where: { id: b!.id }, data: { keyIv: rowA.keyIv, keyTag: rowA.keyTag, keyCiphertext: rowA.keyCiphertext } });
    const rowB = await t.db.billingKey.findUniqueOrThrow({ where: { id: b!.id } });
    expect(() => readBillingKey(createKeyring([K0]), rowB)).toThrow(/authentication failed/);
    expect(() => readBillingKey(createKeyring([K1]), rowA)).toThrow(/k0 is not configured/);
  });
});

describe('rotateBillingKeys', () => {
  it('re-encrypts every key under the first key; afterwards the old key can be dropped', async () => {
    const stored = await storeKeys(5);
    const result = await rotateBillingKeys(t.db, createKeyring([K1, K0]), { batchSize: 2 });
    expect(result).toEqual({ rotated: 5, skipped: 0, remaining: 0 });
    const onlyNew = createKeyring([K1]);
    for (const { id, plaintext } of stored) {
      const row = await t.db.billingKey.findUniqueOrThrow({ where: { id } });
      expect(row.encryptionKeyId).toBe('k1');
      expect(readBillingKey(onlyNew, row)).toBe(plaintext);
    }
    expect(await rotateBillingKeys(t.db, createKeyring([K1, K0]))).toEqual({ rotated: 0, skipped: 0, remaining: 0 });
  });

  it('two rotations at once rewrite each row once and lose nothing', async () => {
    const stored = await storeKeys(8);
    const keyring = createKeyring([K1, K0]);
    const [first, second] = await Promise.all([rotateBillingKeys(t.db, keyring, { batchSize: 3 }), rotateBillingKeys(t.db, keyring, { batchSize: 3 })]);
    expect(first.rotated + second.rotated).toBe(8);
    expect(first.remaining + second.remaining).toBe(0);
    for (const { id, plaintext } of stored) {
      expect(readBillingKey(createKeyring([K1]), await t.db.billingKey.findUniqueOrThrow({ where: { id } }))).toBe(plaintext);
    }
  });
});
