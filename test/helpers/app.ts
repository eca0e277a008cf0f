// Builds the real app (buildApp) against a test database, with logs captured in memory when asked.
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.ts';
import { buildApp, type App } from '../../src/app.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createRedactor } from '../../src/lib/redact.ts';

export const TEST_API_KEY = 'test_api_key_0123456789abcdef';
export const TEST_ADMIN_TOKEN = 'test_admin_token_0123456789abcdef';
export const TEST_SECRET_KEY = 'test_sk_5ecret_do_not_leak_42';
export const TEST_ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 7).toString('base64')}`;
export const TEST_CONSOLE_SESSION_KEYS = Buffer.alloc(32, 9).toString('base64');

export async function testConfig(databaseUrl: string, env: Record<string, string> = {}): Promise<Config> {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SCHEDULER_ENABLED: 'false',
    // Tests drive many checkouts from one address within a minute; test/plugins/limits.test.ts sets low limits.
    RATE_LIMIT_BROWSER: '100000',
    RATE_LIMIT_API: '100000',
    RATE_LIMIT_ADMIN: '100000',
    RATE_LIMIT_AUTH_FAILURES: '100000',
    API_KEYS: TEST_API_KEY,
    ADMIN_TOKENS: TEST_ADMIN_TOKEN,
    BILLING_KEY_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    CONSOLE_SESSION_KEYS: TEST_CONSOLE_SESSION_KEYS,
    PAYMENT_SECRET_KEY: TEST_SECRET_KEY,
    PAYMENT_MERCHANT_ID: 'TEST_MERCHANT',
    DATABASE_URL: databaseUrl,
    ...env,
  });
}

/** Collects every log line as parsed JSON, plus the raw text for leak checks. */
export class LogCapture extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];
  raw = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void) {
    const text = chunk.toString('utf8');
    this.raw += text;
    for (const line of text.split('\n')) if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    callback();
  }
}

export async function buildTestApp(databaseUrl: string, options: { env?: Record<string, string>; logs?: LogCapture } = {}): Promise<App> {
  const config = await testConfig(databaseUrl, options.env);
  const redactor = createRedactor([config.gateway.secretKey, ...config.apiKeys, ...config.adminTokens]);
  const logger = options.logs ? createLogger({ level: 'trace', redactor, destination: options.logs }) : createLogger({ level: 'silent', redactor });
  return buildApp(config, { logger, redactor });
}

/** The app listening on a free port, with PUBLIC_BASE_URL pointing at it, as a browser would reach it. */
export async function startTestApp(
  databaseUrl: string,
  options: { env?: Record<string, string>; logs?: LogCapture } = {},
): Promise<{ app: App; baseUrl: string }> {
  const { freePort } = await import('../setup/global-setup.ts');
  // A free port can be taken by another process (a parallel test file's server or database) between the probe and
  // the listen: then the app is built again on another port, a few times at most.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const app = await buildTestApp(databaseUrl, { ...options, env: { PUBLIC_BASE_URL: baseUrl, ...options.env } });
    try {
      await app.listen({ host: '127.0.0.1', port });
      return { app, baseUrl };
    } catch (error) {
      await app.close();
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}

export const apiHeaders = { authorization: `Bearer ${TEST_API_KEY}` };
