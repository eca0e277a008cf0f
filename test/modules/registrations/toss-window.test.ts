// Our page that opens Toss's card window (docs/api.md "Gateways"): against the real Toss (TOSS_API_BASE_URL and keys
// set) a Toss registration's window.url names it; it hands Toss's script the client key, the customerKey and the
// redirect URLs and nothing secret, under a Content-Security-Policy of its own; an unknown, expired or finished
// registration is refused. "The real Toss" here is a second service's Toss sandbox, listening on its own port, so
// the key exchange after the window is real HTTP as it would be against Toss.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_SECRET_KEY } from '../../../src/dev-secrets.ts';
import { TOSS_SDK_URL } from '../../../src/modules/registrations/toss-window.page.ts';
import { apiHeaders, buildTestApp, LogCapture, startTestApp, TEST_SECRET_KEY } from '../../helpers/app.ts';
import { setClock } from '../../helpers/billing.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';

let tossSide: { database: TestDatabase; app: App; baseUrl: string };
let database: TestDatabase;
let app: App;
const logs = new LogCapture();

beforeAll(async () => {
  const tossDatabase = await createTestDatabase();
  tossSide = { database: tossDatabase, ...(await startTestApp(tossDatabase.url)) };
  database = await createTestDatabase();
  app = await buildTestApp(database.url, {
    logs,
    env: {
      CLOCK: 'simulated',
      PUBLIC_BASE_URL: 'https://billing.merchant.test',
      TOSS_API_BASE_URL: `${tossSide.baseUrl}/sandbox/toss`,
      TOSS_SECRET_KEY: TOSS_SANDBOX_SECRET_KEY,
      TOSS_CLIENT_KEY: TOSS_SANDBOX_CLIENT_KEY,
    },
  });
  await setClock(app, '2027-03-10T01:00:00.000Z');
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
  await tossSide?.app.close();
  await tossSide?.database.drop();
});
beforeEach(() => truncateAll(app.db));

interface Registration {
  id: string;
  state: string;
  window: { gateway: string; clientKey: string; customerKey: string; successUrl: string; failUrl: string; url?: string };
}

