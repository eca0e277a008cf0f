// The erasure vault (docs/operating.md "A customer asks to be forgotten"): the identity the kept payment records still
// need (the old userId, and the names and phone numbers removed from the live tables) sealed under the billing-key
// envelope (src/lib/crypto.ts: AES-256-GCM, the key id stored with the ciphertext, rotated with the billing keys by
// `npm run keys:rotate`). The associated data binds a vault to its erasure row: copied into another row, it does not
// open. Nothing else of the service ever holds the old identity after an erasure.
import type { Envelope, Keyring } from '../../lib/crypto.ts';

/** What the vault keeps of an erased customer. */
export interface SealedIdentity {
  userId: string;
  /** Every distinct name the live tables held for the customer (registrations, orders, gateway answers). */
  names: string[];
  /** Every distinct phone number, as stored (digits, or as the gateway or merchant wrote it). */
  phoneNumbers: string[];
}

/** The vault columns of an erasures row; all four are set, or all NULL once destroyed (a CHECK in the migration). */
export interface VaultColumns {
  identityKeyId: string;
  identityIv: Uint8Array<ArrayBuffer>;
  identityTag: Uint8Array<ArrayBuffer>;
  identityCiphertext: Uint8Array<ArrayBuffer>;
}

/** The associated data of an erasure's vault. */
export function erasureAad(erasureId: string): string {
  return `erasures:${erasureId}`;
}

export function sealIdentity(keyring: Keyring, erasureId: string, identity: SealedIdentity): VaultColumns {
  const envelope = keyring.encrypt(JSON.stringify(identity), erasureAad(erasureId));
  return {
    identityKeyId: envelope.keyId,
    identityIv: new Uint8Array(envelope.iv),
    identityTag: new Uint8Array(envelope.tag),
    identityCiphertext: new Uint8Array(envelope.ciphertext),
  };
}

/** Opens a sealed vault; throws BILLING_KEY_UNREADABLE (500) when its key is no longer configured or it was tampered with. */
export function openIdentity(keyring: Keyring, erasureId: string, vault: VaultColumns): SealedIdentity {
  const envelope: Envelope = {
    keyId: vault.identityKeyId,
    iv: Buffer.from(vault.identityIv),
    tag: Buffer.from(vault.identityTag),
    ciphertext: Buffer.from(vault.identityCiphertext),
  };
  return JSON.parse(keyring.decrypt(envelope, erasureAad(erasureId))) as SealedIdentity;
}
