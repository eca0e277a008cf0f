// Request bodies are validated as sent, without coercion: `amount: true`, "9900", [9900] or "1e3" are 400
// VALIDATION_ERROR; query strings are still read as their types. (Regression test for issue #12 defect 5.)
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { adminHeaders, subscribe } from '../helpers/billing.ts';

const running = useRunningApp();
const terms = { userId: 'strict', method: 'CARD', orderName: 'Plan' };

describe('strict request bodies', () => {
  it.each([true, '9900', [9900], '1e3', 9900.5, null])('a registration with amount %j is 400 VALIDATION_ERROR and creates nothing', async (amount) => {
    const response = await running.app.inject({ method: 'POST', url: '/api/v1/registrations', headers: apiHeaders, payload: { ...terms, amount } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await running.app.db.registration.count()).toBe(0);
  });

  it.each([true, '12000', [12000]])('PATCH /admin/subscriptions/:id with amount %j is 400 and changes nothing', async (amount) => {
    const id = await subscribe(running.app, {});
    const response = await running.app.inject({ method: 'PATCH', url: `/admin/subscriptions/${id}`, headers: adminHeaders, payload: { amount, reason: 'r' } });
    expect(response.statusCode).toBe(400);
    expect((await running.app.db.subscription.findUniqueOrThrow({ where: { id } })).amount).toBe(9900);
  });

  it('a boolean in a body must be a boolean; query strings are still read as numbers and booleans', async () => {
    const id = await subscribe(running.app, {});
    const cancel = await running.app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${id}/cancel`,
      headers: apiHeaders,
      payload: { atPeriodEnd: 'true' },
    });
    expect(cancel.statusCode).toBe(400);
    const page = await running.app.inject({ method: 'GET', url: '/admin/subscriptions?limit=1&needsAttention=false', headers: adminHeaders });
    expect(page.statusCode).toBe(200);
    expect(page.json().items).toHaveLength(1);
  });
});
