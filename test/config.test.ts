import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PRODUCTION_REQUIRED } from '../src/config.ts';

const KEY = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://billing.example',
  DATABASE_URL: 'postgresql://u:p@db:5432/billing',
  PAYMENT_API_BASE_URL: 'https://gateway.example',
  PAYMENT_SECRET_KEY: 'live_sk_abcdef',
  PAYMENT_MERCHANT_ID: 'M123',
  BILLING_KEY_ENCRYPTION_KEYS: KEY,
  API_KEYS: 'api_key_0123456789abcdef',
  ADMIN_TOKENS: 'admin_token_0123456789abcdef',
  CONSOLE_SESSION_KEYS: Buffer.alloc(32, 2).toString('base64'),
};

describe('loadConfig', () => {
  it('applies the defaults of docs/operating.md "Environment variables" when nothing is set', async () => {
    const config = await loadConfig({});
    expect(config).toMatchObject({
      env: 'development',
      host: '127.0.0.1',
      trustProxy: false,
      protectInternalRoutes: false,
      port: 3000,
      publicBaseUrl: 'http://localhost:3000',
      databaseUrl: undefined,
      gateway: { baseUrl: undefined, timeoutMs: 30000, mobileIssueKeyPath: '/v1/billing/mobile/issue-key', cancelPath: '/payments/cancel' },
      scheduler: { enabled: true, cron: '* * * * *', concurrency: 8, batchSize: 100, leaseMs: 90000 },
      retryDelaysMs: [86_400_000, 3 * 86_400_000, 5 * 86_400_000],
      timezone: 'Asia/Seoul',
      clock: 'system',
      registrationTtlMs: 30 * 60_000,
      amountMax: { CARD: undefined, MOBILE: undefined },
      embeddedDbPort: 54329,
      logLevel: 'info',
      console: { sessionTtlMs: 8 * 3_600_000, locale: 'en' },
    });
  });

  it('CONSOLE_LOCALE is the console’s language: en or ko, anything else refused naming it', async () => {
    expect((await loadConfig({ CONSOLE_LOCALE: 'ko' })).console.locale).toBe('ko');
    expect((await loadConfig({ CONSOLE_LOCALE: '' })).console.locale).toBe('en');
    await expect(loadConfig({ CONSOLE_LOCALE: 'fr' })).rejects.toThrow(/CONSOLE_LOCALE/);
  });

  it('PORTAL_WITHDRAWAL: 7 days by default, a duration, or off (null: the portal never offers withdrawal)', async () => {
    expect((await loadConfig({})).portalWithdrawalMs).toBe(7 * 86_400_000);
    expect((await loadConfig({ PORTAL_WITHDRAWAL: '14d' })).portalWithdrawalMs).toBe(14 * 86_400_000);
    expect((await loadConfig({ PORTAL_WITHDRAWAL: 'off' })).portalWithdrawalMs).toBeNull();
    await expect(loadConfig({ PORTAL_WITHDRAWAL: 'a week' })).rejects.toThrow(/PORTAL_WITHDRAWAL: "a week" is not a duration/);
  });

  it('reads only the source it is given, not process.env', async () => {
    process.env.PORT = '4321';
    try {
      expect((await loadConfig({})).port).toBe(3000);
    } finally {
      delete process.env.PORT;
    }
  });

  it('coerces numbers and booleans and derives dependent defaults', async () => {
    const config = await loadConfig({
      PORT: '8080',
      SCHEDULER_ENABLED: 'false',
      PAYMENT_TIMEOUT_MS: '1000',
      PUBLIC_BASE_URL: 'https://billing.example/',
      RETRY_DELAYS: '12h,2d',
      AMOUNT_MAX_MOBILE: '500000',
    });
    expect(config.port).toBe(8080);
    expect(config.scheduler.enabled).toBe(false);
    expect(config.scheduler.leaseMs).toBe(2 * 1000 + 30000);
    expect(config.publicBaseUrl).toBe('https://billing.example');
    expect(config.retryDelaysMs).toEqual([12 * 3_600_000, 2 * 86_400_000]);
    expect(config.amountMax.MOBILE).toBe(500000);
  });

  it('treats empty strings as unset', async () => {
    expect((await loadConfig({ DATABASE_URL: '', PORT: '' })).databaseUrl).toBeUndefined();
  });

  it('parses several encryption keys; the first encrypts', async () => {
    const second = Buffer.alloc(32, 2).toString('base64');
    const config = await loadConfig({ BILLING_KEY_ENCRYPTION_KEYS: `${KEY}, k0:${second}` });
    expect(config.encryptionKeys.map((k) => k.id)).toEqual(['k1', 'k0']);
    expect(config.encryptionKeys[1]!.key.equals(Buffer.alloc(32, 2))).toBe(true);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ CLOCK: 'sundial' }, /CLOCK/],
    [{ RETRY_DELAYS: '1d,1d' }, /RETRY_DELAYS/],
    [{ RETRY_DELAYS: 'soon' }, /RETRY_DELAYS/],
    [{ REGISTRATION_TTL: '0m' }, /REGISTRATION_TTL/],
    [{ BILLING_TIMEZONE: 'Mars/Olympus' }, /BILLING_TIMEZONE/],
    [{ BILLING_KEY_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' }, /32 bytes/],
    [{ BILLING_KEY_ENCRYPTION_KEYS: 'nocolon' }, /keyId:base64/],
    [{ API_KEYS: 'short' }, /at least 16/],
    [{ API_KEYS: 'same_token_0123456789', ADMIN_TOKENS: 'same_token_0123456789' }, /must not share/],
    [{ PUBLIC_BASE_URL: 'not a url' }, /PUBLIC_BASE_URL/],
    [{ PAYMENT_API_BASE_URL: 'https://gateway.example' }, /PAYMENT_SECRET_KEY and PAYMENT_MERCHANT_ID/],
    [{ PAYMENT_MERCHANT_ID: 'M'.repeat(21) }, /PAYMENT_MERCHANT_ID/],
    [{ SCHEDULER_CRON: 'every minute' }, /SCHEDULER_CRON/],
    [{ SCHEDULER_CRON: '61 * * * *' }, /SCHEDULER_CRON.*minute/],
    [{ TRUST_PROXY: 'yes please' }, /TRUST_PROXY/],
    [{ METRICS_TOKENS: 'short' }, /at least 16/],
    [{ METRICS_TOKENS: 'same_token_0123456789', ADMIN_TOKENS: 'same_token_0123456789' }, /METRICS_TOKENS must not share/],
  ])('refuses %o with a message naming the variable', async (env, message) => {
    const attempt = loadConfig(env as Record<string, string>);
    await expect(attempt).rejects.toBeInstanceOf(ConfigError);
    await expect(attempt).rejects.toThrow(message);
  });

  it('accepts a complete production environment: listens on every interface, protects /docs and /metrics', async () => {
    const config = await loadConfig(PRODUCTION_ENV);
    expect(config.env).toBe('production');
    expect(config.gateway.baseUrl).toBe('https://gateway.example');
    expect(config.host).toBe('0.0.0.0');
    expect(config.protectInternalRoutes).toBe(true);
    expect((await loadConfig({ ...PRODUCTION_ENV, HOST: '10.0.0.5' })).host).toBe('10.0.0.5');
  });

  it.each([
    ['false', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.1, 10.1.0.0/16', '10.0.0.1,10.1.0.0/16'],
    ['::1', '::1'],
  ])('reads TRUST_PROXY=%s', async (value, expected) => {
    expect((await loadConfig({ TRUST_PROXY: value })).trustProxy).toEqual(expected);
  });

  it('reads the read replica: unset by default (reads go to DATABASE_URL), its wait and lag bounds as durations', async () => {
    expect((await loadConfig({})).readReplica).toEqual({ url: undefined, waitMs: 2000, maxLagMs: 1000 });
    const config = await loadConfig({
      DATABASE_READ_URL: 'postgresql://reader:pw@replica:5432/billing',
      READ_REPLICA_WAIT: '500ms',
      READ_REPLICA_MAX_LAG: '5s',
    });
    expect(config.readReplica).toEqual({ url: 'postgresql://reader:pw@replica:5432/billing', waitMs: 500, maxLagMs: 5000 });
    await expect(loadConfig({ READ_REPLICA_WAIT: 'soon' })).rejects.toThrow(/READ_REPLICA_WAIT: "soon" is not a duration/);
  });

  it.each(
    ['DATABASE_URL', 'DATABASE_READ_URL'].flatMap((name) =>
      ['not a url', 'mysql://u:secret-password@db/billing', 'postgresql://'].map((value) => [name, value]),
    ),
  )('refuses %s=%s in one line that does not repeat it', async (name, value) => {
    const attempt = loadConfig({ [name]: value });
    await expect(attempt).rejects.toThrow(new RegExp(`^${name}: not a PostgreSQL connection string`));
    const message = await attempt.then(
      () => '',
      (error: Error) => error.message,
    );
    expect(message).not.toContain('secret-password');
    expect(message).not.toContain('\n');
  });

  it.each(PRODUCTION_REQUIRED)('in production, refuses the development default of %s and names it', async (name) => {
    const env: Record<string, string> = { ...PRODUCTION_ENV };
    delete env[name];
    if (name === 'PAYMENT_API_BASE_URL') delete env.PAYMENT_SECRET_KEY;
    await expect(loadConfig(env)).rejects.toThrow(new RegExp(name));
  });

  it('in production, names every missing variable at once, each once', async () => {
    const message = await loadConfig({ NODE_ENV: 'production' }).then(
      () => '',
      (error: Error) => error.message,
    );
    for (const name of PRODUCTION_REQUIRED) {
      expect(message.match(new RegExp(`\\b${name}\\b`, 'g')), name).toHaveLength(1);
    }
  });

  it('in production, refuses the simulated clock', async () => {
    await expect(loadConfig({ ...PRODUCTION_ENV, CLOCK: 'simulated' })).rejects.toThrow(/CLOCK=simulated/);
  });
});

describe('Toss Payments (TOSS_*)', () => {
  const LIVE = { TOSS_API_BASE_URL: 'https://api.tosspayments.com', TOSS_SECRET_KEY: 'live_sk_abcdefghij0123', TOSS_CLIENT_KEY: 'live_ck_abcdefghij0123' };
  const TEST = { TOSS_API_BASE_URL: 'https://api.tosspayments.com', TOSS_SECRET_KEY: 'test_sk_abcdefghij0123', TOSS_CLIENT_KEY: 'test_ck_abcdefghij0123' };
  const messageOf = (env: Record<string, string>) =>
    loadConfig(env).then(
      () => '',
      (error: Error) => error.message,
    );

  it('outside production, nothing set is the built-in sandbox with the default inquiry delays (each from the one before)', async () => {
    const config = await loadConfig({});
    expect(config.toss).toEqual({
      mode: 'SANDBOX',
      baseUrl: undefined,
      secretKey: undefined,
      clientKey: undefined,
      inquiryDelaysMs: [60_000, 300_000, 1_800_000, 7_200_000, ...Array(7).fill(86_400_000)],
      keyDeletion: undefined,
    });
    expect((await loadConfig({ NODE_ENV: 'test' })).toss.mode).toBe('SANDBOX');
  });

  it('in production, nothing set is Toss off; all three set is Toss, with live keys', async () => {
    expect((await loadConfig(PRODUCTION_ENV)).toss.mode).toBe('OFF');
    const config = await loadConfig({ ...PRODUCTION_ENV, ...LIVE, TOSS_API_BASE_URL: 'https://api.tosspayments.com/' });
    expect(config.toss).toMatchObject({ mode: 'API', baseUrl: 'https://api.tosspayments.com', secretKey: LIVE.TOSS_SECRET_KEY });
  });

  it('in production, some but not all of the three is refused, naming what is missing', async () => {
    const message = await messageOf({ ...PRODUCTION_ENV, TOSS_SECRET_KEY: LIVE.TOSS_SECRET_KEY });
    expect(message).toMatch(/TOSS_SECRET_KEY is set, so TOSS_API_BASE_URL and TOSS_CLIENT_KEY must be set too/);
    expect(message).not.toContain(LIVE.TOSS_SECRET_KEY);
  });

  it('outside production, a base URL takes both keys; test keys are taken, given keys without a URL go to the sandbox', async () => {
    expect((await loadConfig(TEST)).toss).toMatchObject({ mode: 'API', clientKey: TEST.TOSS_CLIENT_KEY });
    await expect(loadConfig({ TOSS_API_BASE_URL: TEST.TOSS_API_BASE_URL })).rejects.toThrow(
      /TOSS_API_BASE_URL is set, so TOSS_SECRET_KEY and TOSS_CLIENT_KEY must be set too/,
    );
    await expect(
      loadConfig({ TOSS_API_BASE_URL: 'ftp://toss.example', TOSS_SECRET_KEY: TEST.TOSS_SECRET_KEY, TOSS_CLIENT_KEY: TEST.TOSS_CLIENT_KEY }),
    ).rejects.toThrow(/TOSS_API_BASE_URL: "ftp:\/\/toss.example" is not an http\(s\) URL/);
    const sandbox = await loadConfig({ TOSS_SECRET_KEY: TEST.TOSS_SECRET_KEY, TOSS_CLIENT_KEY: TEST.TOSS_CLIENT_KEY });
    expect(sandbox.toss).toMatchObject({ mode: 'SANDBOX', secretKey: TEST.TOSS_SECRET_KEY });
  });

  it.each([
    ['development', { ...TEST, TOSS_SECRET_KEY: LIVE.TOSS_SECRET_KEY }, 'TOSS_SECRET_KEY: a live key (live_) is refused unless NODE_ENV=production'],
    ['test', { ...TEST, TOSS_CLIENT_KEY: LIVE.TOSS_CLIENT_KEY }, 'TOSS_CLIENT_KEY: a live key (live_) is refused unless NODE_ENV=production'],
    ['production', { ...LIVE, TOSS_SECRET_KEY: TEST.TOSS_SECRET_KEY }, 'TOSS_SECRET_KEY: a test key (test_) is refused when NODE_ENV=production'],
    ['production', { ...LIVE, TOSS_CLIENT_KEY: TEST.TOSS_CLIENT_KEY }, 'TOSS_CLIENT_KEY: a test key (test_) is refused when NODE_ENV=production'],
    ['development', { ...TEST, TOSS_SECRET_KEY: 'test_gsk_docs_abcdefghij0123' }, 'TOSS_SECRET_KEY: a payment widget key (_gck_/_gsk_) is refused'],
    ['production', { ...LIVE, TOSS_CLIENT_KEY: 'live_gck_abcdefghij0123' }, 'TOSS_CLIENT_KEY: a payment widget key (_gck_/_gsk_) is refused'],
    ['development', { ...TEST, TOSS_CLIENT_KEY: 'test_sk_abcdefghij0123' }, 'TOSS_CLIENT_KEY: not a Toss client key'],
    ['development', { ...TEST, TOSS_SECRET_KEY: 'sk_test_abcdefghij0123' }, 'TOSS_SECRET_KEY: not a Toss secret key'],
  ])('NODE_ENV=%s refuses %o at start, naming the variable and not the value', async (nodeEnv, toss, expected) => {
    const base = nodeEnv === 'production' ? PRODUCTION_ENV : { NODE_ENV: nodeEnv };
    const message = await messageOf({ ...base, ...toss });
    expect(message).toContain(expected);
    for (const value of [toss.TOSS_SECRET_KEY, toss.TOSS_CLIENT_KEY]) expect(message).not.toContain(value);
  });

  it('TOSS_INQUIRY_DELAYS: delays each from the one before (need not increase); anything else refused naming it', async () => {
    expect((await loadConfig({ TOSS_INQUIRY_DELAYS: '30s,1h,1h' })).toss.inquiryDelaysMs).toEqual([30_000, 3_600_000, 3_600_000]);
    await expect(loadConfig({ TOSS_INQUIRY_DELAYS: '1m,soon' })).rejects.toThrow(/TOSS_INQUIRY_DELAYS/);
  });

  it('TOSS_KEY_DELETION: a method and a path holding {billingKey}; unset, no deletion', async () => {
    expect((await loadConfig({ TOSS_KEY_DELETION: 'DELETE /v1/billing/{billingKey}' })).toss.keyDeletion).toEqual({
      method: 'DELETE',
      path: '/v1/billing/{billingKey}',
    });
    expect((await loadConfig({ TOSS_KEY_DELETION: 'POST /v1/billing/{billingKey}/delete' })).toss.keyDeletion).toEqual({
      method: 'POST',
      path: '/v1/billing/{billingKey}/delete',
    });
    for (const value of ['/v1/billing/{billingKey}', 'GET /v1/billing/{billingKey}', 'DELETE /v1/billing']) {
      await expect(loadConfig({ TOSS_KEY_DELETION: value })).rejects.toThrow(/TOSS_KEY_DELETION/);
    }
  });
});
