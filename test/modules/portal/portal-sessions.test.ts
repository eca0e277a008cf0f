// POST /api/v1/portal-sessions and the link it answers (docs/api.md "Customer portal"): the 201 shape, the refusals
// (404 CUSTOMER_NOT_FOUND, 422 RETURN_URL_NOT_ALLOWED, 400 and 404 for a flow), the Idempotency-Key, the link used
// once (then 410) or expired by its real-time TTL (410), the cookie's attributes, the session's real-time end.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../../src/app.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { createRedactor } from '../../../src/lib/redact.ts';
import { buildTestApp, testConfig } from '../../helpers/app.ts';
import { subscribe } from '../../helpers/billing.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { CookieJar, createPortalSession, getPage } from '../../helpers/portal.ts';

const ENV = { PORTAL_RETURN_ORIGINS: 'https://shop.example,http://localhost:8080' };
let database: TestDatabase;
let app: App;
let subscriptionId: string;
let otherSubscriptionId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, { env: ENV });
  subscriptionId = await subscribe(app, { userId: 'portal-user' });
  otherSubscriptionId = await subscribe(app, { userId: 'someone-else' });
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Waits (on the condition, not a guessed time) until the real clock has passed `instant`. */
async function until(instant: string | Date) {
  const at = new Date(instant).getTime();
  while (Date.now() <= at) await sleep(Math.min(100, at - Date.now() + 1));
}

describe('POST /api/v1/portal-sessions', () => {
  it('answers 201 {id, url, expiresAt}: the link under PUBLIC_BASE_URL, 256 random bits, only its hash stored', async () => {
    const before = Date.now();
    const response = await createPortalSession(app, { userId: 'portal-user', returnUrl: 'https://shop.example/account', locale: 'en' });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json() as { id: string; url: string; expiresAt: string };
    expect(Object.keys(body).sort()).toEqual(['expiresAt', 'id', 'url']);
    const match = /^http:\/\/localhost:3000\/portal\/session\/([A-Za-z0-9_-]{43})$/.exec(body.url);
    expect(match, body.url).not.toBeNull();
    // PORTAL_LINK_TTL (1h by default) of real time.
    const ttl = new Date(body.expiresAt).getTime() - before;
    expect(ttl).toBeGreaterThanOrEqual(3600_000);
    expect(ttl).toBeLessThan(3600_000 + 60_000);
    const row = await app.db.portalSession.findUniqueOrThrow({ where: { id: body.id } });
    expect(JSON.stringify(row)).not.toContain(match![1]);
    expect(row).toMatchObject({ userId: 'portal-user', locale: 'en', returnUrl: 'https://shop.example/account', usedAt: null });
  });

  it('refuses: a userId with no subscription (404 CUSTOMER_NOT_FOUND), a returnUrl elsewhere (422), a flow without or with a wrong subscription', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ userId: 'nobody' }, 404, 'CUSTOMER_NOT_FOUND'],
      [{ userId: 'portal-user', returnUrl: 'https://evil.example/account' }, 422, 'RETURN_URL_NOT_ALLOWED'],
      [{ userId: 'portal-user', returnUrl: 'https://shop.example.evil.example/' }, 422, 'RETURN_URL_NOT_ALLOWED'],
      [{ userId: 'portal-user', flow: 'cancel' }, 400, 'VALIDATION_ERROR'],
      [{ userId: 'portal-user', flow: 'cancel', subscriptionId: otherSubscriptionId }, 404, 'NOT_FOUND'],
      [{ userId: 'portal-user', flow: 'consent', subscriptionId: '00000000-0000-4000-8000-000000000000' }, 404, 'NOT_FOUND'],
      [{ userId: 'portal-user', flow: 'elsewhere', subscriptionId }, 400, 'VALIDATION_ERROR'],
      [{ userId: 'portal-user', locale: 'ja' }, 400, 'VALIDATION_ERROR'],
      [{ userId: 'portal-user', extra: true }, 400, 'VALIDATION_ERROR'],
    ];
    const count = await app.db.portalSession.count();
    for (const [body, status, code] of cases) {
      const response = await createPortalSession(app, body);
      expect({ body, status: response.statusCode, code: response.json().code }).toEqual({ body, status, code });
    }
    expect(await app.db.portalSession.count()).toBe(count);
    const ok = await createPortalSession(app, { userId: 'portal-user', returnUrl: 'http://localhost:8080/back', flow: 'cancel', subscriptionId });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('honours Idempotency-Key: a replay is the same session with a new link (the first stops opening); another body is 409', async () => {
    const headers = { 'idempotency-key': 'portal-key-1' };
    const first = await createPortalSession(app, { userId: 'portal-user' }, headers);
    const again = await createPortalSession(app, { userId: 'portal-user' }, headers);
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    type Created = { id: string; url: string; expiresAt: string };
    const a = first.json() as Created;
    const b = again.json() as Created;
    expect(b.id).toBe(a.id);
    expect(b.expiresAt).toBe(a.expiresAt);
    expect(b.url).not.toBe(a.url);
    expect(await app.db.portalSession.count({ where: { id: a.id } })).toBe(1);
    const record = await app.db.idempotencyRecord.findFirstOrThrow({ where: { key: 'portal-key-1' } });
    expect(JSON.stringify(record.responseBody)).not.toContain('/portal/session/');
    expect((await app.inject({ method: 'GET', url: new URL(a.url).pathname })).statusCode).toBe(410);
    expect((await app.inject({ method: 'GET', url: new URL(b.url).pathname })).statusCode).toBe(303);
    // Once used, the link cannot be given again.
    expect((await createPortalSession(app, { userId: 'portal-user' }, headers)).statusCode).toBe(409);
    const reused = await createPortalSession(app, { userId: 'someone-else' }, headers);
    expect([reused.statusCode, reused.json().code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
  });
});

