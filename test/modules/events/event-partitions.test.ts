// The monthly partitions of events and webhook deliveries (docs/production.md "Event partitions"): the partitions pass
// makes this month and two ahead by the service's clock; an event of a month not made waits in the default partition,
// is read like any other, and moves into its month (with its deliveries) when the month is made; EVENT_RETENTION drops
// whole months of both tables, and deletes by the row only what waits in the default partition; several passes at once
// make or drop each month once. Each test dates its events in years of its own: partitions outlive the emptying of the
// tables between tests.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSimulatedClock } from '../../../src/lib/clock.ts';
import { createPartitionsPass, monthName, readPartitionState, utcMonth } from '../../../src/modules/events/event-partitions.ts';
import { createEventsService } from '../../../src/modules/events/events.service.ts';
import { createRetention } from '../../../src/modules/webhooks/retention.ts';
import { buildTestApp, testConfig } from '../../helpers/app.ts';
import { createTestDatabase, useTestDatabase } from '../../helpers/database.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { waitFor } from '../../helpers/service.ts';

const database = useTestDatabase();
const DAY = 86_400_000;
const quiet = { info() {}, warn() {} };

const passAt = (at: string, retentionMs = 90 * DAY) =>
  createPartitionsPass({ db: database.db, clock: createSimulatedClock(new Date(at)), retentionMs, log: quiet });

