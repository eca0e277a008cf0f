// The console's server-side guarantees, through its routes (no browser: test/e2e/console.test.ts drives the pages):
// the session cookie's attributes and contents, sessions refused once their token leaves ADMIN_TOKENS, the guard
// in front of every page and form, sign-in's `next` staying on the console, the CSP and where htmx comes from, and
// the development secrets gaining a console key.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { applyDevelopmentDefaults } from '../../../src/dev-secrets.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { createRedactor } from '../../../src/lib/redact.ts';
import { buildTestApp, TEST_ADMIN_TOKEN, testConfig } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const OTHER_TOKEN = 'other_admin_token_0123456789abcdef';
let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, { env: { ADMIN_TOKENS: `alice:${TEST_ADMIN_TOKEN},bob:${OTHER_TOKEN}` } });
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** The cookies of a response as `name=value` pairs for the next request, and their raw Set-Cookie lines. */
function cookiesOf(response: { headers: Record<string, unknown> }) {
  const raw = ([] as string[]).concat((response.headers['set-cookie'] as string | string[] | undefined) ?? []);
  return { raw, header: raw.map((line) => line.split(';')[0]).join('; ') };
}

/** Signs in as a browser would: the form's CSRF token and cookie, then the token. */
async function signIn(target: App, token: string, next?: string) {
  const form = await target.inject({ method: 'GET', url: '/console/login' });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const csrfCookie = cookiesOf(form).header;
  const response = await target.inject({
    method: 'POST',
    url: '/console/login',
    headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrf, token, ...(next ? { next } : {}) }).toString(),
  });
  const session = cookiesOf(response);
  return { response, session, cookie: [csrfCookie, session.header].filter(Boolean).join('; ') };
}

describe('console session', () => {
  it('the cookie is signed, HttpOnly, SameSite=Strict, scoped to /console, and holds neither the token nor what the table stores', async () => {
    const { response, session } = await signIn(app, TEST_ADMIN_TOKEN);
    expect(response.statusCode).toBe(303);
    const line = session.raw.find((l) => l.startsWith('console_session='))!;
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).toMatch(/; Path=\/console/);
    expect(line).toMatch(/; Max-Age=28800/);
    expect(line).not.toMatch(/; Secure/);
    const value = decodeURIComponent(line.split(';')[0]!.slice('console_session='.length));
    // secret.signature: the secret is random; the table keeps only its SHA-256.
    const [secret] = value.split('.');
    expect(value).not.toContain(TEST_ADMIN_TOKEN);
    const rows = await app.db.consoleSession.findMany();
    expect(rows.some((row) => row.secretHash === secret || JSON.stringify(row).includes(TEST_ADMIN_TOKEN))).toBe(false);
    expect(rows.find((row) => row.operatorName === 'alice')).toBeDefined();
  });

  it('in production the cookie is Secure', async () => {
    const config = await testConfig(database.url);
    const secure = await buildApp(
      { ...config, console: { ...config.console, secureCookies: true } },
      { logger: createLogger({ level: 'silent', redactor: createRedactor([]) }) },
    );
    try {
      const { session } = await signIn(secure, TEST_ADMIN_TOKEN);
      expect(session.raw.find((l) => l.startsWith('console_session='))).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });

  it('a forged or unsigned cookie, and no cookie, go to sign-in; a form posted without a session does nothing', async () => {
    const { cookie } = await signIn(app, TEST_ADMIN_TOKEN);
    const secret = /console_session=([^;.]+)/.exec(cookie)![1];
    for (const headers of [{}, { cookie: `console_session=${secret}` }, { cookie: `console_session=${secret}.forged` }]) {
      const response = await app.inject({ method: 'GET', url: '/console', headers });
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/console/login?next=%2Fconsole');
    }
    const posted = await app.inject({
      method: 'POST',
      url: '/console/subscriptions/00000000-0000-4000-8000-000000000000/pause',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'reason=x&idempotencyKey=k&_csrf=t',
    });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe('/console/login');
    expect(await app.db.idempotencyRecord.count()).toBe(0);
  });

  it('a session ends when its token leaves ADMIN_TOKENS (another process, the same table)', async () => {
    const { cookie } = await signIn(app, OTHER_TOKEN);
    expect((await app.inject({ method: 'GET', url: '/console', headers: { cookie } })).statusCode).toBe(200);
    const rotated = await buildTestApp(database.url, { env: { ADMIN_TOKENS: `alice:${TEST_ADMIN_TOKEN}` } });
    try {
      const refused = await rotated.inject({ method: 'GET', url: '/console', headers: { cookie } });
      expect(refused.statusCode).toBe(303);
      expect(refused.headers.location).toMatch(/^\/console\/login/);
    } finally {
      await rotated.close();
    }
  });

  it('sign-in forgets sessions expired more than a day ago', async () => {
    const old = await app.db.consoleSession.create({
      data: { secretHash: 'old-session-hash', tokenFingerprint: 'f', expiresAt: new Date(Date.now() - 25 * 3600_000) },
    });
    const recent = await app.db.consoleSession.create({
      data: { secretHash: 'recent-session-hash', tokenFingerprint: 'f', expiresAt: new Date(Date.now() - 3600_000) },
    });
    await signIn(app, TEST_ADMIN_TOKEN);
    expect(await app.db.consoleSession.findUnique({ where: { id: old.id } })).toBeNull();
    expect(await app.db.consoleSession.findUnique({ where: { id: recent.id } })).not.toBeNull();
  });

  it('sign-in is limited per address at RATE_LIMIT_BROWSER, the pages at RATE_LIMIT_ADMIN (forged cookies counted)', async () => {
    const limited = await buildTestApp(database.url, { env: { RATE_LIMIT_BROWSER: '3', RATE_LIMIT_ADMIN: '4' } });
    try {
      const logins = [];
      for (let i = 0; i < 4; i += 1) logins.push((await limited.inject({ method: 'GET', url: '/console/login' })).statusCode);
      expect(logins).toEqual([200, 200, 200, 429]);
      const pages = [];
      for (let i = 0; i < 5; i += 1)
        pages.push((await limited.inject({ method: 'GET', url: '/console', headers: { cookie: 'console_session=forged.x' } })).statusCode);
      expect(pages).toEqual([303, 303, 303, 303, 429]);
    } finally {
      await limited.close();
    }
  });

  it('after sign-in, `next` leads only to a console page', async () => {
    expect((await signIn(app, TEST_ADMIN_TOKEN, '/console/search?q=x')).response.headers.location).toBe('/console/search?q=x');
    for (const next of ['//evil.example/console', 'https://evil.example/', '/console/../admin', '/consolex', '/\\evil.example']) {
      expect((await signIn(app, TEST_ADMIN_TOKEN, next)).response.headers.location, next).toBe('/console');
    }
  });
});

