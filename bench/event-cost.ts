// What the merchant events cost the database per charge (issue 25, target 7), measured apart from the machine's noise:
// on one connection, a charge's writes (insert a PENDING payment, approve it, advance its subscription: the two events
// a successful charge makes, payment.succeeded and subscription.updated) for N ACTIVE CARD subscriptions, with the
// four event triggers of payments and subscriptions on and off in turn (the order flips every round), and the
// backend's CPU from /proc. Every transaction is rolled back, so the database is left as it was; the cost of
// committing and of numbering the events later (assign_event_sequences) is not in the figure.
//
//   BENCH_DATABASE_URL=<a seeded database you own: the bench disables and re-enables triggers> node bench/event-cost.ts [N=1000] [rounds=3]
import { readFileSync } from 'node:fs';
import pg from 'pg';

const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL: a seeded database of your own');
const N = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 3);
const TRIGGERS: Array<[string, string]> = [
  ['payments', 'payments_merchant_events_insert'],
  ['payments', 'payments_merchant_events'],
  ['subscriptions', 'subscriptions_merchant_events_insert'],
  ['subscriptions', 'subscriptions_merchant_events'],
];

/** CPU time (user + system) of a process so far, in ms (Linux's clock tick is 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const admin = new pg.Client({ connectionString: url });
const client = new pg.Client({ connectionString: url });
await admin.connect();
await client.connect();
try {
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const { rows: subscriptions } = await client.query<{ id: string; amount: number }>(
    `SELECT "id", "amount" FROM "subscriptions" WHERE "status" = 'ACTIVE' AND "method" = 'CARD' LIMIT $1`,
    [N],
  );
  const events = async (on: boolean) => {
    for (const [table, trigger] of TRIGGERS) await admin.query(`ALTER TABLE "${table}" ${on ? 'ENABLE' : 'DISABLE'} TRIGGER "${trigger}"`);
  };
  const charges = async () => {
    const cpu = cpuMsOf(pid);
    const started = performance.now();
    for (const s of subscriptions) {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>({
        name: 'insert',
        text: `INSERT INTO "payments" ("subscriptionId", "cycle", "kind", "method", "amount", "status", "orderId", "attemptCount", "updatedAt")
               VALUES ($1, 100000 + floor(random() * 1000000)::int, 'RECURRING', 'CARD', $2, 'PENDING', 'cost-' || gen_random_uuid(), 1, now()) RETURNING "id"`,
        values: [s.id, s.amount],
      });
      await client.query({
        name: 'approve',
        text: `UPDATE "payments" SET "status" = 'SUCCEEDED', "approvedAt" = now(), "transactionId" = 'tx-' || gen_random_uuid(), "updatedAt" = now() WHERE "id" = $1`,
        values: [rows[0]!.id],
      });
      await client.query({
        name: 'advance',
        text: `UPDATE "subscriptions" SET "cycle" = "cycle" + 1, "currentPeriodStart" = "currentPeriodEnd", "currentPeriodEnd" = "currentPeriodEnd" + interval '1 month',
               "nextChargeAt" = "currentPeriodEnd" + interval '1 month', "updatedAt" = now() WHERE "id" = $1`,
        values: [s.id],
      });
      await client.query('ROLLBACK');
    }
    return { cpuMs: (cpuMsOf(pid) - cpu) / subscriptions.length, wallMs: (performance.now() - started) / subscriptions.length };
  };
  try {
    await events(true);
    await charges(); // warm-up: plans, caches
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const on of round % 2 === 1 ? [true, false] : [false, true]) {
        await events(on);
        const r = await charges();
        console.log(`round ${round}, events ${on ? 'on ' : 'off'}: ${r.cpuMs.toFixed(3)} ms of the backend's CPU per charge, ${r.wallMs.toFixed(3)} ms wall`);
      }
    }
  } finally {
    await events(true);
  }
} finally {
  await client.end();
  await admin.end();
}
