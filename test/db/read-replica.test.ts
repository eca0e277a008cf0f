// The read replica (docs/production.md "Read replica") against a real streaming standby (test/helpers/replica.ts):
// the read routes answer from it once it has replayed what was committed before them, a merchant's GET after its POST
// answers the write, a replica that stays paused or lags past READ_REPLICA_MAX_LAG is bypassed, a stopped one changes
// nothing but the metric, nothing that decides money waits for it, and the events feed read through it misses nothing.
// Where a read went is asserted by the metric billing_reads_total, never by timing.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders, LogCapture, startTestApp } from '../helpers/app.ts';
import { adminHeaders, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { consoleCookie, formFields, textOf } from '../helpers/console.ts';
import { basebackupMajor, READER_PASSWORD, type ReplicaPair, startReplicaPair } from '../helpers/replica.ts';
import { waitFor } from '../helpers/service.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { createSubscription } from '../factories/index.ts';

let pair: ReplicaPair;
const apps: App[] = [];
const logs = new LogCapture();
/** Waits up to a minute for the replica: a read waits, and a test tells by the metric that it did not time out. */
let patient: App;
/** Waits 200 ms: a replica that stays paused is given up on at once. */
let impatient: App;
/** Bypasses a replica more than 2 s behind (and would wait a minute for one that is not). */
let strict: App;

async function appWith(env: Record<string, string>, options: { logs?: LogCapture } = {}): Promise<App> {
  const { app } = await startTestApp(pair.primaryUrl, { env: { CLOCK: 'simulated', DATABASE_READ_URL: pair.replicaUrl, ...env }, ...options });
  apps.push(app);
  return app;
}

beforeAll(async () => {
  pair = await startReplicaPair();
  patient = await appWith({ READ_REPLICA_WAIT: '60s', READ_REPLICA_MAX_LAG: '1h' }, { logs });
  impatient = await appWith({ READ_REPLICA_WAIT: '200ms', READ_REPLICA_MAX_LAG: '1h' });
  strict = await appWith({ READ_REPLICA_WAIT: '60s', READ_REPLICA_MAX_LAG: '2s' });
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await pair?.stop();
});

/** The app's billing_reads_total by `server/reason`, and the replica's lag gauge. */
async function readMetrics(app: App): Promise<{ reads: Record<string, number>; lag: number | undefined }> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const reads: Record<string, number> = {};
  for (const match of text.matchAll(/^billing_reads_total\{server="(\w+)",reason="(\w+)"\} (\d+)$/gm)) reads[`${match[1]}/${match[2]}`] = Number(match[3]);
  const lag = /^billing_read_replica_lag_seconds (\S+)$/m.exec(text)?.[1];
  return { reads, lag: lag === undefined ? undefined : Number(lag) };
}

/** How many more reads each `server/reason` counted than in `before`. */
function countedSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) if (value !== (before[key] ?? 0)) delta[key] = value - (before[key] ?? 0);
  return delta;
}

async function createEndpoint(app: App): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    headers: apiHeaders,
    payload: { url: `http://127.0.0.1:9/hooks/${randomUUID()}`, eventTypes: ['order.completed'] },
  });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { id: string }).id;
}

async function endpointIds(app: App): Promise<string[]> {
  const response = await app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints?limit=100', headers: apiHeaders });
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { items: Array<{ id: string }> }).items.map((item) => item.id);
}