/** The partitions of `parent` by name, sorted. */
async function partitionsOf(parent: 'events' | 'webhook_deliveries'): Promise<string[]> {
  const rows = await database.db.$queryRawUnsafe<Array<{ name: string }>>(
    `SELECT c.relname::text AS "name" FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"${parent}"'::regclass ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

/** The partition an event lives in, and those of its deliveries. */
async function placeOf(eventId: string): Promise<{ event: string; deliveries: string[] }> {
  const [event] = await database.db.$queryRaw<Array<{ at: string }>>`SELECT tableoid::regclass::text AS "at" FROM "events" WHERE "id" = ${eventId}::uuid`;
  const deliveries = await database.db.$queryRaw<Array<{ at: string }>>`
    SELECT tableoid::regclass::text AS "at" FROM "webhook_deliveries" WHERE "eventId" = ${eventId}::uuid ORDER BY 1`;
  return { event: event!.at, deliveries: deliveries.map((d) => d.at) };
}

/** An event dated `createdAt` (a customer.erased, which renders from its snapshot alone), committed on its own. */
async function eventAt(createdAt: string): Promise<string> {
  const id = randomUUID();
  const snapshot = { id: randomUUID(), pseudonym: `p-${randomUUID()}`, erasedAt: createdAt, retainUntil: '2040-01-01' };
  await database.db.$executeRaw`
    INSERT INTO "events" ("id", "type", "objectType", "objectId", "snapshot", "createdAt")
    VALUES (${id}::uuid, 'customer.erased', 'customer', ${snapshot.id}::uuid, ${JSON.stringify(snapshot)}::jsonb, ${createdAt}::timestamptz)`;
  return id;
}

/** Numbers every event (queuing its deliveries): the sequencer numbers an event once no older transaction runs in the cluster. */
async function numberAll(): Promise<void> {
  await waitFor('every event numbered', async () => {
    await database.db.$queryRaw`SELECT "assign_event_sequences"(1000)`;
    return (await database.db.event.count({ where: { sequence: null } })) === 0;
  });
}

const endpoint = () => database.db.webhookEndpoint.create({ data: { url: 'https://example.test/hook', eventTypes: ['*'], secrets: [] } });

async function rowOf(eventId: string) {
  return database.db.event.findFirstOrThrow({ where: { id: eventId } });
}

describe('the partitions pass', () => {
  it('makes this month and the two after it (UTC months, by the service’s clock), for both tables; run again, nothing', async () => {
    const report = await passAt('2031-05-17T12:00:00.000Z')();
    expect(report).toEqual({ made: ['2031_05', '2031_06', '2031_07'], dropped: [], postponed: [] });
    for (const parent of ['events', 'webhook_deliveries'] as const) {
      expect(await partitionsOf(parent)).toEqual(expect.arrayContaining([`${parent}_2031_05`, `${parent}_2031_06`, `${parent}_2031_07`, `${parent}_default`]));
    }
    expect(await passAt('2031-05-31T23:00:00.000Z')()).toEqual({ made: [], dropped: [], postponed: [] });
    expect(await readPartitionState(database.db, new Date('2031-05-17T12:00:00.000Z'))).toEqual({ monthsAhead: 2, defaultRows: 0 });
    expect((await readPartitionState(database.db, new Date('2031-07-02T00:00:00.000Z'))).monthsAhead).toBe(0);

    // 05:00 on September 1st in Korea is still August in UTC: the months are UTC's.
    expect((await passAt('2031-08-31T20:00:00.000Z')()).made).toEqual(['2031_08', '2031_09', '2031_10']);
  });

  it('an event of a month not made waits in the default partition, is fed, and moves with its deliveries into its month when it is made', async () => {
    const hook = await endpoint();
    const id = await eventAt('2032-03-10T01:02:03.456Z');
    await numberAll();
    expect(await placeOf(id)).toEqual({ event: 'events_default', deliveries: ['webhook_deliveries_default'] });
    const events = createEventsService({ db: database.db, config: await testConfig('postgresql://localhost/unused') });
    const fed = await events.list({ limit: 100 });
    expect(fed.items.map((e) => e.id)).toEqual([id]);
    const before = await rowOf(id);
    const one = await events.get(id);
    expect((await readPartitionState(database.db, new Date('2032-02-10T00:00:00.000Z'))).defaultRows).toBe(1);

    expect((await passAt('2032-02-10T00:00:00.000Z')()).made).toEqual(['2032_02', '2032_03', '2032_04']);

    expect(await placeOf(id)).toEqual({ event: 'events_2032_03', deliveries: ['webhook_deliveries_2032_03'] });
    expect(await rowOf(id)).toEqual(before);
    expect(await events.list({ limit: 100 })).toEqual(fed);
    expect(await events.get(id)).toEqual(one);
    expect(one.deliveries.map((d) => d.endpointId)).toEqual([hook.id]);
    expect((await readPartitionState(database.db, new Date('2032-02-10T00:00:00.000Z'))).defaultRows).toBe(0);
    // A new event of that month goes straight to it.
    const next = await eventAt('2032-03-31T23:59:59.999Z');
    expect((await placeOf(next)).event).toBe('events_2032_03');
  });

  it('EVENT_RETENTION drops whole months of both tables once they are entirely older; the default partition is deleted by the row', async () => {
    await endpoint();
    await passAt('2033-01-10T00:00:00.000Z')();
    await passAt('2033-04-10T00:00:00.000Z')();
    const monthly = await Promise.all(['01', '02', '03', '04', '05', '06'].map((m) => eventAt(`2033-${m}-15T00:00:00.000Z`)));
    // Months never made: these wait in the default partition.
    const waiting = await Promise.all(['2032-11-20T00:00:00.000Z', '2032-12-31T23:59:59.999Z'].map((at) => eventAt(at)));
    await numberAll();
    expect(await database.db.webhookDelivery.count()).toBe(8);

    // At 2033-06-15 with 90 days, every event before 2033-03-17 is past retention: January and February go whole;
    // March stays, its event of the 15th with it, until the whole month is past.
    const report = await passAt('2033-06-15T00:00:00.000Z')();
    expect(report.dropped).toEqual(['2033_01', '2033_02']);
    for (const parent of ['events', 'webhook_deliveries'] as const) {
      const left = await partitionsOf(parent);
      expect(left).not.toContain(`${parent}_2033_01`);
      expect(left).not.toContain(`${parent}_2033_02`);
      expect(left).toEqual(expect.arrayContaining([`${parent}_2033_03`, `${parent}_2033_06`, `${parent}_2033_07`, `${parent}_2033_08`]));
    }
    const kept = async () => (await database.db.event.findMany({ select: { id: true } })).map((e) => e.id).sort();
    expect(await kept()).toEqual([...monthly.slice(2), ...waiting].sort());
    expect(await database.db.webhookDelivery.count()).toBe(6);

    // The dispatcher's retention deletes what waits in the default partition past retention, with its deliveries,
    // and leaves the months alone.
    await createRetention(database.db, createSimulatedClock(new Date('2033-06-15T00:00:00.000Z')), 90 * DAY, quiet)(true);
    expect(await kept()).toEqual(monthly.slice(2).sort());
    expect(await database.db.webhookDelivery.count()).toBe(4);
    expect((await database.db.webhookDelivery.findMany({ select: { eventId: true } })).map((d) => d.eventId).sort()).toEqual(monthly.slice(2).sort());
    expect((await passAt('2033-06-15T00:00:00.000Z')()).dropped).toEqual([]);
  });

  it('events written while their month is made and their rows moved are each fed once, in order', async () => {
    const events = createEventsService({ db: database.db, config: await testConfig('postgresql://localhost/unused') });
    const written: string[] = [];
    const total = 60;
    let failed: unknown;
    const writer = (async () => {
      for (let n = 0; n < total; n += 1) written.push(await eventAt(`2035-05-${String(1 + (n % 28)).padStart(2, '0')}T0${n % 10}:00:00.000Z`));
    })().catch((error: unknown) => {
      failed = error;
    });
    await waitFor('some events waiting in the default partition', async () => written.length >= 20);
    const made = (async () => {
      // A step postponed (its lock not granted within 200 ms while the writer runs) is tried again, as the next pass would.
      await waitFor('the month made', async () => (await passAt('2035-05-02T00:00:00.000Z')()).postponed.length === 0);
    })();
    const fed: Array<{ id: string; sequence: number }> = [];
    await waitFor('every event fed', async () => {
      // An event write refused meanwhile (its row routed to the default partition as the month was attached) fails the test at once.
      if (failed) throw failed;
      const page = await events.list({ after: fed.at(-1)?.sequence, limit: 7 });
      fed.push(...page.items.map((e) => ({ id: e.id, sequence: e.sequence })));
      return fed.length >= total;
    });
    await Promise.all([writer, made]);
    expect(fed.map((e) => e.id).sort()).toEqual([...written].sort());
    expect(fed.map((e) => e.sequence)).toEqual([...fed.map((e) => e.sequence)].sort((a, b) => a - b));
    expect(new Set(fed.map((e) => e.sequence)).size).toBe(total);
    const places = await database.db.$queryRaw<Array<{ at: string; n: number }>>`
      SELECT tableoid::regclass::text AS "at", count(*)::int AS "n" FROM "events" GROUP BY 1`;
    expect(places).toEqual([{ at: 'events_2035_05', n: total }]);
  });

  it('several passes at once make each month once and drop each once; a step one had to postpone, the next pass does', async () => {
    const months = ['2034_02', '2034_03', '2034_04'];
    const made = (await Promise.all([1, 2, 3].map(() => passAt('2034-02-10T00:00:00.000Z')()))).map((r) => ({ made: r.made, postponed: r.postponed }));
    const madeOnce = made.flatMap((r) => r.made);
    expect(new Set(madeOnce).size).toBe(madeOnce.length);
    const later = await passAt('2034-02-10T00:00:00.000Z')();
    expect([...madeOnce, ...later.made].sort()).toEqual(months);
    for (const parent of ['events', 'webhook_deliveries'] as const) {
      expect((await partitionsOf(parent)).filter((name) => name.startsWith(`${parent}_2034`))).toEqual(months.map((m) => `${parent}_${m}`));
    }

    // In September, 90 days back is June 12: February to April go, made again ahead in the same passes.
    const dropping = await Promise.all([1, 2, 3].map(() => passAt('2034-09-10T00:00:00.000Z')()));
    const droppedOnce = dropping.flatMap((r) => r.dropped);
    expect(new Set(droppedOnce).size).toBe(droppedOnce.length);
    const last = await passAt('2034-09-10T00:00:00.000Z')();
    expect([...droppedOnce, ...last.dropped].sort()).toEqual(months);
    for (const parent of ['events', 'webhook_deliveries'] as const) {
      expect((await partitionsOf(parent)).filter((name) => name.startsWith(`${parent}_2034`))).toEqual(
        ['2034_09', '2034_10', '2034_11'].map((m) => `${parent}_${m}`),
      );
    }
  });
});

describe('the partitions timer', () => {
  it('runs the pass on its own when the app is ready (SCHEDULER_ENABLED=true): this month and two ahead exist, as the metrics say', async () => {
    const own = await createTestDatabase();
    const app = await buildTestApp(own.url, { env: { SCHEDULER_ENABLED: 'true' } });
    try {
      await app.ready();
      const expected = [0, 1, 2].map((offset) => `events_${monthName(utcMonth(app.clock.now(), offset))}`);
      await waitFor('the months made by the timed pass', async () => {
        const rows = await app.db.$queryRaw<Array<{ name: string }>>`
          SELECT c.relname::text AS "name" FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"events"'::regclass`;
        const names = new Set(rows.map((r) => r.name));
        return expected.every((name) => names.has(name));
      });
      // What an operator watches: two months made ahead, nothing waiting in the default partition.
      const metrics = await app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/^billing_event_months_ahead 2$/m);
      expect(metrics.body).toMatch(/^billing_events_default_rows 0$/m);
    } finally {
      await app.close();
      await own.drop();
    }
  });
  it('POST /admin/event-partitions/run runs the pass by hand (SCHEDULER_ENABLED=false: no timer), audited; run again, nothing to make', async () => {
    const own = await createTestDatabase();
    const app = await buildTestApp(own.url);
    try {
      const run = (key: string) =>
        app.inject({
          method: 'POST',
          url: '/admin/event-partitions/run',
          headers: { ...adminHeaders, 'idempotency-key': key },
          payload: { reason: 'monthly maintenance' },
        });
      const expected = [0, 1, 2].map((offset) => monthName(utcMonth(app.clock.now(), offset)));
      const first = await run(`partitions-${randomUUID()}`);
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual({ made: expected, dropped: [], postponed: [] });
      const second = await run(`partitions-${randomUUID()}`);
      expect(second.json()).toEqual({ made: [], dropped: [], postponed: [] });
      // Both runs audited (two entries may bear the same instant: compared as a set).
      const audit = await app.db.auditEvent.findMany({ where: { action: 'event_partitions.run' } });
      expect(audit).toHaveLength(2);
      expect(audit.map((entry) => [entry.reason, entry.after])).toEqual(
        expect.arrayContaining([
          ['monthly maintenance', { made: expected, dropped: [], postponed: [] }],
          ['monthly maintenance', { made: [], dropped: [], postponed: [] }],
        ]),
      );
      expect((await app.inject({ method: 'POST', url: '/admin/event-partitions/run', payload: {} })).statusCode).toBe(401);
    } finally {
      await app.close();
      await own.drop();
    }
  });
});
