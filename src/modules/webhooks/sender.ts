// Sending one delivery (docs/api.md "Events and webhooks", Standard Webhooks): a POST of the event, signed with every live
// secret of the endpoint, stamped with the real time of sending (never the simulated clock), bounded by
// WEBHOOK_TIMEOUT_MS. Redirects are not followed: undici's request answers a 3xx as it is, and a 3xx is not a 2xx.
import { request } from 'undici';
import type { Keyring } from '../../lib/crypto.ts';
import type { Claimed } from './claims.ts';
import { isLive, openSecret, signatureHeader } from './secrets.ts';

/** The endpoint's answer, or why there was none. */
export interface SendResult {
  status?: number;
  error?: string;
}

export function createSender(deps: { keyring: Keyring; timeoutMs: number; wallClock: () => Date }) {
  const { keyring, timeoutMs, wallClock } = deps;

  /** Signers by endpoint, rebuilt when its stored secrets change (a rotation); decrypting per request is waste. */
  const signers = new Map<string, { stored: string; secrets: Array<{ secret: string; expiresAt: string | null }> }>();
  function secretsOf(claimed: Claimed, now: Date): string[] {
    const stored = JSON.stringify(claimed.secrets);
    let entry = signers.get(claimed.endpointId);
    if (!entry || entry.stored !== stored) {
      entry = { stored, secrets: claimed.secrets.map((s) => ({ secret: openSecret(keyring, claimed.endpointId, s), expiresAt: s.expiresAt })) };
      signers.set(claimed.endpointId, entry);
    }
    return entry.secrets.filter((s) => isLive(s, now)).map((s) => s.secret);
  }

  return async function send(claimed: Claimed, body: string): Promise<SendResult> {
    const timestamp = wallClock();
    try {
      const response = await request(claimed.url, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'merchant-billing-webhooks/1',
          'webhook-id': claimed.id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signatureHeader(secretsOf(claimed, timestamp), claimed.id, timestamp, body),
        },
      });
      await response.body.dump().catch(() => undefined);
      return { status: response.statusCode };
    } catch (error) {
      const e = error as Error & { code?: string };
      const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : (e.code ?? e.message);
      return { error: reason.slice(0, 200) };
    }
  };
}
