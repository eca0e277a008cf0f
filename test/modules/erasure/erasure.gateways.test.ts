// An erasure deletes each billing key at its own gateway (docs/operating.md "A customer asks to be forgotten";
// src/modules/erasure/key-deletion.ts): a customer with a Danal key and a Toss key, through the public routes and both
// sandboxes over HTTP. With TOSS_KEY_DELETION set (the Toss sandbox serves DELETE /v1/billing/{billingKey},
// docs/sandbox.md "The Toss sandbox") the Toss key is deleted there and recorded DELETED, while Danal's, which has no
// deletion call, is NOT_SUPPORTED; without it both are NOT_SUPPORTED and the Toss sandbox still holds its key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { subscribe } from '../../helpers/billing.ts';
import { follow } from '../../helpers/checkout.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { erase } from './erasure-helpers.ts';

const opened: Array<{ app: App; database: TestDatabase }> = [];

async function openApp(env: Record<string, string>): Promise<App> {
  const database = await createTestDatabase();
  const app = await buildTestApp(database.url, { env });
  opened.push({ app, database });
  return app;
}

afterAll(async () => {
  for (const { app, database } of opened) {
    await app.close();
    await database.drop();
  }
});

/** A key-only Toss registration through the Toss sandbox's window: the customer's Toss billing key. */
async function subscribeThroughToss(app: App, userId: string): Promise<void> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/registrations',
    headers: apiHeaders,
    payload: { userId, method: 'CARD', amount: 9900, orderName: 'Toss plan', gateway: 'TOSS', issueKeyOnly: true },
  });
  expect(created.statusCode, created.body).toBe(201);
  const { clientKey, customerKey, successUrl, failUrl } = created.json().window;
  const authorized = await app.inject({
    method: 'POST',
    url: '/sandbox/toss/window/authorize',
    payload: { clientKey, customerKey, successUrl, failUrl, decision: 'approve' },
  });
  const done = await follow(app, authorized.json().redirectUrl, { json: true });
  expect(done.statusCode, done.body).toBe(200);
}

/** The Toss sandbox's stored billing keys (its own schema in the service's database). */
const tossSandboxKeys = (app: App) =>
  app.db.$queryRawUnsafe<Array<{ value: { customerKey: string; deletedAt?: string | null } }>>(`SELECT value FROM sandbox.toss_records WHERE kind = 'key'`);

async function eraseCustomerWithBothKeys(app: App, userId: string) {
  await subscribe(app, { userId });
  await subscribeThroughToss(app, userId);
  const keys = await app.db.billingKey.findMany({ where: { userId }, orderBy: { id: 'asc' } });
  expect(keys.map((key) => key.gateway).sort()).toEqual(['DANAL', 'TOSS']);
  const response = await erase(app, userId, { reason: 'privacy request', cancelOpenSubscriptions: true });
  expect(response.statusCode, response.body).toBe(201);
  const row = await app.db.erasure.findUniqueOrThrow({ where: { id: response.json().id } });
  const danal = keys.find((key) => key.gateway === 'DANAL')!;
  const toss = keys.find((key) => key.gateway === 'TOSS')!;
  return { keyDeletions: row.keyDeletions as Array<Record<string, unknown>>, danal, toss };
}

describe('an erasure with a Danal and a Toss billing key', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp({ TOSS_KEY_DELETION: 'DELETE /v1/billing/{billingKey}' });
  });

  it('deletes the Toss key at Toss (TOSS_KEY_DELETION) and records Danal’s as not supported', async () => {
    const { keyDeletions, danal, toss } = await eraseCustomerWithBothKeys(app, 'both-gateways-user-1');
    expect(keyDeletions).toHaveLength(2);
    expect(keyDeletions).toEqual(
      expect.arrayContaining([
        { billingKeyId: danal.id, outcome: 'NOT_SUPPORTED' },
        expect.objectContaining({ billingKeyId: toss.id, outcome: 'DELETED', at: expect.any(String) }),
      ]),
    );
    const stored = (await tossSandboxKeys(app)).filter((record) => record.value.customerKey === toss.customerKey);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.value.deletedAt).toEqual(expect.any(String));
    // Nothing of the key itself is kept in the record.
    expect(JSON.stringify(keyDeletions)).not.toContain(toss.customerKey!);
  });
});

describe('an erasure with a Danal and a Toss billing key, without TOSS_KEY_DELETION', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp({});
  });

  it('records both keys as not supported, and the Toss sandbox still holds its key', async () => {
    const { keyDeletions, danal, toss } = await eraseCustomerWithBothKeys(app, 'both-gateways-user-2');
    expect(keyDeletions).toHaveLength(2);
    expect(keyDeletions).toEqual(
      expect.arrayContaining([
        { billingKeyId: danal.id, outcome: 'NOT_SUPPORTED' },
        { billingKeyId: toss.id, outcome: 'NOT_SUPPORTED' },
      ]),
    );
    const stored = (await tossSandboxKeys(app)).filter((record) => record.value.customerKey === toss.customerKey);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.value.deletedAt ?? null).toBeNull();
  });
});
