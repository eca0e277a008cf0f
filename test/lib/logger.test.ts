import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { createRedactor, ISSUED_SECRETS_KEPT, maskPhoneNumber, REDACTED } from '../../src/lib/redact.ts';
import { LogCapture } from '../helpers/app.ts';

const SECRET_KEY = 'live_sk_TopSecretValue_123';
const BILLING_KEY = 'BK_9f8e7d6c5b4a3210';
const PHONE = '01012345678';
const NAME = '홍길동';

function capture() {
  const logs = new LogCapture();
  const redactor = createRedactor([SECRET_KEY]);
  const logger = createLogger({ level: 'trace', redactor, destination: logs });
  return { logs, logger, redactor };
}

function expectNoSecrets(raw: string) {
  for (const secret of [SECRET_KEY, BILLING_KEY, PHONE, NAME, Buffer.from(`${SECRET_KEY}:`).toString('base64')]) {
    expect(raw).not.toContain(secret);
  }
}

describe('logger redaction', () => {
  it('logs a request by its path, without the query string, a customer’s userId or a portal link’s token', () => {
    const { logs, logger } = capture();
    for (const url of ['/admin/customers/cust-8812/erasure?x=1', '/portal/session/PLtok_abcdef123456', '/admin/payments?userId=cust-8812']) {
      logger.info({ req: { method: 'POST', url, ip: '10.0.0.1' } }, 'incoming request');
    }
    expect(logs.lines.map((line) => (line.req as { url: string }).url)).toEqual([
      '/admin/customers/:userId/erasure',
      '/portal/session/:token',
      '/admin/payments',
    ]);
    expect(logs.raw).not.toContain('cust-8812');
    expect(logs.raw).not.toContain('PLtok_abcdef123456');
  });

  it('logs the Toss window page by its path with the registration’s state named, never its value', () => {
    const { logs, logger } = capture();
    logger.info({ req: { method: 'GET', url: '/billing/toss-window/St4te_abcdef123456?lang=en', ip: '10.0.0.1' } }, 'incoming request');
    expect(logs.lines.map((line) => (line.req as { url: string }).url)).toEqual(['/billing/toss-window/:state']);
    expect(logs.raw).not.toContain('St4te_abcdef123456');
  });

  it('redacts sensitive fields at any depth, in objects and arrays', () => {
    const { logs, logger } = capture();
    logger.info(
      {
        headers: { Authorization: `Basic ${Buffer.from(`${SECRET_KEY}:`).toString('base64')}` },
        gateway: { response: { billingKey: BILLING_KEY, userPhoneNumber: PHONE, phoneNumber: PHONE, userName: NAME } },
        batch: [{ billingKey: BILLING_KEY }],
        amount: 9900,
      },
      'gateway call',
    );
    expectNoSecrets(logs.raw);
    const line = logs.lines[0]!;
    expect(line.amount).toBe(9900);
    expect((line.headers as Record<string, unknown>).Authorization).toBe(REDACTED);
    expect((line.gateway as { response: Record<string, unknown> }).response.billingKey).toBe(REDACTED);
    expect((line.batch as Record<string, unknown>[])[0]!.billingKey).toBe(REDACTED);
  });

  it('scrubs known secret values from messages and error objects', () => {
    const { logs, logger } = capture();
    logger.warn(`calling with ${SECRET_KEY}`);
    const error = Object.assign(new Error(`request failed for key ${SECRET_KEY}`), {
      request: { billingKey: BILLING_KEY },
    });
    logger.error({ err: error }, 'failed');
    expectNoSecrets(logs.raw);
    expect(logs.raw).toContain('request failed for key');
    expect(logs.lines).toHaveLength(2);
  });

  it('scrubs secrets added later, such as a billing key just issued', () => {
    const { logs, logger, redactor } = capture();
    redactor.addIssuedSecret(BILLING_KEY);
    logger.info({ note: `issued ${BILLING_KEY}` }, `key ${BILLING_KEY}`);
    expectNoSecrets(logs.raw);
  });

  it('keeps the last issued secrets only, and every configured one whatever was issued since', () => {
    const { logs, logger, redactor } = capture();
    const issued = Array.from({ length: ISSUED_SECRETS_KEPT + 1 }, (_, i) => `BK_issued_${String(i).padStart(6, '0')}`);
    redactor.addSecret('live_sk_SecondConfigured_456');
    for (const key of issued) redactor.addIssuedSecret(key);
    logger.info({ oldest: issued[0], newest: issued.at(-1), lastKept: issued[1], configured: [SECRET_KEY, 'live_sk_SecondConfigured_456'] }, 'keys');
    const [line] = logs.lines as Array<Record<string, unknown>>;
    // The process keeps nothing per registration it served: the oldest issued key is no longer scanned for.
    expect(line!.oldest).toBe(issued[0]);
    expect(line!.newest).toBe(REDACTED);
    expect(line!.lastKept).toBe(REDACTED);
    expect(line!.configured).toEqual([REDACTED, REDACTED]);
  });

  it('keeps an issued secret learned again as the newest', () => {
    const { logs, logger, redactor } = capture();
    redactor.addIssuedSecret(BILLING_KEY);
    for (let i = 0; i < ISSUED_SECRETS_KEPT - 1; i += 1) redactor.addIssuedSecret(`BK_issued_${String(i).padStart(6, '0')}`);
    redactor.addIssuedSecret(BILLING_KEY);
    redactor.addIssuedSecret('BK_issued_one_more');
    logger.info({ note: `issued ${BILLING_KEY}` }, 'key');
    expectNoSecrets(logs.raw);
  });

  it('does not mutate the object it logs', () => {
    const { logger } = capture();
    const payload = { billingKey: BILLING_KEY };
    logger.info(payload, 'x');
    expect(payload.billingKey).toBe(BILLING_KEY);
  });

  it('masks phone numbers for display', () => {
    expect(maskPhoneNumber('010-1234-5678')).toBe('010-****-5678');
    expect(maskPhoneNumber('01012345678')).toBe('010-****-5678');
    expect(maskPhoneNumber(undefined)).toBeUndefined();
  });
});