describe('the link', () => {
  it('opens once: a signed HttpOnly SameSite=Lax cookie on /portal with a random secret, 303 to the flow’s page; a second GET is a 410 page', async () => {
    const created = (await createPortalSession(app, { userId: 'portal-user', flow: 'cancel', subscriptionId, locale: 'en' })).json();
    const path = new URL(created.url).pathname;
    const token = path.split('/').pop()!;
    const opened = await app.inject({ method: 'GET', url: path });
    expect(opened.statusCode).toBe(303);
    expect(opened.headers.location).toBe(`/portal/subscriptions/${subscriptionId}/cancel`);
    expect(opened.headers['referrer-policy']).toBe('no-referrer');
    const line = ([] as string[]).concat(opened.headers['set-cookie'] as string[]).find((l) => l.startsWith('portal_session='))!;
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Lax/);
    expect(line).toMatch(/; Path=\/portal/);
    expect(line).toMatch(/; Max-Age=3600/);
    expect(line).not.toMatch(/; Secure/);
    const value = decodeURIComponent(line.split(';')[0]!.slice('portal_session='.length));
    expect(value).not.toContain(token);
    const [secret] = value.split('.');
    const row = await app.db.portalSession.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.usedAt).not.toBeNull();
    expect(row.secretHash).not.toBe(secret);

    const second = await app.inject({ method: 'GET', url: path });
    expect(second.statusCode).toBe(410);
    expect(second.body).toContain('<html lang="en">');
    expect(second.body).toContain('ask the service you came from for a new link');
    expect(second.body).not.toContain('portal-user');
    expect(second.headers['set-cookie']).toBeUndefined();
    // Korean by default, and for a link nobody made.
    const unknown = await app.inject({ method: 'GET', url: '/portal/session/not-a-real-token' });
    expect(unknown.statusCode).toBe(410);
    expect(unknown.body).toContain('<html lang="ko">');
    expect(unknown.body).toContain('새 링크를 요청해 주세요');
  });

  it('expires unused after PORTAL_LINK_TTL of real time (410), and the session after PORTAL_SESSION_TTL (its pages refused)', async () => {
    const short = await buildTestApp(database.url, { env: { ...ENV, PORTAL_LINK_TTL: '1s', PORTAL_SESSION_TTL: '2s' } });
    try {
      const stale = (await createPortalSession(short, { userId: 'portal-user' })).json();
      const live = (await createPortalSession(short, { userId: 'portal-user' })).json();
      const opened = await short.inject({ method: 'GET', url: new URL(live.url).pathname });
      expect(opened.statusCode).toBe(303);
      const jar = new CookieJar();
      jar.take(opened);
      expect((await getPage(short, jar, '/portal')).statusCode).toBe(200);
      await until(stale.expiresAt);
      expect((await short.inject({ method: 'GET', url: new URL(stale.url).pathname })).statusCode).toBe(410);
      const row = await short.db.portalSession.findUniqueOrThrow({ where: { id: live.id } });
      await until(row.expiresAt!);
      const ended = await getPage(short, jar, '/portal');
      expect(ended.statusCode).toBe(401);
      expect(ended.body).toContain('새 링크를 요청해 주세요');
    } finally {
      await short.close();
    }
  });

  it('in production the cookie is Secure', async () => {
    const config = await testConfig(database.url, ENV);
    const secure = await buildApp(
      { ...config, console: { ...config.console, secureCookies: true } },
      { logger: createLogger({ level: 'silent', redactor: createRedactor([]) }) },
    );
    try {
      const created = (await createPortalSession(secure, { userId: 'portal-user' })).json();
      const opened = await secure.inject({ method: 'GET', url: new URL(created.url).pathname });
      const line = ([] as string[]).concat(opened.headers['set-cookie'] as string[]).find((l) => l.startsWith('portal_session='));
      expect(line).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });

  it('a forged, unsigned or missing cookie sees no page', async () => {
    for (const cookie of ['', 'portal_session=abc', 'portal_session=abc.forged']) {
      const response = await app.inject({ method: 'GET', url: '/portal', headers: cookie ? { cookie } : {} });
      expect(response.statusCode).toBe(401);
      expect(response.body).not.toContain('portal-user');
    }
  });
});

describe('limits', () => {
  it('session creation counts against the API key’s limit (RATE_LIMIT_API): then 429 RATE_LIMITED', async () => {
    const limited = await buildTestApp(database.url, { env: { ...ENV, RATE_LIMIT_API: '2' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await createPortalSession(limited, { userId: 'portal-user' })).statusCode);
      expect(statuses).toEqual([201, 201, 429]);
      const refused = await createPortalSession(limited, { userId: 'portal-user' });
      expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    } finally {
      await limited.close();
    }
  });

  it('the portal’s pages, its link included, are limited to RATE_LIMIT_BROWSER per address: then a 429 page in words', async () => {
    const limited = await buildTestApp(database.url, { env: { ...ENV, RATE_LIMIT_BROWSER: '3' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.inject({ method: 'GET', url: '/portal/session/unknown-token' })).statusCode);
      expect(statuses).toEqual([410, 410, 410, 429]);
      const refused = await limited.inject({ method: 'GET', url: '/portal' });
      expect(refused.statusCode).toBe(429);
      expect(refused.body).toContain('요청이 너무 많습니다');
      // Another address is counted on its own.
      expect((await limited.inject({ method: 'GET', url: '/portal/session/unknown-token', remoteAddress: '10.0.0.9' })).statusCode).toBe(410);
    } finally {
      await limited.close();
    }
  });
});
