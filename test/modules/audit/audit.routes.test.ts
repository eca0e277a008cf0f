// GET /admin/audit: the audit trail newest first, by entity and by actor, in keyset pages; admin token only.
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { adminHeaders, subscribe } from '../../helpers/billing.ts';
import { adminGet } from '../../helpers/settlement.ts';
import { apiHeaders } from '../../helpers/app.ts';

const running = useRunningApp({ ADMIN_TOKENS: 'alice:test_admin_token_0123456789abcdef' });
const act = (url: string) => running.app.inject({ method: 'POST', url, headers: adminHeaders, payload: { reason: `why ${url}` } });

interface Entry {
  id: string;
  at: string;
  actor: string;
  action: string;
  entityType: string;
  entityId: string;
  reason?: string;
  before?: { status?: string };
  after?: { status?: string };
}

describe('GET /admin/audit', () => {
  it('lists entries newest first, filtered by entity and actor, in pages', async () => {
    const first = await subscribe(running.app, { userId: 'a' });
    const second = await subscribe(running.app, { userId: 'b' });
    expect((await act(`/admin/subscriptions/${first}/pause`)).statusCode).toBe(200);
    expect((await act(`/admin/subscriptions/${first}/resume`)).statusCode).toBe(200);
    expect((await act(`/admin/subscriptions/${second}/pause`)).statusCode).toBe(200);

    const all = await adminGet<{ items: Entry[]; nextCursor: string | null }>(running.app, '/admin/audit');
    expect(all.items.map((e) => [e.action, e.entityId])).toEqual([
      ['subscription.pause', second],
      ['subscription.resume', first],
      ['subscription.pause', first],
    ]);
    expect(all.items[0]).toMatchObject({ actor: 'admin:alice', entityType: 'subscription', reason: `why /admin/subscriptions/${second}/pause` });
    expect(all.items[0]!.before?.status).toBe('ACTIVE');
    expect(all.items[0]!.after?.status).toBe('PAUSED');

    const ofFirst = await adminGet<{ items: Entry[] }>(running.app, `/admin/audit?entityType=subscription&entityId=${first}`);
    expect(ofFirst.items.map((e) => e.action)).toEqual(['subscription.resume', 'subscription.pause']);
    expect((await adminGet<{ items: Entry[] }>(running.app, '/admin/audit?actor=admin:alice')).items).toHaveLength(3);
    expect((await adminGet<{ items: Entry[] }>(running.app, '/admin/audit?actor=admin:bob')).items).toEqual([]);

    const page1 = await adminGet<{ items: Entry[]; nextCursor: string }>(running.app, '/admin/audit?limit=2');
    const page2 = await adminGet<{ items: Entry[]; nextCursor: string | null }>(running.app, `/admin/audit?limit=2&cursor=${page1.nextCursor}`);
    expect([...page1.items, ...page2.items].map((e) => e.id)).toEqual(all.items.map((e) => e.id));
    expect(page2.nextCursor).toBeNull();
  });

  it('refuses an unknown entityType (400) and a merchant API key (401)', async () => {
    expect((await running.app.inject({ method: 'GET', url: '/admin/audit?entityType=invoice', headers: adminHeaders })).statusCode).toBe(400);
    expect((await running.app.inject({ method: 'GET', url: '/admin/audit', headers: apiHeaders })).statusCode).toBe(401);
  });
});
