// A payment-method window whose key issuance had an unknown outcome: the gateway may have issued the key (and, for
// MOBILE, charged). A replay of the redirect calls issue-key again, and the gateway refuses the used transaction;
// that refusal must not be read as "nothing happened" (docs/architecture.md, invariant 4): the registration stays for an operator, like a new
// subscription's registration does, instead of FAILED.
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { subscribe } from '../../helpers/billing.ts';
import { decideWindow, follow, sandboxFault } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';

const running = useRunningApp();

describe('a payment-method window replayed after an unknown key issuance', () => {
  it('stays NEEDS_ATTENTION when the replay is declined, and answers PAYMENT_OUTCOME_UNKNOWN', async () => {
    const { app } = running;
    const id = await subscribe(app, { amount: 9900 });
    const created = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/payment-method`, headers: apiHeaders, payload: {} });
    expect(created.statusCode, created.body).toBe(201);
    const registration = created.json() as { id: string; window: Parameters<typeof decideWindow>[1] };
    const window = await decideWindow(app, registration.window);

    // The gateway books the key but answers 500: the outcome is unknown.
    await sandboxFault(app, { operation: 'ISSUE_KEY', kind: 'http_500', booked: true });
    const first = await follow(app, window.redirectUrl, { json: true });
    expect(first.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const read = async () => (await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders })).json();
    expect(await read()).toMatchObject({ status: 'NEEDS_ATTENTION', failureCode: 'PAYMENT_OUTCOME_UNKNOWN' });

    // The replay: the gateway refuses the transaction it already used.
    const replay = await follow(app, window.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect(await read()).toMatchObject({ status: 'NEEDS_ATTENTION', failureCode: 'PAYMENT_OUTCOME_UNKNOWN' });
  });
});
