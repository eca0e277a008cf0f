// Erasure rows for the vault's tests, made directly (the erase transaction is another module's): a row as the erasure
// leaves it, its identity sealed with the service's own sealIdentity under the given keyring.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/prisma.ts';
import type { Prisma } from '../../src/generated/prisma/client.ts';
import { createKeyring, type Keyring } from '../../src/lib/crypto.ts';
import { sealIdentity, type SealedIdentity } from '../../src/modules/erasure/identity-vault.ts';
import { TEST_ENCRYPTION_KEYS } from './app.ts';

/** The keyring of the test app (TEST_ENCRYPTION_KEYS). */
export function testKeyring(): Keyring {
  const [id, key] = TEST_ENCRYPTION_KEYS.split(':') as [string, string];
  return createKeyring([{ id, key: Buffer.from(key, 'base64') }]);
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const pseudonymOf = () => `erased_${[...randomBytes(20)].map((b) => BASE32[b % 32]).join('')}`;

export interface ErasureFactoryInput {
  identity?: SealedIdentity;
  /** Korea date, YYYY-MM-DD. */
  retainUntil?: string;
  erasedAt?: Date;
  keyring?: Keyring;
  /** No vault at all (nothing was kept). */
  sealed?: boolean;
  overrides?: Partial<Prisma.ErasureUncheckedCreateInput>;
}

export async function createErasure(db: Db, input: ErasureFactoryInput = {}) {
  const id = randomUUID();
  const identity = input.identity ?? { userId: `user_${randomBytes(4).toString('hex')}`, names: ['홍길동'], phoneNumbers: ['010-1234-5678'] };
  const vault = input.sealed === false ? {} : sealIdentity(input.keyring ?? testKeyring(), id, identity);
  return db.erasure.create({
    data: {
      id,
      pseudonym: pseudonymOf(),
      status: 'COMPLETED',
      reason: '고객 요청 (상담 #5100)',
      actor: 'admin:alice',
      counts: { subscriptions: 1, payments: 2, registrations: 1, orders: 0, billingKeys: 1, events: 5 },
      erasedAt: input.erasedAt ?? new Date(),
      retainUntil: input.retainUntil ?? '2031-11-30',
      keyDeletions: [],
      ...vault,
      ...input.overrides,
    },
  });
}