describe('console pages', () => {
  it('have a CSP without inline script and load htmx from the service, and only that file from node_modules', async () => {
    const { cookie } = await signIn(app, TEST_ADMIN_TOKEN);
    const page = await app.inject({ method: 'GET', url: '/console', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<script src="/console/vendor/htmx/htmx.min.js" defer></script>');
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<]|\son[a-z]+="/);
    const htmx = await app.inject({ method: 'GET', url: '/console/vendor/htmx/htmx.min.js' });
    expect(htmx.statusCode).toBe(200);
    expect(htmx.headers['content-type']).toMatch(/javascript/);
    expect(htmx.body).toContain('htmx');
    expect((await app.inject({ method: 'GET', url: '/console/vendor/htmx/htmx.js' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/console/static/console.css' })).statusCode).toBe(200);
  });

  it('escape what they show: a search for markup comes back as text', async () => {
    const { cookie } = await signIn(app, TEST_ADMIN_TOKEN);
    const page = await app.inject({ method: 'GET', url: `/console/search?q=${encodeURIComponent('<img src=x onerror=alert(1)>')}`, headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('<img src=x');
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('development secrets', () => {
  it('a dev-secrets.json from before the console gains a console key, kept across starts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'console-secrets-'));
    try {
      const file = path.join(dataDir, 'dev-secrets.json');
      const old = {
        apiKey: 'dev_api_0123456789abcdef',
        adminToken: 'dev_admin_0123456789abcdef',
        encryptionKeys: `dev1:${Buffer.alloc(32, 3).toString('base64')}`,
      };
      writeFileSync(file, JSON.stringify(old));
      const first = applyDevelopmentDefaults(await loadConfig({}), { dataDir, print: () => {} });
      expect(first.console.sessionKeys).toHaveLength(1);
      expect(first.console.sessionKeys[0]).toHaveLength(32);
      expect(first.adminTokens).toEqual([old.adminToken]);
      const second = applyDevelopmentDefaults(await loadConfig({}), { dataDir, print: () => {} });
      expect(second.console.sessionKeys[0]!.equals(first.console.sessionKeys[0]!)).toBe(true);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject(old);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('CONSOLE_SESSION_KEYS must be base64 of 32 bytes; production requires it', async () => {
    await expect(loadConfig({ CONSOLE_SESSION_KEYS: 'c2hvcnQ=' })).rejects.toThrow(/CONSOLE_SESSION_KEYS: key 1 must be base64 of 32 bytes, not 5/);
    await expect(loadConfig({ CONSOLE_SESSION_TTL: 'forever' })).rejects.toThrow(/CONSOLE_SESSION_TTL/);
    await expect(loadConfig({ NODE_ENV: 'production' })).rejects.toThrow(/CONSOLE_SESSION_KEYS/);
  });
});
