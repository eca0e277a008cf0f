// Drives the customer's side of a checkout: the sandbox window's decision (through its JSON call), then the
// redirect back to our success or fail route, exactly as the browser would follow it.
import type { App } from '../../src/app.ts';
import type { WindowParams } from '../../src/modules/shared/terms.ts';
import { apiHeaders } from './app.ts';
import { waitFor } from './service.ts';

export async function decideWindow(app: App, window: WindowParams, decision: 'approve' | 'decline' = 'approve', extra: Record<string, unknown> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/sandbox/window/authorize',
    payload: { ...window, userId: window.userId ?? 'guest', amount: String(window.amount), issueKeyOnly: String(window.issueKeyOnly), decision, ...extra },
  });
  if (response.statusCode !== 200) throw new Error(`window answered ${response.statusCode}: ${response.body}`);
  return response.json() as { transactionId?: string; redirectUrl: string; fields: Record<string, string> };
}

/** Follows a redirect URL to our app, as GET (query) or as a form POST; JSON or browser mode. */
export function follow(app: App, redirectUrl: string, options: { json?: boolean; form?: boolean } = {}) {
  const url = new URL(redirectUrl);
  const headers: Record<string, string> = options.json ? { accept: 'application/json' } : { accept: 'text/html' };
  if (options.form) {
    const state = url.searchParams.get('state')!;
    const fields = new URLSearchParams(url.searchParams);
    fields.delete('state');
    return app.inject({
      method: 'POST',
      url: `${url.pathname}?state=${encodeURIComponent(state)}`,
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: fields.toString(),
    });
  }
  return app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers });
}

export async function createRegistration(app: App, body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/api/v1/registrations', headers: apiHeaders, payload: body });
  if (response.statusCode !== 201) throw new Error(`registration answered ${response.statusCode}: ${response.body}`);
  return response.json() as {
    id: string;
    state: string;
    status: string;
    orderId: string;
    successUrl: string;
    failUrl: string;
    expiresAt: string;
    window: WindowParams;
  };
}

export async function sandboxLedger(app: App) {
  return (await app.inject({ method: 'GET', url: '/sandbox/_control/ledger' })).json().entries as Array<{
    type: string;
    amount: number;
    orderId?: string;
    operation: string;
    transactionId: string;
    /** A cancellation's: the transaction it cancels. */
    originalTransactionId?: string;
    at: string;
  }>;
}

/** Queues a sandbox fault; answers it with its id (for sandboxRelease). */
export async function sandboxFault(app: App, spec: Record<string, unknown>): Promise<{ id: number }> {
  const response = await app.inject({ method: 'POST', url: '/sandbox/_control/faults', payload: spec });
  if (response.statusCode !== 201) throw new Error(`fault answered ${response.statusCode}: ${response.body}`);
  return response.json();
}

/** Waits until `count` calls are held by faults with until 'released' (they have arrived at the sandbox). */
export async function sandboxHeld(app: App, count = 1): Promise<void> {
  await waitFor(`${count} gateway call(s) held by the sandbox`, async () => {
    const response = await app.inject({ method: 'GET', url: '/sandbox/_control/held' });
    return (response.json().held as unknown[]).length >= count;
  });
}

/** Lets the held calls (of one fault, or all) go on; how many were held. */
export async function sandboxRelease(app: App, faultId?: number): Promise<number> {
  const response = await app.inject({ method: 'POST', url: '/sandbox/_control/release', payload: faultId === undefined ? {} : { faultId } });
  if (response.statusCode !== 200) throw new Error(`release answered ${response.statusCode}: ${response.body}`);
  return response.json().released;
}
