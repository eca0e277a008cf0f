// The idempotency of the console's actions:
// - a form submitted twice while its first submit is still acting (a double click on "Refund" while the gateway is
//   slow): the second waits for the first and answers like it, a redirect to the payment, instead of an error page
//   saying the action is in progress when it in fact succeeded; the gateway is asked once;
// - an action runs under its admin route's idempotency scope and stores what that route would have answered: the
//   admin route, sent the same request with the form's key, replays it as its own (201 for the routes that create).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { adminHeaders, paymentsOf, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault, sandboxHeld, sandboxLedger, sandboxRelease } from '../../helpers/checkout.ts';
import { TEST_ADMIN_TOKEN } from '../../helpers/app.ts';
import { consoleCookie, formFields } from '../../helpers/console.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { overlapped } from '../../helpers/locks.ts';
import { waitFor } from '../../helpers/service.ts';

const running = useRunningApp({ CLOCK: 'simulated' });

describe('a console form submitted twice at once', () => {
  it('refunds once, and both submits answer the redirect to the payment', async () => {
    const id = await subscribe(running.app, { amount: 9_900 });
    const [payment] = await paymentsOf(running.app, id);
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const page = await running.app.inject({ method: 'GET', url: `/console/payments/${payment!.id}`, headers: { cookie } });
    const action = `/console/payments/${payment!.id}/refund`;
    const form = formFields(page.body, action);
    expect(form.idempotencyKey).not.toBe('');
    // The refund's call is held at the sandbox until the second submit has found the first still acting.
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'latency', until: 'released', count: 1 });

    const submit = () =>
      running.app.inject({
        method: 'POST',
        url: action,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ ...form, amount: '', reason: 'customer asked twice' }).toString(),
      });
    // The second submit starts once the first holds its idempotency record (a lock on the table).
    const answering = overlapped(running.databaseUrl, 'idempotency_records', 2, () => [submit(), submit()]);
    await sandboxHeld(running.app);
    // The second submit, refused the key, reads the first's record (IN_PROGRESS) and waits: its read is a backend's
    // latest statement (pg_stat_activity keeps it while the connection is idle), repeated while it waits.
    const watcher = new pg.Client({ connectionString: running.databaseUrl });
    await watcher.connect();
    try {
      await waitFor('the second submit reading the first’s record', async () => {
        const { rows } = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'SELECT%idempotency_records%'`,
        );
        return rows[0]!.n > 0;
      });
    } finally {
      await watcher.end();
    }
    await sandboxRelease(running.app);
    const answers = await answering;

    expect(answers.map((a) => [a.statusCode, a.headers.location])).toEqual([
      [303, `/console/payments/${payment!.id}?done=refund`],
      [303, `/console/payments/${payment!.id}?done=refund`],
    ]);
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([9_900]);
    const shown = await running.app.inject({ method: 'GET', url: `/admin/payments/${payment!.id}`, headers: adminHeaders });
    expect(shown.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 9_900 });
  });
});

const form = (html: string, action: string, fields: Record<string, string>) => new URLSearchParams({ ...formFields(html, action), ...fields }).toString();

describe('a console action and its admin route share one idempotency record', () => {
  const consolePost = async (pageUrl: string, action: string, fields: Record<string, string>) => {
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const page = await running.app.inject({ method: 'GET', url: pageUrl, headers: { cookie } });
    const payload = form(page.body, action, fields);
    const answer = await running.app.inject({
      method: 'POST',
      url: action,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    });
    expect(answer.statusCode, answer.body.slice(0, 300)).toBe(303);
    return new URLSearchParams(payload).get('idempotencyKey')!;
  };

  it('an external refund recorded in the console replays through POST /admin/payments/:id/refunds/external as 201', async () => {
    const id = await subscribe(running.app, { amount: 30_000 });
    const [payment] = await paymentsOf(running.app, id);
    const key = await consolePost(`/console/payments/${payment!.id}`, `/console/payments/${payment!.id}/external-refund`, {
      amount: '10,000',
      reference: 'bank transfer 77',
      reason: 'refunded by bank transfer',
    });

    const replay = await running.app.inject({
      method: 'POST',
      url: `/admin/payments/${payment!.id}/refunds/external`,
      headers: { ...adminHeaders, 'idempotency-key': key },
      payload: { amount: 10_000, reference: 'bank transfer 77', reason: 'refunded by bank transfer' },
    });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toMatchObject({ id: payment!.id, canceledAmount: 10_000 });
    const refunds = (await running.app.inject({ method: 'GET', url: `/admin/payments/${payment!.id}`, headers: adminHeaders })).json().refunds;
    expect(refunds.filter((r: { channel: string }) => r.channel === 'EXTERNAL')).toHaveLength(1);
  });

  it('a refund from the console replays through POST /admin/payments/:id/cancel as 200, acting once', async () => {
    const id = await subscribe(running.app, { amount: 12_000 });
    const [payment] = await paymentsOf(running.app, id);
    const key = await consolePost(`/console/payments/${payment!.id}`, `/console/payments/${payment!.id}/refund`, {
      amount: '2,000',
      reason: 'partial refund asked',
    });
    const replay = await running.app.inject({
      method: 'POST',
      url: `/admin/payments/${payment!.id}/cancel`,
      headers: { ...adminHeaders, 'idempotency-key': key },
      payload: { amount: 2_000, reason: 'partial refund asked' },
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([2_000]);
  });

  it('a charge made in the console replays through POST /admin/subscriptions/:id/charge as 201, charging once', async () => {
    const kst = (local: string) => new Date(`${local}+09:00`);
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { amount: 9_900 });
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    const confirms = async () => (await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM').length;
    const before = await confirms();
    const key = await consolePost(`/console/subscriptions/${id}`, `/console/subscriptions/${id}/charge`, { reason: 'customer asked to pay now' });

    const replay = await running.app.inject({
      method: 'POST',
      url: `/admin/subscriptions/${id}/charge`,
      headers: { ...adminHeaders, 'idempotency-key': key },
      payload: { reason: 'customer asked to pay now' },
    });
    expect(replay.statusCode, replay.body).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toMatchObject({ kind: 'MANUAL', status: 'SUCCEEDED', subscriptionId: id });
    expect(await confirms()).toBe(before + 1);
  });
});