/** Whether the standby itself shows the endpoint (read as the service's reader). */
async function standbyHas(endpointId: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: pair.replicaUrl });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM "webhook_endpoints" WHERE "id" = $1', [endpointId])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('a read replica', () => {
  it('is a streaming standby made with pg_basebackup when the machine has one of its major, else by the low-level API', async () => {
    expect(pair.baseBackup).toBe((await basebackupMajor()) === pair.major ? 'pg_basebackup' : 'low-level API');
  });

  it('answers the reports, the lists of the API and admin, the events feed and the console pages once it has replayed', async () => {
    const cookie = await consoleCookie(patient, TEST_ADMIN_TOKEN);
    const reads: Array<{ url: string; headers: Record<string, string> }> = [
      { url: '/admin/reports/mrr?from=2027-01&to=2027-03', headers: adminHeaders },
      { url: '/admin/reports/revenue?from=2027-01-01&to=2027-01-31', headers: adminHeaders },
      { url: '/admin/reports/recovery?from=2027-01&to=2027-03', headers: adminHeaders },
      { url: '/admin/subscriptions', headers: adminHeaders },
      { url: '/admin/payments', headers: adminHeaders },
      { url: '/admin/audit', headers: adminHeaders },
      { url: '/admin/reconciliation', headers: adminHeaders },
      { url: '/admin/settlement-imports', headers: adminHeaders },
      { url: '/api/v1/subscriptions', headers: apiHeaders },
      { url: '/api/v1/payments', headers: apiHeaders },
      { url: '/api/v1/events', headers: apiHeaders },
      { url: '/api/v1/webhook-endpoints', headers: apiHeaders },
      { url: '/console/', headers: { cookie } },
      { url: '/console/subscriptions', headers: { cookie } },
      { url: '/console/payments/export', headers: { cookie } },
      { url: '/console/reports', headers: { cookie } },
      { url: '/console/reconciliation', headers: { cookie } },
    ];
    const before = (await readMetrics(patient)).reads;
    for (const { url, headers } of reads) {
      const response = await patient.inject({ method: 'GET', url, headers });
      expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
    }
    expect(countedSince(before, (await readMetrics(patient)).reads)).toEqual({ 'replica/replayed': reads.length });
  });

  it('answers a merchant’s GET after its POST with the write: the read waits until the replica has replayed it', async () => {
    await pair.pauseReplay();
    let endpointId: string;
    try {
      endpointId = await createEndpoint(patient);
      expect(await standbyHas(endpointId)).toBe(false);
      const before = (await readMetrics(patient)).reads;
      let answered = false;
      const listed = endpointIds(patient).finally(() => {
        answered = true;
      });
      // The read waits for the replica (the primary would be asked only after a minute): not answered meanwhile.
      await waitFor('the read waiting for the replica', async () =>
        /^billing_read_replica_waiting 1$/m.test((await patient.inject({ method: 'GET', url: '/metrics' })).body),
      );
      expect(answered).toBe(false);
      await pair.resumeReplay();
      expect(await listed).toContain(endpointId);
      expect(countedSince(before, (await readMetrics(patient)).reads)).toEqual({ 'replica/replayed': 1 });
    } finally {
      await pair.resumeReplay();
    }
  });

  it('shows the console’s page after an action’s redirect with the action done, waiting for the replica to replay it', async () => {
    await setClock(patient, '2027-03-10T00:00:00Z');
    const subscriptionId = await subscribe(patient, { userId: `user-${randomUUID()}` });
    const cookie = await consoleCookie(patient, TEST_ADMIN_TOKEN);
    const page = await patient.inject({ method: 'GET', url: `/console/subscriptions/${subscriptionId}`, headers: { cookie } });
    expect(textOf(page.body, 'subscription-status')).not.toMatch(/paused/i);
    const action = `/console/subscriptions/${subscriptionId}/pause`;
    const form = formFields(page.body, action);
    await pair.pauseReplay();
    try {
      const posted = await patient.inject({
        method: 'POST',
        url: action,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ ...form, reason: 'customer asked' }).toString(),
      });
      expect(posted.statusCode, posted.body).toBe(303);
      const before = (await readMetrics(patient)).reads;
      let answered = false;
      const shown = patient.inject({ method: 'GET', url: posted.headers.location as string, headers: { cookie } }).finally(() => {
        answered = true;
      });
      await waitFor('the page waiting for the replica', async () =>
        /^billing_read_replica_waiting 1$/m.test((await patient.inject({ method: 'GET', url: '/metrics' })).body),
      );
      expect(answered).toBe(false);
      await pair.resumeReplay();
      const html = (await shown).body;
      expect(textOf(html, 'subscription-status')).toMatch(/paused/i);
      expect(countedSince(before, (await readMetrics(patient)).reads)).toEqual({ 'replica/replayed': 1 });
    } finally {
      await pair.resumeReplay();
    }
  });

  it('answers from the primary once READ_REPLICA_WAIT has passed when the replica stays paused (wait_timeout)', async () => {
    await pair.pauseReplay();
    try {
      const endpointId = await createEndpoint(impatient);
      const before = (await readMetrics(impatient)).reads;
      expect(await endpointIds(impatient)).toContain(endpointId);
      expect(countedSince(before, (await readMetrics(impatient)).reads)).toEqual({ 'primary/wait_timeout': 1 });
      expect(await standbyHas(endpointId)).toBe(false);
    } finally {
      await pair.resumeReplay();
    }
    await pair.caughtUp();
  });

  it('bypasses a replica lagging past READ_REPLICA_MAX_LAG without waiting (lag), and uses it again once it has caught up', async () => {
    await pair.pauseReplay();
    try {
      const endpointId = await createEndpoint(strict);
      await waitFor('the lag gauge past 2 s', async () => ((await readMetrics(strict)).lag ?? 0) > 2);
      const before = (await readMetrics(strict)).reads;
      expect(await endpointIds(strict)).toContain(endpointId);
      expect(countedSince(before, (await readMetrics(strict)).reads)).toEqual({ 'primary/lag': 1 });
    } finally {
      await pair.resumeReplay();
    }
    await waitFor('the lag gauge back under 2 s', async () => {
      const { lag } = await readMetrics(strict);
      return lag !== undefined && lag <= 2;
    });
    const before = (await readMetrics(strict)).reads;
    await endpointIds(strict);
    expect(countedSince(before, (await readMetrics(strict)).reads)).toEqual({ 'replica/replayed': 1 });
  });

  it('is never read by what decides money: a registration, a charging pass and a refund complete with replay paused, reading nothing there', async () => {
    await setClock(patient, '2027-03-10T00:00:00Z');
    await pair.pauseReplay();
    try {
      const before = (await readMetrics(patient)).reads;
      const subscriptionId = await subscribe(patient, { userId: `user-${randomUUID()}` });
      await setClock(patient, '2027-04-10T01:00:00Z');
      const report = await runPass(patient);
      expect(report.succeeded).toBeGreaterThanOrEqual(1);
      const renewal = await patient.db.payment.findFirst({ where: { subscriptionId, kind: 'RECURRING' } });
      expect(renewal?.status).toBe('SUCCEEDED');
      const refund = await patient.inject({
        method: 'POST',
        url: `/admin/payments/${renewal!.id}/cancel`,
        headers: { ...adminHeaders, 'idempotency-key': randomUUID() },
        payload: { amount: 1_000, reason: 'goodwill' },
      });
      expect(refund.statusCode, refund.body).toBe(200);
      expect(refund.json().canceledAmount).toBe(1_000);
      // Every read of those came from the primary, and not one was routed at all.
      expect(countedSince(before, (await readMetrics(patient)).reads)).toEqual({});
    } finally {
      await pair.resumeReplay();
    }
  });

  it('reads through the replica the events feed continuing from its last sequence, and misses no event committed meanwhile', async () => {
    await pair.caughtUp();
    const before = (await readMetrics(patient)).reads;
    // Writers whose transactions overlap and commit out of the order they began in; the feed is read meanwhile.
    const created: string[] = [];
    const writer = async (n: number) => {
      for (let i = 0; i < 6; i += 1) {
        const subscription = await patient.db.$transaction(async (tx) => {
          const row = await createSubscription(tx as never);
          await tx.$executeRaw`SELECT pg_sleep(${((n + i) % 3) * 0.02}::float8)`;
          return row;
        });
        created.push(subscription.id);
      }
    };
    const seen: Array<{ sequence: number; objectId: string }> = [];
    let after = 0;
    const readPage = async () => {
      const response = await patient.inject({ method: 'GET', url: `/api/v1/events?type=subscription.created&after=${after}&limit=7`, headers: apiHeaders });
      expect(response.statusCode).toBe(200);
      const items = (response.json() as { items: Array<{ sequence: string; data: { object: { id: string } } }> }).items;
      for (const item of items) {
        seen.push({ sequence: Number(item.sequence), objectId: item.data.object.id });
        after = Number(item.sequence);
      }
    };
    // From the end of the feed as it stands: the events of the tests before are not this test's.
    for (let length = -1; length !== seen.length; ) {
      length = seen.length;
      await readPage();
    }
    seen.length = 0;
    let writing = true;
    const writers = Promise.all([0, 1, 2, 3].map(writer)).finally(() => {
      writing = false;
    });
    while (writing) await readPage();
    await writers;
    await waitFor('the feed to reach every subscription created', async () => {
      await readPage();
      return created.every((id) => seen.some((event) => event.objectId === id));
    });
    const sequences = seen.map((event) => event.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(new Set(seen.map((event) => event.objectId))).toEqual(new Set(created));
    const counted = countedSince(before, (await readMetrics(patient)).reads);
    expect(counted['replica/replayed']).toBeGreaterThan(0);
    expect(Object.keys(counted)).toEqual(['replica/replayed']);
  });

  it('answers from the primary when the replica is down (replica_error), logging it once and never the reader’s password', async () => {
    await pair.stopStandby();
    const before = (await readMetrics(patient)).reads;
    for (const url of ['/admin/reports/mrr?from=2027-01&to=2027-03', '/admin/subscriptions', '/admin/payments']) {
      const response = await patient.inject({ method: 'GET', url, headers: adminHeaders });
      expect(response.statusCode, response.body).toBe(200);
    }
    expect(countedSince(before, (await readMetrics(patient)).reads)).toEqual({ 'primary/replica_error': 3 });
    await waitFor('the replica reported down', async () =>
      /^billing_read_replica_up 0$/m.test((await patient.inject({ method: 'GET', url: '/metrics' })).body),
    );
    expect(logs.lines.filter((line) => line.msg === 'read replica unreachable: reads go to the primary')).toHaveLength(1);
    expect(logs.raw).not.toContain(READER_PASSWORD);
  });
});
