// A later writer of a delivery wins over the dispatcher's pending outcome of an earlier send: a resend or a recover
// that arrives while a copy is on its way (the endpoint has it, its success is not yet written) queues another copy,
// which is sent. And a success is written at once, not when the slots next free up: while the other requests hang,
// a delivered event does not wait for them (its lease would run out, and it would be sent again).
import { createServer, type IncomingHttpHeaders, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { subscribe } from '../../helpers/billing.ts';
import { decideWindow, follow } from '../../helpers/checkout.ts';
import { waitFor } from '../../helpers/service.ts';
import { TEST_SAFETY_NET_MS } from '../../setup/safety-nets.ts';

// WEBHOOK_CONCURRENCY 8: 8 requests in flight and 8 claimed in the ready queue; an endpoint holds at most 4.
// WEBHOOK_TIMEOUT_MS longer than any wait here: a held request ends when the test answers it or closes its receiver,
// never by the dispatcher's timeout, however slowly the machine runs.
const running = useRunningApp({ WEBHOOK_TIMEOUT_MS: String(TEST_SAFETY_NET_MS), WEBHOOK_RETRY_DELAYS: '1h', WEBHOOK_CONCURRENCY: '8' });

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * A receiver on 127.0.0.1: `hold(index)` keeps that request unanswered until `answer` or `release`; the others get 200.
 * `abandoned()` counts the held requests the sender gave up on (closed unanswered).
 */
async function receiver(hold: (index: number) => boolean) {
  const requests: Received[] = [];
  const held = new Map<number, ServerResponse>();
  let abandoned = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const index = requests.length;
      requests.push({ headers: req.headers, body });
      if (hold(index)) {
        held.set(index, res);
        res.on('close', () => {
          if (!res.writableEnded) abandoned += 1;
        });
      } else res.writeHead(200).end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const answer = (index: number, status: number) => {
    held.get(index)?.writeHead(status).end('ok');
    held.delete(index);
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    requests,
    abandoned: () => abandoned,
    answer,
    release: () => {
      for (const index of [...held.keys()]) answer(index, 200);
    },
  };
}

const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
  running.app.inject({ method, url, headers: { ...apiHeaders, 'idempotency-key': crypto.randomUUID() }, ...(payload ? { payload } : {}) });

async function endpoint(url: string, eventTypes: string[]): Promise<string> {
  const response = await api('POST', '/api/v1/webhook-endpoints', { url, eventTypes });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { id: string }).id;
}

/** A one-time order through the window: its order.completed event. */
async function completeOrder(): Promise<void> {
  const created = await api('POST', '/api/v1/orders', { method: 'CARD', amount: 3000, orderName: 'Once' });
  expect(created.statusCode, created.body).toBe(201);
  const window = await decideWindow(running.app, created.json().window);
  expect((await follow(running.app, window.redirectUrl, { json: true })).statusCode).toBe(200);
}

