// Webhook signing secrets (docs/api.md "Events and webhooks"): `whsec_` + padded standard base64 of 32 random bytes, kept encrypted
// with the billing-key envelope (src/lib/crypto.ts) bound to the endpoint's row, and signed per Standard Webhooks
// with the `standardwebhooks` package (the specification's reference implementation).
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Keyring } from '../../lib/crypto.ts';

/** One stored secret; the newest first. `expiresAt` is set on the old ones by a rotation. */
export interface StoredSecret {
  keyId: string;
  iv: string;
  tag: string;
  ciphertext: string;
  expiresAt: string | null;
}

const aad = (endpointId: string) => `webhook_endpoints:${endpointId}`;

export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sealSecret(keyring: Keyring, endpointId: string, secret: string, expiresAt: Date | null = null): StoredSecret {
  const envelope = keyring.encrypt(secret, aad(endpointId));
  return {
    keyId: envelope.keyId,
    iv: envelope.iv.toString('base64'),
    tag: envelope.tag.toString('base64'),
    ciphertext: envelope.ciphertext.toString('base64'),
    expiresAt: expiresAt?.toISOString() ?? null,
  };
}

export function openSecret(keyring: Keyring, endpointId: string, stored: StoredSecret): string {
  return keyring.decrypt(
    { keyId: stored.keyId, iv: Buffer.from(stored.iv, 'base64'), tag: Buffer.from(stored.tag, 'base64'), ciphertext: Buffer.from(stored.ciphertext, 'base64') },
    aad(endpointId),
  );
}

/** Whether a secret still signs at `now`: the current one, or an old one during a rotation's overlap. */
export function isLive(secret: { expiresAt: string | null }, now: Date): boolean {
  return secret.expiresAt === null || new Date(secret.expiresAt) > now;
}

/** The secrets that still sign at `now`. */
export function liveSecrets(stored: StoredSecret[], now: Date): StoredSecret[] {
  return stored.filter((s) => isLive(s, now));
}

/** The `webhook-signature` header: one `v1,<base64>` per live secret, space-separated. */
export function signatureHeader(secrets: string[], messageId: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, body)).join(' ');
}
