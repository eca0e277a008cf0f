import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { defineError, NotFoundError, withDetails } from '../../src/lib/errors.ts';
import { buildTestApp, LogCapture, TEST_SECRET_KEY } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const GatewayUnavailable = defineError('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was sent', 503);

let database: TestDatabase;
let app: App;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, { logs });
  app.get('/test/crash', async () => {
    throw new Error(`driver exploded near ${TEST_SECRET_KEY}`);
  });
  app.get('/test/missing', async () => {
    throw new NotFoundError('Subscription');
  });
  app.get('/test/unavailable', async () => {
    throw withDetails(new GatewayUnavailable(), { paymentId: 'p_1' });
  });
  app.post('/test/strict', { schema: { body: Type.Object({ amount: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }) } }, async (request) => ({
    received: request.body,
  }));
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('error handler', () => {
  it('hides the message of an unexpected 5xx from the client and logs it with secrets scrubbed', async () => {
    const response = await app.inject({ method: 'GET', url: '/test/crash' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ statusCode: 500, code: 'INTERNAL_ERROR', error: 'Internal Server Error', message: 'Internal Server Error' });
    expect(logs.raw).toContain('driver exploded near');
    expect(logs.raw).not.toContain(TEST_SECRET_KEY);
  });

  it('maps coded errors to their status and code', async () => {
    const response = await app.inject({ method: 'GET', url: '/test/missing' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ statusCode: 404, code: 'NOT_FOUND', error: 'Not Found', message: 'Subscription not found' });
  });

  it('keeps the message and details of our own coded 5xx errors', async () => {
    const response = await app.inject({ method: 'GET', url: '/test/unavailable' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      statusCode: 503,
      code: 'GATEWAY_UNAVAILABLE',
      error: 'Service Unavailable',
      message: 'The gateway could not be reached; nothing was sent',
      details: { paymentId: 'p_1' },
    });
  });

  it('refuses unknown body fields instead of dropping them', async () => {
    const response = await app.inject({ method: 'POST', url: '/test/strict', payload: { amount: 5, status: 'SUCCEEDED' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request' });
    const ok = await app.inject({ method: 'POST', url: '/test/strict', payload: { amount: 5 } });
    expect(ok.json()).toEqual({ received: { amount: 5 } });
  });

  it('answers malformed JSON and wrong content types with the same shape', async () => {
    const malformed = await app.inject({ method: 'POST', url: '/test/strict', headers: { 'content-type': 'application/json' }, payload: '{"amount":' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const wrongType = await app.inject({ method: 'POST', url: '/test/strict', headers: { 'content-type': 'text/csv' }, payload: 'a,b' });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json()).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('answers unknown routes with a JSON 404', async () => {
    const response = await app.inject({ method: 'GET', url: '/no/such/route?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ statusCode: 404, code: 'NOT_FOUND', error: 'Not Found', message: 'Route GET /no/such/route not found' });
  });
});
