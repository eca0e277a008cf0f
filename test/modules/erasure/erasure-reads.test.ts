// GET /admin/erasures, /admin/erasures/:id and /admin/erasures/:id/identity: erasures listed and shown without the
// identity, the identity revealed only with a reason, audited without it, refused once its retention is over (the
// boundary is the Korea day after retainUntil), every answer uncacheable. Erasure rows come from the test factory.
import { describe, expect, it } from 'vitest';
import { apiHeaders, buildTestApp, LogCapture } from '../../helpers/app.ts';
import { adminHeaders, setClock } from '../../helpers/billing.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { createErasure } from '../../helpers/erasure.ts';
import { adminGet } from '../../helpers/settlement.ts';

const running = useRunningApp({ CLOCK: 'simulated', ADMIN_TOKENS: 'alice:test_admin_token_0123456789abcdef' });
const get = (url: string, headers: Record<string, string> = adminHeaders) => running.app.inject({ method: 'GET', url, headers });

const IDENTITY = { userId: 'shop-user-8841', names: ['김민지', 'Minji Kim'], phoneNumbers: ['01098765432', '010-9876-5432'] };
/** Every value of the identity: none may appear where the identity is not asked for. */
const secrets = [IDENTITY.userId, ...IDENTITY.names, ...IDENTITY.phoneNumbers];
const expectNoIdentity = (text: string) => {
  for (const value of secrets) expect(text).not.toContain(value);
};

interface ErasureView {
  id: string;
  pseudonym: string;
  status: string;
  reason: string;
  actor: string;
  erasedAt: string;
  retainUntil: string;
  counts: Record<string, number>;
  keyDeletions: unknown[];
  identitySealed: boolean;
  identityPurgedAt: string | null;
}

