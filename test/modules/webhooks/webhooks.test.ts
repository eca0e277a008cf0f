// Webhook endpoints and deliveries (issue #13, docs/api.md "Events and webhooks") against a real local HTTP receiver that verifies every
// signature with the `standardwebhooks` package, as a merchant's receiver would.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { setClock, subscribe } from '../../helpers/billing.ts';
import { decideWindow, follow } from '../../helpers/checkout.ts';
import { waitFor } from '../../helpers/service.ts';
import { TEST_SAFETY_NET_MS } from '../../setup/safety-nets.ts';
import type { PublicEvent } from '../../../src/modules/events/events.render.ts';

const running = useRunningApp({
  CLOCK: 'simulated',
  WEBHOOK_RETRY_DELAYS: '50ms,50ms,1200ms',
  // Longer than any wait here: a request that hangs ends when its receiver closes, never by the dispatcher's timeout,
  // however slowly the machine runs.
  WEBHOOK_TIMEOUT_MS: String(TEST_SAFETY_NET_MS),
  WEBHOOK_DISABLE_AFTER: '1s',
});

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Answer = number | 'hang';

const receivers: Server[] = [];
afterEach(async () => {
  for (const server of receivers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A receiver on a free port; `answer` decides each request's status (or to never answer). */
async function receiver(answer: (request: Received, index: number) => Answer = () => 200) {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const received = { url: req.url ?? '', headers: req.headers, body };
      const status = answer(received, requests.length);
      requests.push(received);
      if (status === 'hang') return;
      res.writeHead(status, status >= 300 && status < 400 ? { location: '/followed' } : {}).end('ok');
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, requests };
}

const api = (method: string, url: string, payload?: object, key?: string) =>
  running.app.inject({
    method: method as 'POST',
    url,
    headers: { ...apiHeaders, ...(key ? { 'idempotency-key': key } : {}) },
    ...(payload ? { payload } : {}),
  });

async function endpoint(url: string, body: object = {}) {
  const response = await api('POST', '/api/v1/webhook-endpoints', { url, ...body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as { id: string; secret: string; status: string };
}

const verify = (secret: string, request: Received) =>
  new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as PublicEvent;

/**
 * Sends what is due until every committed event is numbered (events wait for older transactions anywhere in the
 * cluster, and other test files run theirs meanwhile) and nothing is due.
 */
const deliver = () =>
  waitFor('events numbered and delivered', async () => {
    await running.app.webhooks.drain();
    return (await running.app.db.event.count({ where: { sequence: null } })) === 0;
  }).then(() => running.app.webhooks.drain());

async function eventsOf(type?: string): Promise<PublicEvent[]> {
  const response = await api('GET', `/api/v1/events?limit=100${type ? `&type=${type}` : ''}`);
  return (response.json() as { items: PublicEvent[] }).items;
}

describe('webhook endpoints', () => {
  it('answers the secret once, keeps it encrypted, and a replay answers it again without storing it', async () => {
    const created = await api('POST', '/api/v1/webhook-endpoints', { url: 'https://merchant.example/hooks', description: 'main' }, 'k-create');
    expect(created.statusCode).toBe(201);
    const body = created.json() as { id: string; secret: string; eventTypes: string[]; status: string };
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body).toMatchObject({ eventTypes: ['*'], status: 'ENABLED', description: 'main' });
    const replay = await api('POST', '/api/v1/webhook-endpoints', { url: 'https://merchant.example/hooks', description: 'main' }, 'k-create');
    expect(replay.json()).toEqual(body);
    const read = await api('GET', `/api/v1/webhook-endpoints/${body.id}`);
    expect(read.json()).not.toHaveProperty('secret');
    expect((await api('GET', '/api/v1/webhook-endpoints')).json().items).toHaveLength(1);
    const raw = await running.app.db.$queryRawUnsafe<{ text: string }[]>(
      `SELECT (SELECT string_agg(secrets::text, '') FROM webhook_endpoints) || (SELECT string_agg("responseBody"::text, '') FROM idempotency_records) AS text`,
    );
    expect(raw[0]!.text).not.toContain(body.secret.slice(6));
  });

  it('refuses bad URLs and unknown types with 400, and answers 404 for unknown ids', async () => {
    for (const url of ['ftp://merchant.example/x', 'https://user:pw@merchant.example/x', 'not a url']) {
      const response = await api('POST', '/api/v1/webhook-endpoints', { url });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
    expect((await api('POST', '/api/v1/webhook-endpoints', { url: 'https://m.example', eventTypes: ['payment.exploded'] })).statusCode).toBe(400);
    expect((await api('POST', '/api/v1/webhook-endpoints', { url: 'https://m.example', extra: 1 })).statusCode).toBe(400);
    const missing = crypto.randomUUID();
    expect((await api('GET', `/api/v1/webhook-endpoints/${missing}`)).statusCode).toBe(404);
    expect((await api('DELETE', `/api/v1/webhook-endpoints/${missing}`)).statusCode).toBe(404);
    expect((await api('POST', `/api/v1/webhook-endpoints/${missing}/recover`, { since: '2030-01-01T00:00:00Z' })).statusCode).toBe(404);
  });
});

describe('deliveries', () => {
  it('delivers every event, signed, with the event as body and its id as webhook-id; the event shows the delivery', async () => {
    const target = await receiver();
    const { id, secret } = await endpoint(target.url);
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { amount: 9900, userPhoneNumber: '01099998888' });
    await deliver();
    const events = await eventsOf();
    expect(events).toHaveLength(3);
    expect(target.requests).toHaveLength(3);
    const received = target.requests.map((r) => verify(secret, r));
    expect(received.sort((a, b) => a.sequence - b.sequence)).toEqual(events);
    for (const request of target.requests) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60); // real time, not the simulated 2030
      expect(request.body).not.toContain('99998888');
    }
    const one = (await api('GET', `/api/v1/events/${events[0]!.id}`)).json();
    expect(one.deliveries).toEqual([{ endpointId: id, status: 'SUCCEEDED', attempts: 1, lastStatusCode: 200, deliveredAt: expect.any(String) }]);
  });

  it('only the types an endpoint subscribes to', async () => {
    const target = await receiver();
    await endpoint(target.url, { eventTypes: ['subscription.created'] });
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { amount: 9900 });
    await deliver();
    expect(target.requests.map((r) => JSON.parse(r.body).type)).toEqual(['subscription.created']);
  });

  it('retries a failed delivery with the same webhook-id until a 2xx; a redirect is a failure and is not followed', async () => {
    const target = await receiver((_r, index) => [500, 302, 200][index] ?? 200);
    const { secret } = await endpoint(target.url, { eventTypes: ['subscription.created'] });
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { amount: 9900 });
    await waitFor('three attempts', async () => {
      await deliver();
      return target.requests.length >= 3;
    });
    expect(target.requests.map((r) => r.url)).toEqual(['/hooks', '/hooks', '/hooks']);
    const ids = target.requests.map((r) => verify(secret, r).id);
    expect(new Set(ids).size).toBe(1);
    const [event] = await eventsOf('subscription.created');
    const delivery = (await api('GET', `/api/v1/events/${event!.id}`)).json().deliveries[0];
    expect(delivery).toMatchObject({ status: 'SUCCEEDED', attempts: 3, lastStatusCode: 200 });
  });

  it('gives up after the last retry (FAILED), and an endpoint whose deliveries all failed for WEBHOOK_DISABLE_AFTER is disabled', async () => {
    const target = await receiver(() => 503);
    const { id } = await endpoint(target.url, { eventTypes: ['subscription.created'] });
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { amount: 9900 });
    await waitFor('the endpoint disabled', async () => {
      await deliver();
      return (await api('GET', `/api/v1/webhook-endpoints/${id}`)).json().status === 'DISABLED';
    });
    expect((await api('GET', `/api/v1/webhook-endpoints/${id}`)).json()).toMatchObject({ status: 'DISABLED', disabledReason: 'FAILING' });
    // Four attempts (n delays, n + 1 attempts), the last more than WEBHOOK_DISABLE_AFTER after the first failure.
    const [event] = await eventsOf('subscription.created');
    expect((await api('GET', `/api/v1/events/${event!.id}`)).json().deliveries[0]).toEqual({
      endpointId: id,
      status: 'FAILED',
      attempts: 4,
      lastStatusCode: 503,
      lastError: 'HTTP 503',
    });
    expect(target.requests).toHaveLength(4);
    const metrics = (await running.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/billing_webhook_endpoints_disabled_total\{reason="FAILING"\} [1-9]/);
    expect(metrics).toMatch(/billing_webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    expect(metrics).toMatch(/billing_webhook_deliveries_total\{outcome="retrying"\} [1-9]/);
    expect(metrics).toMatch(/billing_webhook_endpoints_disabled 1/);
  });

  it('410 Gone disables the endpoint at once; nothing more is sent to it', async () => {
    const target = await receiver(() => 410);
    const { id } = await endpoint(target.url, { eventTypes: ['subscription.created'] });
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { userId: 'first', amount: 9900 });
    await deliver();
    expect((await api('GET', `/api/v1/webhook-endpoints/${id}`)).json()).toMatchObject({ status: 'DISABLED', disabledReason: 'GONE' });
    await subscribe(running.app, { userId: 'second', amount: 9900 });
    await deliver();
    expect(target.requests).toHaveLength(1);
    const [, event] = await eventsOf('subscription.created');
    expect((await api('GET', `/api/v1/events/${event!.id}`)).json().deliveries).toEqual([]);
  });

  it('a rotation signs with both secrets during the overlap, then with the new one only', async () => {
    const target = await receiver();
    const { id, secret: old } = await endpoint(target.url, { eventTypes: ['subscription.created'] });
    const rotated = await api('POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, { expireOldAfterSeconds: 3600 });
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().secret as string;
    expect(fresh).not.toBe(old);
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { userId: 'during', amount: 9900 });
    await deliver();
    const during = target.requests[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(old, during).type).toBe('subscription.created');
    expect(verify(fresh, during).type).toBe('subscription.created');

    const cut = await api('POST', `/api/v1/webhook-endpoints/${id}/rotate-secret`, { expireOldAfterSeconds: 0 });
    const newest = cut.json().secret as string;
    await subscribe(running.app, { userId: 'after', amount: 9900 });
    await deliver();
    const after = target.requests[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(newest, after).type).toBe('subscription.created');
    expect(() => verify(fresh, after)).toThrow();
    expect(() => verify(old, after)).toThrow();
  });

  it('recover re-queues what a disabled endpoint missed; resend sends one event again', async () => {
    const target = await receiver();
    const { id, secret } = await endpoint(target.url);
    expect((await api('PATCH', `/api/v1/webhook-endpoints/${id}`, { status: 'DISABLED' })).json()).toMatchObject({
      status: 'DISABLED',
      disabledReason: 'DISABLED_BY_MERCHANT',
    });
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const since = new Date(Date.now() - 1000).toISOString();
    await subscribe(running.app, { amount: 9900 });
    await deliver();
    expect(target.requests).toHaveLength(0);
    expect((await api('PATCH', `/api/v1/webhook-endpoints/${id}`, { status: 'ENABLED' })).json()).toMatchObject({ status: 'ENABLED' });
    const recovered = await api('POST', `/api/v1/webhook-endpoints/${id}/recover`, { since });
    expect(recovered.statusCode).toBe(202);
    expect(recovered.json()).toEqual({ queued: 3 });
    await deliver();
    expect(target.requests).toHaveLength(3);
    // Recovering again queues nothing: every event was received with a 2xx.
    expect((await api('POST', `/api/v1/webhook-endpoints/${id}/recover`, { since })).json()).toEqual({ queued: 0 });

    const [event] = await eventsOf('subscription.created');
    const resent = await api('POST', `/api/v1/events/${event!.id}/resend`, { endpointId: id });
    expect(resent.statusCode).toBe(202);
    expect(resent.json()).toEqual({ queued: 1 });
    await deliver();
    expect(target.requests).toHaveLength(4);
    expect(verify(secret, target.requests[3]!).id).toBe(event!.id);
    expect((await api('DELETE', `/api/v1/webhook-endpoints/${id}`)).statusCode).toBe(204);
    expect((await api('GET', `/api/v1/events/${event!.id}`)).json().deliveries).toEqual([]);
  });

  it('one endpoint that never answers does not hold back another', async () => {
    const dead = await receiver(() => 'hang');
    const healthy = await receiver();
    await endpoint(dead.url);
    await endpoint(healthy.url, { eventTypes: ['order.completed'] });
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    // A backlog of twelve deliveries for the dead endpoint alone: more than all the slots (WEBHOOK_CONCURRENCY 8).
    for (const user of ['a', 'b', 'c', 'd']) await subscribe(running.app, { userId: user, amount: 9900 });
    await waitFor('the dead endpoint holding requests', async () => dead.requests.length >= 4);
    // Then one event for the healthy endpoint: it is sent while the dead endpoint's requests still hang, not after
    // their timeout (WEBHOOK_TIMEOUT_MS, longer than the wait), because a dead endpoint never holds more than half the slots.
    const created = await api('POST', '/api/v1/orders', { method: 'CARD', amount: 3000, orderName: 'Once' });
    const window = await decideWindow(running.app, created.json().window);
    await follow(running.app, window.redirectUrl, { json: true });
    await waitFor('the healthy endpoint served', async () => healthy.requests.length === 1);
    expect(await running.app.db.webhookDelivery.count({ where: { attempts: { gt: 0 }, endpoint: { url: dead.url } } })).toBe(0);
    expect(dead.requests.length).toBeLessThanOrEqual(4);
  });

  it('events older than EVENT_RETENTION are deleted with their delivery log; newer ones are kept', async () => {
    const target = await receiver();
    await endpoint(target.url);
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { userId: 'old', amount: 9900 });
    await deliver();
    const old = await eventsOf();
    await running.app.db.$executeRaw`UPDATE "events" SET "createdAt" = now() - interval '91 days'`;
    await subscribe(running.app, { userId: 'new', amount: 9900 });
    await deliver();
    await running.app.webhooks.applyRetention(true);
    const kept = await eventsOf();
    expect(kept).toHaveLength(3);
    expect(kept.map((e) => e.id)).not.toContain(old[0]!.id);
    expect(await running.app.db.webhookDelivery.count()).toBe(3);
  });
});
