// POST /admin/customers/:userId/erasure (docs/operating.md "A customer asks to be forgotten") through the running app and
// the sandbox over HTTP, on the simulated clock: the happy path (the pseudonym everywhere the customer was, counts, the
// vault, the key's ciphertext destroyed, NOT_SUPPORTED at Danal, the event and the audit entry), the idempotent replay,
// cancelOpenSubscriptions, and every refusal with nothing changed.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { openIdentity, type VaultColumns } from '../../../src/modules/erasure/identity-vault.ts';
import { PSEUDONYM_PATTERN } from '../../../src/modules/erasure/pseudonym.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { rotateBillingKeys } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { apiHeaders } from '../../helpers/app.ts';
import { getSubscription, setClock, subscribe } from '../../helpers/billing.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { eventsOf, kst, portalOf } from '../portal/portal-helpers.ts';
import { erase, personalTrace, snapshotOfCustomer } from './erasure-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated', RETENTION_YEARS: '5' });
const START = kst('2030-03-01T10:00:00');
beforeEach(() => setClock(running.app, START));

const USER = 'customer-7f3a9c21';
const NAME = '홍길동';
const PHONE = '010-2345-6789';

describe('an erasure', () => {
  it('replaces the userId with the pseudonym everywhere, clears names, phones and card numbers, seals the vault and destroys the key', async () => {
    const { app } = running;
    const id = await subscribe(app, { userId: USER, amount: 9900, userName: NAME, userPhoneNumber: PHONE, returnUrl: `https://shop.example/done?u=${USER}` });
    // A portal session's id is a UUID (the helper's customer() names it after the userId, which no real one does).
    await portalOf(app).cancel({ userId: USER, portalSessionId: randomUUID() }, id, { reason: '그만 쓸래요' });
    const session = await app.inject({
      method: 'POST',
      url: '/api/v1/portal-sessions',
      headers: { ...apiHeaders, 'idempotency-key': randomUUID() },
      payload: { userId: USER },
    });
    expect(session.statusCode, session.body).toBe(201);
    await setClock(app, kst('2030-03-05T12:00:00'));

    const response = await erase(app, USER, { reason: `privacy request #1 of ${USER}`, cancelOpenSubscriptions: true });
    expect(response.statusCode, response.body).toBe(201);
    const answer = response.json();
    expect(answer).toMatchObject({ status: 'COMPLETED', erasedAt: kst('2030-03-05T12:00:00').toISOString(), retainUntil: '2035-03-01' });
    expect(answer.pseudonym).toMatch(PSEUDONYM_PATTERN);
    expect(answer.counts).toEqual({ subscriptions: 1, payments: 1, registrations: 1, orders: 0, billingKeys: 1, events: expect.any(Number) });
    expect(answer.counts.events).toBeGreaterThanOrEqual(3);

    // The subscription: the pseudonym, canceled now with reason ERASED (it was canceling at its period's end).
    const sub = await getSubscription(app, id);
    expect(sub).toMatchObject({ userId: answer.pseudonym, status: 'CANCELED', cancelReason: 'ERASED' });
    expect(sub.billingKey).toMatchObject({ status: 'REVOKED' });
    expect((sub.billingKey as { cardNumber?: string }).cardNumber).toBeUndefined();

    // The key: revoked, its ciphertext gone; Danal cannot delete keys.
    const key = await app.db.billingKey.findFirstOrThrow({ where: { userId: answer.pseudonym } });
    expect(key).toMatchObject({ status: 'REVOKED', encryptionKeyId: 'destroyed', cardNumber: null, phoneNumber: null });
    expect(key.keyCiphertext.length + key.keyIv.length + key.keyTag.length).toBe(0);
    const row = await app.db.erasure.findUniqueOrThrow({ where: { id: answer.id } });
    expect(row.keyDeletions).toEqual([{ billingKeyId: key.id, outcome: 'NOT_SUPPORTED' }]);
    // The reason named the customer: it is kept with the pseudonym instead.
    expect(row).toMatchObject({
      pseudonym: answer.pseudonym,
      reason: `privacy request #1 of ${answer.pseudonym}`,
      identityPurgedAt: null,
      retainUntil: '2035-03-01',
    });

    // Key rotation passes the destroyed key by: nothing to re-encrypt, nothing left behind.
    const rotated = createKeyring([{ id: 'k2', key: Buffer.alloc(32, 3) }, ...app.config.encryptionKeys]);
    expect(await rotateBillingKeys(app.db, rotated)).toEqual({ rotated: 0, skipped: 0, remaining: 0 });

    // The vault opens to the identity.
    const keyring = createKeyring(app.config.encryptionKeys);
    expect(openIdentity(keyring, row.id, row as unknown as VaultColumns)).toEqual({
      userId: USER,
      names: [NAME],
      phoneNumbers: expect.arrayContaining([PHONE]),
    });

    // Nothing of the customer is left in the rows the erasure found, nor in the events' rendering.
    const trace = await personalTrace(app.db, [USER, NAME, PHONE, PHONE.replace(/-/g, '')]);
    expect(trace).toEqual([]);
    const events = await eventsOf(app, id);
    expect(JSON.stringify(events)).not.toContain(USER);
    expect(events.every((e) => (e.data.object as { userId?: string }).userId === answer.pseudonym)).toBe(true);
    expect(await app.db.portalSession.count({ where: { userId: { in: [USER, answer.pseudonym] } } })).toBe(0);

    // Its audit entry and its event.
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { action: 'customer.erasure' } });
    expect(audit).toMatchObject({ entityType: 'erasure', entityId: answer.id, reason: `privacy request #1 of ${answer.pseudonym}`, actor: expect.any(String) });
    expect(JSON.stringify(audit)).not.toContain(USER);
    const [erased, ...more] = await eventsOf(app, answer.id);
    expect(more).toEqual([]);
    expect(erased).toMatchObject({
      type: 'customer.erased',
      createdAt: answer.erasedAt,
      data: { object: { id: answer.id, pseudonym: answer.pseudonym, erasedAt: answer.erasedAt, retainUntil: answer.retainUntil } },
    });
    expect(Object.keys(erased!.data.object).sort()).toEqual(['erasedAt', 'id', 'pseudonym', 'retainUntil']);
    // No other event was written by the rewrite: only the cancel's.
    const types = (await app.db.event.findMany({ where: { createdAt: { gte: new Date(answer.erasedAt) } }, select: { type: true } })).map((e) => e.type).sort();
    expect(types).toEqual(['customer.erased', 'subscription.canceled']);
  });

  it('answers the same erasure again for the same Idempotency-Key, and 404 for a new one (already erased)', async () => {
    const { app } = running;
    await subscribe(app, { userId: USER, amount: 9900 });
    const key = randomUUID();
    const first = await erase(app, USER, { reason: 'privacy', cancelOpenSubscriptions: true }, key);
    expect(first.statusCode, first.body).toBe(201);
    const replay = await erase(app, USER, { reason: 'privacy', cancelOpenSubscriptions: true }, key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(await app.db.erasure.count()).toBe(1);
    const other = await erase(app, 'someone-else', { reason: 'privacy', cancelOpenSubscriptions: true }, key);
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    const again = await erase(app, USER, { reason: 'privacy', cancelOpenSubscriptions: true });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ code: 'CUSTOMER_NOT_FOUND' });
  });

  it('a new registration with the same userId afterwards is a new customer with nothing of the old one', async () => {
    const { app } = running;
    const old = await subscribe(app, { userId: USER, amount: 9900, userName: NAME });
    const answer = (await erase(app, USER, { reason: 'privacy', cancelOpenSubscriptions: true })).json();
    const fresh = await subscribe(app, { userId: USER, amount: 4900 });
    const list = await app.inject({ method: 'GET', url: `/api/v1/subscriptions?userId=${USER}`, headers: apiHeaders });
    expect(list.json().items.map((s: { id: string }) => s.id)).toEqual([fresh]);
    expect((await getSubscription(app, old)) as unknown).toMatchObject({ userId: answer.pseudonym });
    expect(await snapshotOfCustomer(app.db, USER)).toMatchObject({ subscriptions: 1, registrations: 1, billingKeys: 1 });
  });
});
