// Billing keys at rest (docs/architecture.md, invariant 8): AES-256-GCM with a random 96-bit IV per encryption, the key id
// stored beside the ciphertext so keys can rotate (the first configured key encrypts, every configured key
// decrypts), and associated data binding the ciphertext to its row: a ciphertext copied into another row fails
// authentication instead of decrypting.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { defineError } from './errors.ts';

export const BillingKeyUnreadableError = defineError('BILLING_KEY_UNREADABLE', 'The stored billing key cannot be decrypted (%s)', 500);

/** One configured encryption key (BILLING_KEY_ENCRYPTION_KEYS: `keyId:base64(32 bytes)`). */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface Envelope {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

export interface Keyring {
  readonly currentKeyId: string;
  encrypt(plaintext: string, associatedData: string): Envelope;
  decrypt(envelope: Envelope, associatedData: string): string;
}

/** The associated data of a billing key row. */
export function billingKeyAad(rowId: string): string {
  return `billing_keys:${rowId}`;
}

export function createKeyring(keys: EncryptionKey[]): Keyring {
  if (keys.length === 0) throw new Error('no billing-key encryption key is configured');
  // As KeyObjects made once: given the raw bytes, each cipher made its own KeyObject, several times the cost of the
  // decryption itself (one per charge; docs/benchmarks.md "Measurements behind choices in the code").
  const byId = new Map(keys.map((k) => [k.id, createSecretKey(k.key)]));
  const current = keys[0]!;
  const currentKey = byId.get(current.id)!;
  return {
    currentKeyId: current.id,
    encrypt(plaintext, associatedData) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return { keyId: current.id, iv, tag: cipher.getAuthTag(), ciphertext };
    },
    decrypt(envelope, associatedData) {
      const key = byId.get(envelope.keyId);
      if (!key) throw new BillingKeyUnreadableError(`key id ${envelope.keyId} is not configured`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, envelope.iv);
        decipher.setAAD(Buffer.from(associatedData, 'utf8'));
        decipher.setAuthTag(envelope.tag);
        return Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString('utf8');
      } catch {
        throw new BillingKeyUnreadableError('authentication failed');
      }
    },
  };
}