async function registerToss(target: App = app): Promise<Registration> {
  const created = await target.inject({
    method: 'POST',
    url: '/api/v1/registrations',
    headers: apiHeaders,
    payload: { userId: 'toss-window-user', method: 'CARD', amount: 15000, orderName: 'Toss plan', gateway: 'TOSS', issueKeyOnly: true },
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.json() as Registration;
}

const pathOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** The CSP header's directives, by name. */
function directives(header: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of String(header).split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out[name] = sources;
  }
  return out;
}

describe('GET /billing/toss-window/:state against the real Toss', () => {
  it('is the registration’s window.url, and hands Toss’s script the client key, customerKey and redirects under its own CSP', async () => {
    const registration = await registerToss();
    const { window } = registration;
    expect(window.url).toBe(`https://billing.merchant.test/billing/toss-window/${registration.state}`);
    expect(window.clientKey).toBe(TOSS_SANDBOX_CLIENT_KEY);

    const page = await app.inject({ method: 'GET', url: pathOf(window.url!) });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<html lang="ko">');
    expect(page.body).toContain(TOSS_SDK_URL);
    const terms = JSON.parse(/<script type="application\/json" id="toss-window-terms">(.*?)<\/script>/.exec(page.body)![1]!);
    expect(terms).toEqual({
      clientKey: TOSS_SANDBOX_CLIENT_KEY,
      customerKey: window.customerKey,
      successUrl: window.successUrl,
      failUrl: window.failUrl,
      sdkUrl: TOSS_SDK_URL,
    });
    // Only the public client key: neither Toss's secret key nor the other gateway's, in any form.
    for (const secret of [TOSS_SANDBOX_SECRET_KEY, TEST_SECRET_KEY, Buffer.from(`${TOSS_SANDBOX_SECRET_KEY}:`).toString('base64')]) {
      expect(page.body).not.toContain(secret);
    }
    expect(page.body).toContain('<noscript>');

    const csp = directives(page.headers['content-security-policy']);
    expect(csp['script-src']).toHaveLength(2);
    expect(csp['script-src']).toEqual(expect.arrayContaining(['https://js.tosspayments.com', expect.stringMatching(/^'sha256-[A-Za-z0-9+/=]+'$/)]));
    expect(csp['frame-src']).toEqual(['https://*.tosspayments.com']);
    expect(csp['frame-ancestors']).toEqual(["'none'"]);
    expect(csp['object-src']).toEqual(["'none'"]);

    const english = await app.inject({ method: 'GET', url: `${pathOf(window.url!)}?lang=en` });
    expect(english.statusCode).toBe(200);
    expect(english.body).toContain('<html lang="en">');
    expect(english.body).toContain('Open the card window');

    // The request logs name the page by its path, the state as its parameter: neither it nor the customerKey is written.
    expect(logs.lines.some((line) => (line.req as { url?: string } | undefined)?.url === '/billing/toss-window/:state')).toBe(true);
    expect(logs.raw).not.toContain(registration.state);
    expect(logs.raw).not.toContain(window.customerKey);
  });

  it('answers 404 for an unknown state and for a Danal registration, 410 once expired or finished', async () => {
    const unknown = await app.inject({ method: 'GET', url: `/billing/toss-window/${randomBytes(32).toString('base64url')}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toContain('text/html');
    expect(unknown.body).toContain('유효하지 않은 링크입니다');
    const unknownJson = await app.inject({
      method: 'GET',
      url: `/billing/toss-window/${randomBytes(32).toString('base64url')}`,
      headers: { accept: 'application/json' },
    });
    expect(unknownJson.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });

    const danal = await app.inject({
      method: 'POST',
      url: '/api/v1/registrations',
      headers: apiHeaders,
      payload: { userId: 'danal-window-user', method: 'CARD', amount: 15000, orderName: 'Danal plan' },
    });
    const danalState = (danal.json() as Registration).state;
    expect((await app.inject({ method: 'GET', url: `/billing/toss-window/${danalState}`, headers: { accept: 'application/json' } })).statusCode).toBe(404);

    // Finished: the window answered, the key was issued (through the Toss side, over HTTP), the registration completed.
    const finished = await registerToss();
    const authorized = await tossSide.app.inject({
      method: 'POST',
      url: '/sandbox/toss/window/authorize',
      payload: {
        clientKey: finished.window.clientKey,
        customerKey: finished.window.customerKey,
        successUrl: finished.window.successUrl,
        failUrl: finished.window.failUrl,
        decision: 'approve',
      },
    });
    const completed = await app.inject({ method: 'GET', url: pathOf(authorized.json().redirectUrl), headers: { accept: 'application/json' } });
    expect(completed.json(), completed.body).toMatchObject({ status: 'success', registrationId: finished.id });
    const used = await app.inject({ method: 'GET', url: `/billing/toss-window/${finished.state}`, headers: { accept: 'application/json' } });
    expect(used.statusCode).toBe(410);
    expect(used.json()).toMatchObject({ code: 'STATE_USED' });
    const usedPage = await app.inject({ method: 'GET', url: `/billing/toss-window/${finished.state}?lang=en` });
    expect(usedPage.statusCode).toBe(410);
    expect(usedPage.body).toContain('This registration is already finished');

    // Expired: past its expiresAt on the service's clock (REGISTRATION_TTL, 30 minutes).
    const late = await registerToss();
    await setClock(app, '2027-03-10T01:31:00.000Z');
    try {
      const expired = await app.inject({ method: 'GET', url: `/billing/toss-window/${late.state}`, headers: { accept: 'application/json' } });
      expect(expired.statusCode).toBe(410);
      expect(expired.json()).toMatchObject({ code: 'STATE_EXPIRED' });
      expect((await app.inject({ method: 'GET', url: `/billing/toss-window/${late.state}` })).body).toContain('만료된 링크입니다');
    } finally {
      await setClock(app, '2027-03-10T01:00:00.000Z');
    }
  });

  it('on the built-in sandbox the window stays the sandbox’s, and this page serves nothing', async () => {
    const registration = await registerToss(tossSide.app);
    expect(new URL(registration.window.url!).pathname).toBe('/sandbox/toss/window');
    expect((await tossSide.app.inject({ method: 'GET', url: `/billing/toss-window/${registration.state}` })).statusCode).toBe(404);
  });
});