/** billing_webhook_deliveries_total{outcome="delivered"}: sends answered 2xx, counted when the answer is read. */
async function deliveredCount(): Promise<number> {
  const metrics = (await running.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(/billing_webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec(metrics)?.[1] ?? 0);
}

const deliveryOf = (endpointId: string) => running.app.db.webhookDelivery.findFirstOrThrow({ where: { endpointId } });

/**
 * The first copy reaches the endpoint and is held there unanswered: the delivery is PENDING with its lease held.
 * `requeue` runs then; the endpoint answers the first copy 200 afterwards, and must get a second copy.
 */
async function requeueWhileOnItsWay(requeue: (eventId: string, endpointId: string) => Promise<void>) {
  const target = await receiver((index) => index === 0);
  const endpointId = await endpoint(target.url, ['order.completed']);
  await completeOrder();
  await waitFor('the first copy at the endpoint', async () => target.requests.length === 1);
  const before = await deliveryOf(endpointId);
  expect(before).toMatchObject({ status: 'PENDING', attempts: 0, leaseOwner: expect.any(String) });

  await requeue(before.eventId, endpointId);
  target.release();

  await waitFor('a second copy at the endpoint', async () => target.requests.length >= 2);
  await waitFor('the second copy recorded', async () => (await deliveryOf(endpointId)).status === 'SUCCEEDED');
  await running.app.webhooks.drain();
  expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual([before.eventId, before.eventId]);
  expect(await deliveryOf(endpointId)).toMatchObject({ status: 'SUCCEEDED', attempts: 1, lastStatusCode: 200, leaseOwner: null });
}

describe('a delivery queued again while a copy is on its way', () => {
  it('resend: the endpoint gets another copy', async () => {
    await requeueWhileOnItsWay(async (eventId, endpointId) => {
      const resent = await api('POST', `/api/v1/events/${eventId}/resend`, { endpointId });
      expect(resent.statusCode, resent.body).toBe(202);
      expect(resent.json()).toEqual({ queued: 1 });
    });
  });

  it('recover: the endpoint gets another copy', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    await requeueWhileOnItsWay(async (_eventId, endpointId) => {
      const recovered = await api('POST', `/api/v1/webhook-endpoints/${endpointId}/recover`, { since });
      expect(recovered.statusCode, recovered.body).toBe(202);
      expect(recovered.json()).toEqual({ queued: 1 });
    });
  });
});

describe('the outcome of a copy sent before a resend', () => {
  it('is not recorded for the new copy, even when it is written after the new copy was claimed', async () => {
    const target = await receiver((index) => index <= 1);
    const endpointId = await endpoint(target.url, ['order.completed']);
    await completeOrder();
    await waitFor('the first copy at the endpoint', async () => target.requests.length === 1);
    const { eventId } = await deliveryOf(endpointId);
    expect((await api('POST', `/api/v1/events/${eventId}/resend`, { endpointId })).statusCode).toBe(202);
    await waitFor('the second copy at the endpoint', async () => target.requests.length === 2);

    // The first copy succeeds; its success is known to the dispatcher, then written (or found to match nothing).
    const delivered = await deliveredCount();
    target.answer(0, 200);
    await waitFor('the first copy’s success known', async () => (await deliveredCount()) === delivered + 1);
    await running.app.webhooks.flush();

    // The second copy fails: that is what the delivery records (a retry is due), not the first copy's success.
    target.answer(1, 500);
    await waitFor('the second copy’s outcome recorded', async () => (await deliveryOf(endpointId)).leaseOwner === null);
    expect(await deliveryOf(endpointId)).toMatchObject({ status: 'PENDING', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500' });
  });
});

describe('a success while the other slots hold requests that hang', () => {
  it('is written at once, not when those requests end', async () => {
    const fast = await receiver((index) => index === 0);
    const fastId = await endpoint(fast.url, ['order.completed']);
    await completeOrder();
    await waitFor('the one copy at the fast endpoint', async () => fast.requests.length === 1);

    // Four endpoints that never answer, with more deliveries than their shares: the dispatcher claims until its 8
    // slots and 8 ready places are full (the fast endpoint's request included) and none of the others ends.
    const hanging = await Promise.all([1, 2, 3, 4].map(() => receiver(() => true)));
    for (const h of hanging) await endpoint(h.url, ['registration.completed', 'subscription.created']);
    for (const user of ['a', 'b', 'c', 'd']) await subscribe(running.app, { userId: user, amount: 9900 });
    await waitFor(
      'every slot and ready place taken',
      async () => (await running.app.db.webhookDelivery.count({ where: { leaseOwner: { not: null } } })) === 16,
    );
    await waitFor('seven requests hanging', async () => hanging.reduce((n, h) => n + h.requests.length, 0) === 7);

    fast.release();
    // Written while the seven requests still hang (none ended, none recorded), not once their slots free up.
    await waitFor('the success written', async () => (await deliveryOf(fastId)).status === 'SUCCEEDED');
    expect(hanging.map((h) => h.abandoned())).toEqual([0, 0, 0, 0]);
    expect(await running.app.db.webhookDelivery.count({ where: { attempts: { gt: 0 }, endpointId: { not: fastId } } })).toBe(0);
  });
});
