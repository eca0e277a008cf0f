// The retention pass: every vault whose retainUntil (a Korea date, kept through the whole day) is before today's Korea
// date is destroyed (its four columns NULL, identityPurgedAt the service clock's now) with one erasure.identity_purged
// entry; nothing else is touched; a second pass finds nothing; passes at once destroy each vault once.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPrismaClient } from '../../../src/db/prisma.ts';
import { createSimulatedClock } from '../../../src/lib/clock.ts';
import { createIdentityRetention, RETENTION_ACTOR } from '../../../src/modules/erasure/purge-identities.ts';
import { retentionOverSql, retentionOverWhere } from '../../../src/modules/erasure/vault-retention.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { adminHeaders, setClock } from '../../helpers/billing.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { createErasure } from '../../helpers/erasure.ts';
import { overlapped } from '../../helpers/locks.ts';
import { waitFor } from '../../helpers/service.ts';

const running = useRunningApp({ CLOCK: 'simulated', ADMIN_TOKENS: 'alice:test_admin_token_0123456789abcdef' });
const silent = { info() {} };
const IDENTITY = { userId: 'shop-user-3310', names: ['이서연'], phoneNumbers: ['01055556666'] };

const runPass = (headers: Record<string, string> = {}, payload?: object) =>
  running.app.inject({ method: 'POST', url: '/admin/retention/run', headers: { ...adminHeaders, ...headers }, ...(payload ? { payload } : {}) });

const vaultOf = (id: string) =>
  running.app.db.erasure.findUniqueOrThrow({
    where: { id },
    select: { identityKeyId: true, identityIv: true, identityTag: true, identityCiphertext: true, identityPurgedAt: true, updatedAt: true },
  });