describe('GET /admin/erasures and /admin/erasures/:id', () => {
  it('lists erasures newest first by erasedAt, in keyset pages, filtered by pseudonym, never with the identity', async () => {
    const db = running.app.db;
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createErasure(db, { identity: IDENTITY, erasedAt: new Date(Date.UTC(2026, 10, 20 + i, 3)) }));
    // Two erased at the same instant: the id breaks the tie.
    const twin = await createErasure(db, { identity: IDENTITY, erasedAt: made[2]!.erasedAt });
    const response = await get('/admin/erasures?limit=100');
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expectNoIdentity(response.body);
    for (const field of ['identityCiphertext', 'identityIv', 'identityTag', 'identityKeyId']) expect(response.body).not.toContain(field);
    const all = response.json() as { items: ErasureView[]; nextCursor: string | null };
    const middle = [made[2]!, twin].sort((a, b) => (a.id < b.id ? 1 : -1)).map((e) => e.id);
    expect(all.items.map((e) => e.id)).toEqual([made[4]!.id, made[3]!.id, ...middle, made[1]!.id, made[0]!.id]);
    expect(all.nextCursor).toBeNull();
    expect(all.items[0]).toEqual({
      id: made[4]!.id,
      pseudonym: made[4]!.pseudonym,
      status: 'COMPLETED',
      reason: '고객 요청 (상담 #5100)',
      actor: 'admin:alice',
      erasedAt: '2026-11-24T03:00:00.000Z',
      retainUntil: '2031-11-30',
      counts: { subscriptions: 1, payments: 2, registrations: 1, orders: 0, billingKeys: 1, events: 5 },
      keyDeletions: [],
      identitySealed: true,
      identityPurgedAt: null,
    });

    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: ErasureView[]; nextCursor: string | null } = await adminGet(
        running.app,
        `/admin/erasures?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.items.length).toBeLessThanOrEqual(2);
      pages.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages).toEqual(all.items.map((e) => e.id));

    const one = await adminGet<{ items: ErasureView[] }>(running.app, `/admin/erasures?pseudonym=${made[1]!.pseudonym}`);
    expect(one.items.map((e) => e.id)).toEqual([made[1]!.id]);
  });

  it('shows one erasure, never with the identity; an unknown id is 404, a malformed one 400, an API key 401', async () => {
    const keyDeletions = [{ billingKeyId: '6f1c2a90-0000-4000-8000-000000000001', outcome: 'UNSUPPORTED' }];
    const erasure = await createErasure(running.app.db, { identity: IDENTITY, overrides: { keyDeletions } });
    const response = await get(`/admin/erasures/${erasure.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expectNoIdentity(response.body);
    expect(response.json()).toMatchObject({ id: erasure.id, pseudonym: erasure.pseudonym, keyDeletions, identitySealed: true, identityPurgedAt: null });

    const unknown = await get('/admin/erasures/00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
    for (const bad of ['not-a-uuid', '123', `${erasure.id}x`, "1'%20OR%20'1'='1"]) {
      const malformed = await get(`/admin/erasures/${bad}`);
      expect(malformed.statusCode, bad).toBe(400);
      expect(malformed.json(), bad).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect((await get(`/admin/erasures/${bad}/identity?reason=x`)).statusCode, bad).toBe(400);
    }
    expect((await get('/admin/erasures?cursor=garbage')).statusCode).toBe(400);
    expect((await get('/admin/erasures?limit=0')).statusCode).toBe(400);
    expect((await get(`/admin/erasures/${erasure.id}`, apiHeaders)).statusCode).toBe(401);
    expect((await get('/admin/erasures', apiHeaders)).statusCode).toBe(401);
    expect((await get(`/admin/erasures/${erasure.id}/identity?reason=x`, apiHeaders)).statusCode).toBe(401);
  });
});

describe('GET /admin/erasures/:id/identity', () => {
  it('reveals the sealed identity and audits the reveal with the operator and the reason, never the identity', async () => {
    await setClock(running.app, '2027-03-01T00:00:00.000Z');
    const erasure = await createErasure(running.app.db, { identity: IDENTITY, retainUntil: '2031-11-30' });
    const reason = '카드사 분쟁 조회 (분쟁 #77)';
    const response = await get(`/admin/erasures/${erasure.id}/identity?reason=${encodeURIComponent(reason)}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json()).toEqual(IDENTITY);

    const entries = await running.app.db.auditEvent.findMany({ where: { entityType: 'erasure', entityId: erasure.id } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: 'admin:alice', action: 'erasure.identity_revealed', reason, after: { pseudonym: erasure.pseudonym } });
    expect(entries[0]!.requestId).toBeTruthy();
    expectNoIdentity(JSON.stringify(entries[0]));
    // The audit trail shows it on the erasure.
    const trail = await adminGet<{ items: Array<{ action: string; entityType: string }> }>(running.app, `/admin/audit?entityId=${erasure.id}`);
    expect(trail.items).toEqual([expect.objectContaining({ action: 'erasure.identity_revealed', entityType: 'erasure' })]);
    // Each reveal is audited, however often.
    expect((await get(`/admin/erasures/${erasure.id}/identity?reason=second`)).statusCode).toBe(200);
    expect(await running.app.db.auditEvent.count({ where: { action: 'erasure.identity_revealed', entityId: erasure.id } })).toBe(2);
  });

  it('writes none of the identity to the logs, at trace level', async () => {
    const logs = new LogCapture();
    const app = await buildTestApp(running.databaseUrl, { logs, env: { ADMIN_TOKENS: 'alice:test_admin_token_0123456789abcdef' } });
    try {
      const erasure = await createErasure(app.db, { identity: IDENTITY });
      const response = await app.inject({ method: 'GET', url: `/admin/erasures/${erasure.id}/identity?reason=audit`, headers: adminHeaders });
      expect(response.json()).toEqual(IDENTITY);
      expect(logs.lines.length).toBeGreaterThan(0);
      expectNoIdentity(logs.raw);
    } finally {
      await app.close();
    }
  });

  it('refuses without a reason, with an empty or blank one (400), and reveals nothing nor audits', async () => {
    const erasure = await createErasure(running.app.db, { identity: IDENTITY });
    for (const query of ['', '?reason=', '?reason=%20%20', `?reason=${'x'.repeat(501)}`, '?reason=ok&extra=1']) {
      const response = await get(`/admin/erasures/${erasure.id}/identity${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(response.headers['cache-control'], query).toBe('no-store');
      expectNoIdentity(response.body);
    }
    expect(await running.app.db.auditEvent.count()).toBe(0);
  });

  it('an unknown erasure is 404', async () => {
    const response = await get('/admin/erasures/00000000-0000-4000-8000-000000000000/identity?reason=check');
    expect(response.statusCode).toBe(404);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(await running.app.db.auditEvent.count()).toBe(0);
  });

  it('reveals through the last Korea day of retainUntil, and answers 410 IDENTITY_PURGED from the next Korea day on, destroyed or not', async () => {
    const erasure = await createErasure(running.app.db, { identity: IDENTITY, retainUntil: '2031-11-30' });
    const reveal = () => get(`/admin/erasures/${erasure.id}/identity?reason=tax%20inquiry`);
    // 2031-11-30 23:59:59.999 in Korea (UTC+9): still the last day kept.
    await setClock(running.app, '2031-11-30T14:59:59.999Z');
    expect((await reveal()).statusCode).toBe(200);
    // 2031-12-01 00:00 in Korea: the retention is over, even before the pass has destroyed the vault.
    await setClock(running.app, '2031-11-30T15:00:00.000Z');
    const over = await reveal();
    expect(over.statusCode).toBe(410);
    expect(over.json()).toMatchObject({ code: 'IDENTITY_PURGED' });
    expect(over.headers['cache-control']).toBe('no-store');
    expectNoIdentity(over.body);
    // Destroyed by the pass: still 410, and the erasure says when.
    const run = await running.app.inject({ method: 'POST', url: '/admin/retention/run', headers: adminHeaders });
    expect(run.json()).toEqual({ purged: 1 });
    const purged = await reveal();
    expect(purged.statusCode).toBe(410);
    expect(purged.json()).toMatchObject({ code: 'IDENTITY_PURGED' });
    expect(purged.json().message).toContain('2031-11-30T15:00:00.000Z');
    expect(await adminGet(running.app, `/admin/erasures/${erasure.id}`)).toMatchObject({ identitySealed: false, identityPurgedAt: '2031-11-30T15:00:00.000Z' });
    // Set back before retainUntil (a simulated clock can): the vault is gone for good.
    await setClock(running.app, '2031-11-01T00:00:00.000Z');
    expect((await reveal()).statusCode).toBe(410);
    // Only the one reveal that succeeded was audited.
    expect(await running.app.db.auditEvent.count({ where: { action: 'erasure.identity_revealed' } })).toBe(1);
  });

  it('an erasure that kept no identity answers 410 IDENTITY_PURGED', async () => {
    await setClock(running.app, '2027-03-01T00:00:00.000Z');
    const erasure = await createErasure(running.app.db, { sealed: false });
    const response = await get(`/admin/erasures/${erasure.id}/identity?reason=check`);
    expect(response.statusCode).toBe(410);
    expect(response.json()).toMatchObject({ code: 'IDENTITY_PURGED' });
    expect(await adminGet(running.app, `/admin/erasures/${erasure.id}`)).toMatchObject({ identitySealed: false, identityPurgedAt: null });
  });
});
