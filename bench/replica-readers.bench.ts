// node bench/replica-readers.bench.ts: the primary's charging throughput idle, and while 10 readers hit reports,
// console pages and lists that read the read replica (docs/production.md "Read replica"). A primary and a streaming
// standby on this machine (test/helpers/replica.ts), the sandbox gateway in a process of its own with a settable
// latency, the charging pass in a service process of its own (bench/charge-worker.ts, through charging.bench.ts's
// drain); the readers are another service process with DATABASE_READ_URL, driven over HTTP. Each round seeds N due
// subscriptions and drains them twice, idle then under the readers (alternated between rounds), and prints the ratio
// of the loaded throughput to the idle one against its target (0.95, issue 35), with the share of the readers' reads
// the replica answered (their metric billing_reads_total). Writes bench/results/<date>-replica-readers.json.
//
//   BENCH_SUBSCRIPTIONS (2000)   due subscriptions per drain
//   BENCH_LATENCY_MS (50)        the gateway's latency per charge
//   BENCH_CONCURRENCY (16)       SCHEDULER_CONCURRENCY of the charging process
//   BENCH_READERS (10)           concurrent readers
//   BENCH_ROUNDS (3)             pairs of drains (idle, loaded), alternated
//   BENCH_READ_FROM=primary      the control: the readers' service without DATABASE_READ_URL (every read on the primary)
//   BENCH_PIN=1                  the primary, the sandbox and the charging process on CPU 0; the standby, the readers'
//                                service and this process (the readers' HTTP clients) on CPU 1 (bench/pin.ts): the
//                                replica as on a machine of its own, so that the ratio shows what the readers cost the
//                                primary rather than what they cost the shared cores
import { fileURLToPath } from 'node:url';
import { createPrismaClient } from '../src/db/prisma.ts';
import { startReplicaPair } from '../test/helpers/replica.ts';
import { drain, prepare, startSandbox, writeResults } from './charging.bench.ts';
import { signIn } from './cookies.ts';
import { pin, postmasterOf } from './pin.ts';
import { BENCH_ADMIN_TOKEN, BENCH_API_KEY, startService } from './service-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 2000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 50);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);
const READERS = Number(process.env.BENCH_READERS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET = 0.95;
const PIN = process.env.BENCH_PIN === '1';
const ON_PRIMARY = process.env.BENCH_READ_FROM === 'primary';

/** What the readers ask for, in turn: reports, console pages and lists (all routed to the replica). */
function readerRequests(cookie: string): Array<{ path: string; headers: Record<string, string> }> {
  const admin = { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` };
  const api = { authorization: `Bearer ${BENCH_API_KEY}` };
  const month = new Date().toISOString().slice(0, 7);
  return [
    { path: `/admin/reports/mrr?from=${month}&to=${month}`, headers: admin },
    { path: `/admin/reports/revenue?from=${month}-01&to=${month}-28`, headers: admin },
    { path: '/admin/subscriptions?limit=50', headers: admin },
    { path: '/admin/payments?limit=50', headers: admin },
    { path: '/api/v1/subscriptions?limit=50', headers: api },
    { path: '/api/v1/payments?limit=50', headers: api },
    { path: '/console/', headers: { cookie } },
    { path: '/console/subscriptions', headers: { cookie } },
    { path: '/console/payments', headers: { cookie } },
    { path: '/console/reports', headers: { cookie } },
  ];
}

/** `READERS` loops over the requests until stopped; answers how many each status got. */
function startReaders(base: string, requests: ReturnType<typeof readerRequests>) {
  let running = true;
  const statuses = new Map<number, number>();
  const loops = Array.from({ length: READERS }, async (_, reader) => {
    for (let i = reader; running; i += 1) {
      const request = requests[i % requests.length]!;
      const response = await fetch(`${base}${request.path}`, { headers: request.headers });
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return Object.fromEntries(statuses);
    },
  };
}

/** The reader process's billing_reads_total by `server/reason`. */
async function readsOf(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const reads: Record<string, number> = {};
  for (const match of text.matchAll(/^billing_reads_total\{server="(\w+)",reason="(\w+)"\} (\d+)$/gm)) reads[`${match[1]}/${match[2]}`] = Number(match[3]);
  return reads;
}

async function main() {
  const pair = await startReplicaPair();
  const sandbox = await startSandbox();
  const db = createPrismaClient(pair.primaryUrl);
  const readerService = await startService(pair.primaryUrl, {
    PAYMENT_API_BASE_URL: sandbox.url,
    ...(ON_PRIMARY ? {} : { DATABASE_READ_URL: pair.replicaUrl }),
  });
  const runs: Record<string, unknown>[] = [];
  const primaryCpu = '0';
  if (PIN) {
    pin(await postmasterOf(pair.primaryUrl), primaryCpu);
    pin(sandbox.pid, primaryCpu);
    pin(await postmasterOf(pair.replicaUrl), '1');
    pin(readerService.pid, '1');
    pin(process.pid, '1');
  }
  const pinWorkers = (pids: number[]) => {
    for (const pid of pids) pin(pid, primaryCpu);
  };
  try {
    const requests = readerRequests(await signIn(readerService.base));
    console.log(
      `replica readers: ${N} due subscriptions per drain, L = ${LATENCY_MS} ms, C = ${C}, ${READERS} readers, base backup by ${pair.baseBackup}${PIN ? '; pinned: primary, sandbox, charging on CPU 0, standby and readers on CPU 1' : ''}${ON_PRIMARY ? '; CONTROL: the readers read the primary' : ''}`,
    );
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const figures: Record<string, number> = {};
      // Alternated: idle first in odd rounds, loaded first in even ones.
      for (const loaded of round % 2 === 1 ? [false, true] : [true, false]) {
        await prepare(db, sandbox.url, N, LATENCY_MS, true);
        await pair.caughtUp();
        const before = await readsOf(readerService.base);
        const readers = loaded ? startReaders(readerService.base, requests) : undefined;
        const result = await drain(pair.primaryUrl, sandbox.url, 1, C, ROOT, PIN ? pinWorkers : undefined);
        const statuses = await readers?.stop();
        const after = await readsOf(readerService.base);
        const served = Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
        figures[loaded ? 'loaded' : 'idle'] = result.perSecond;
        runs.push({ round, loaded, charges: result.succeeded, seconds: result.seconds, perSecond: result.perSecond, readerStatuses: statuses, reads: served });
        console.log(
          `  round ${round} ${loaded ? 'loaded' : 'idle  '}: ${result.succeeded} charges in ${result.seconds.toFixed(2)} s = ${result.perSecond.toFixed(1)}/s` +
            (loaded ? `; reads ${JSON.stringify(served)}, statuses ${JSON.stringify(statuses)}` : ''),
        );
      }
      ratios.push(figures.loaded! / figures.idle!);
    }
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    console.log(
      `  loaded ÷ idle: ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${median.toFixed(3)} (target ≥ ${TARGET}) ${median >= TARGET ? 'MET' : 'MISSED'}`,
    );
    runs.push({ ratios, median, target: TARGET, pinned: PIN, readFrom: ON_PRIMARY ? 'primary' : 'replica' });
  } finally {
    await readerService.stop();
    await db.$disconnect();
    sandbox.stop();
    await pair.stop();
  }
  writeResults('replica-readers', runs);
}

await main();