describe('the retention pass', () => {
  it('destroys the vaults whose retainUntil is before today in Korea, keeps the one ending today and later, and audits each destruction', async () => {
    const db = running.app.db;
    const [longAgo, yesterday, today, tomorrow] = [
      await createErasure(db, { identity: IDENTITY, retainUntil: '2030-01-15' }),
      await createErasure(db, { identity: IDENTITY, retainUntil: '2031-11-30' }),
      await createErasure(db, { identity: IDENTITY, retainUntil: '2031-12-01' }),
      await createErasure(db, { identity: IDENTITY, retainUntil: '2031-12-02' }),
    ];
    // 23:59:59.999 on 2031-12-01 in Korea (UTC+9): the last instant of the day the vault ending 12-01 is kept.
    await setClock(running.app, '2031-12-01T14:59:59.999Z');
    const first = await runPass({}, { reason: '정기 파기 확인' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ purged: 2 });

    for (const gone of [longAgo, yesterday]) {
      expect(await vaultOf(gone.id)).toMatchObject({
        identityKeyId: null,
        identityIv: null,
        identityTag: null,
        identityCiphertext: null,
        identityPurgedAt: new Date('2031-12-01T14:59:59.999Z'),
        updatedAt: new Date('2031-12-01T14:59:59.999Z'),
      });
    }
    for (const kept of [today, tomorrow]) expect(await vaultOf(kept.id)).toMatchObject({ identityKeyId: 'k1', identityPurgedAt: null });
    // Nothing but the vault changed.
    const after = await db.erasure.findUniqueOrThrow({ where: { id: yesterday.id } });
    expect({ ...after, identityKeyId: yesterday.identityKeyId }).toMatchObject({
      pseudonym: yesterday.pseudonym,
      status: 'COMPLETED',
      reason: yesterday.reason,
      actor: yesterday.actor,
      counts: yesterday.counts,
      erasedAt: yesterday.erasedAt,
      retainUntil: '2031-11-30',
      keyDeletions: yesterday.keyDeletions,
    });

    const entries = await db.auditEvent.findMany({ where: { action: 'erasure.identity_purged' }, orderBy: { entityId: 'asc' } });
    expect(entries.map((e) => e.entityId)).toEqual([longAgo.id, yesterday.id].sort());
    const entry = entries.find((e) => e.entityId === yesterday.id)!;
    expect(entry).toMatchObject({
      actor: 'admin:alice',
      entityType: 'erasure',
      reason: 'retention ended after 2031-11-30; run by hand: 정기 파기 확인',
      after: { pseudonym: yesterday.pseudonym, retainUntil: '2031-11-30', identityPurgedAt: '2031-12-01T14:59:59.999Z' },
    });
    expect(entry.requestId).toBeTruthy();
    for (const value of [IDENTITY.userId, ...IDENTITY.names, ...IDENTITY.phoneNumbers]) expect(JSON.stringify(entries)).not.toContain(value);

    // The run by hand is audited too.
    expect(await db.auditEvent.findFirstOrThrow({ where: { action: 'retention.run' } })).toMatchObject({
      actor: 'admin:alice',
      entityType: 'scheduler',
      entityId: 'retention-pass',
      reason: '정기 파기 확인',
      after: { purged: 2 },
    });

    // Idempotent: nothing more to destroy the same day, and no destruction audited.
    expect((await runPass()).json()).toEqual({ purged: 0 });
    expect(await db.auditEvent.count({ where: { action: 'erasure.identity_purged' } })).toBe(2);
    expect(await db.auditEvent.count({ where: { action: 'retention.run' } })).toBe(2);

    // The next Korea day (2031-12-02 00:00 in Korea) the vault that ended on 12-01 goes, and only it.
    await setClock(running.app, '2031-12-01T15:00:00.000Z');
    expect((await runPass()).json()).toEqual({ purged: 1 });
    expect(await vaultOf(today.id)).toMatchObject({ identityCiphertext: null, identityPurgedAt: new Date('2031-12-01T15:00:00.000Z') });
    expect(await vaultOf(tomorrow.id)).toMatchObject({ identityKeyId: 'k1', identityPurgedAt: null });
    const third = await db.auditEvent.findFirstOrThrow({ where: { action: 'erasure.identity_purged', entityId: today.id } });
    expect(third.reason).toBe('retention ended after 2031-12-01');

    // The metric counts what was destroyed.
    const metrics = await running.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^billing_erasure_identities_purged_total 3$/m);
  });

  it('leaves an erasure that kept no identity alone', async () => {
    const none = await createErasure(running.app.db, { sealed: false, retainUntil: '2020-01-01' });
    await setClock(running.app, '2031-12-01T00:00:00.000Z');
    expect((await runPass()).json()).toEqual({ purged: 0 });
    expect(await vaultOf(none.id)).toMatchObject({ identityCiphertext: null, identityPurgedAt: null });
    expect(await running.app.db.auditEvent.count({ where: { entityType: 'erasure' } })).toBe(0);
  });

  it('POST /admin/retention/run honours Idempotency-Key: the same key answers the first answer again without a second pass', async () => {
    await createErasure(running.app.db, { retainUntil: '2030-01-01' });
    await setClock(running.app, '2031-12-01T00:00:00.000Z');
    const first = await runPass({ 'idempotency-key': 'retention-1' });
    expect(first.json()).toEqual({ purged: 1 });
    await createErasure(running.app.db, { retainUntil: '2030-01-01' });
    const replay = await runPass({ 'idempotency-key': 'retention-1' });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual({ purged: 1 });
    expect(await running.app.db.erasure.count({ where: { identityCiphertext: { not: null } } })).toBe(1);
    expect((await runPass({ 'idempotency-key': 'retention-2' })).json()).toEqual({ purged: 1 });
    expect((await runPass({}, { reason: 'x', extra: true })).statusCode).toBe(400);
  });

  it('two passes at once, each on its own connections, destroy and audit every vault exactly once', async () => {
    const db = running.app.db;
    // More than one batch (200) each, so both passes loop while the other holds rows.
    const ids: string[] = [];
    for (let i = 0; i < 450; i++) ids.push((await createErasure(db, { retainUntil: `2030-0${1 + (i % 9)}-1${i % 10}` })).id);
    const clients = [createPrismaClient(running.databaseUrl), createPrismaClient(running.databaseUrl)];
    try {
      const clock = createSimulatedClock(new Date('2031-12-01T00:00:00.000Z'));
      const passes = clients.map((client) => createIdentityRetention({ db: client, clock, log: silent }));
      // Both passes are held at the table (its first statement waits on a SHARE lock) and let go together.
      const reports = await overlapped(running.databaseUrl, 'erasures', 2, () => passes.map((purge) => purge()));
      expect(reports[0]!.purged + reports[1]!.purged).toBe(450);
      const entries = await db.auditEvent.findMany({ where: { action: 'erasure.identity_purged' }, select: { entityId: true, actor: true } });
      expect(entries).toHaveLength(450);
      expect(new Set(entries.map((e) => e.entityId))).toEqual(new Set(ids));
      expect(new Set(entries.map((e) => e.actor))).toEqual(new Set([RETENTION_ACTOR]));
      expect(await db.erasure.count({ where: { identityCiphertext: { not: null } } })).toBe(0);
      expect(await db.erasure.count({ where: { identityPurgedAt: null } })).toBe(0);
    } finally {
      await Promise.all(clients.map((client) => client.$disconnect()));
    }
  });

  it('skips a vault another transaction holds, without waiting for it, and the next pass destroys it', async () => {
    const db = running.app.db;
    const held = await createErasure(db, { retainUntil: '2030-01-01' });
    const free = await createErasure(db, { retainUntil: '2030-01-01' });
    const holder = new pg.Client({ connectionString: running.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "erasures" WHERE "id" = $1 FOR UPDATE`, [held.id]);
      await setClock(running.app, '2031-12-01T00:00:00.000Z');
      // Answers while the row is still held: SKIP LOCKED, not a wait.
      expect((await runPass()).json()).toEqual({ purged: 1 });
      expect(await vaultOf(free.id)).toMatchObject({ identityCiphertext: null });
      expect(await vaultOf(held.id)).toMatchObject({ identityKeyId: 'k1' });
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    expect((await runPass()).json()).toEqual({ purged: 1 });
    expect(await vaultOf(held.id)).toMatchObject({ identityCiphertext: null });
    expect(await db.auditEvent.count({ where: { action: 'erasure.identity_purged' } })).toBe(2);
  });

  it('the Prisma and SQL forms of "retention over" pick the same vaults, at the Korea midnight boundary', async () => {
    const db = running.app.db;
    for (const retainUntil of ['2031-11-29', '2031-11-30', '2031-12-01', '2031-12-02']) await createErasure(db, { retainUntil });
    await createErasure(db, { retainUntil: '2020-01-01', sealed: false });
    for (const [at, expected] of [
      ['2031-11-30T14:59:59.999Z', ['2031-11-29']],
      ['2031-11-30T15:00:00.000Z', ['2031-11-29', '2031-11-30']],
      ['2031-12-01T15:00:00.000Z', ['2031-11-29', '2031-11-30', '2031-12-01']],
    ] as const) {
      const now = new Date(at);
      const byPrisma = await db.erasure.findMany({ where: retentionOverWhere(now), select: { retainUntil: true }, orderBy: { retainUntil: 'asc' } });
      const bySql = await db.$queryRaw<Array<{ retainUntil: string }>>`
        SELECT e."retainUntil" FROM "erasures" e WHERE ${retentionOverSql(now)} ORDER BY e."retainUntil"`;
      expect(
        byPrisma.map((r) => r.retainUntil),
        at,
      ).toEqual(expected);
      expect(
        bySql.map((r) => r.retainUntil),
        at,
      ).toEqual(expected);
    }
  });
});

describe('the retention timer', () => {
  it('runs the pass on its own when the app is ready (SCHEDULER_ENABLED=true), as the retention-pass actor', async () => {
    const db = running.app.db;
    const expired = await createErasure(db, { retainUntil: '2020-01-01' });
    const kept = await createErasure(db, { retainUntil: '2999-12-31' });
    const app = await buildTestApp(running.databaseUrl, { env: { SCHEDULER_ENABLED: 'true' } });
    try {
      await app.ready();
      await waitFor('the retention pass to destroy the expired vault', async () => (await vaultOf(expired.id)).identityCiphertext === null);
      const entry = await db.auditEvent.findFirstOrThrow({ where: { action: 'erasure.identity_purged', entityId: expired.id } });
      expect(entry).toMatchObject({ actor: RETENTION_ACTOR, reason: 'retention ended after 2020-01-01' });
      expect(await vaultOf(kept.id)).toMatchObject({ identityKeyId: 'k1' });
    } finally {
      await app.close();
    }
  });
});
