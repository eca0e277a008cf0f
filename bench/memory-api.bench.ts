// The service's resident memory through the work a merchant's integration brings it (issue 35; docs/benchmarks.md
// "Memory"): src/server.ts started as `npm start` starts it (its node flags and compile cache, the simulated clock),
// N registrations created through POST /api/v1/registrations and completed as a browser completes them (the
// sandbox window's decision, then the redirect to /billing/success and the result page), then the clock moved a
// month on and the N subscriptions drained through POST /admin/scheduler/run. The process's RSS is sampled from
// /proc every 50 ms throughout; printed: idle after start, the peak while registering and the RSS once settled
// after it, the peak during the drain and the RSS after it, with the anonymous memory (smaps_rollup) at each stage.
//
//   node bench/memory-api.bench.ts
//   BENCH_SUBSCRIPTIONS (2000)      registrations, then charges
//   BENCH_CONCURRENCY (16)          SCHEDULER_CONCURRENCY, and the browsers registering at once
//   BENCH_SANDBOX=process|mounted   the gateway: the sandbox in a process of its own (PAYMENT_API_BASE_URL, as in
//                                   production; the default), or the one `npm start` mounts without it (development)
//   BENCH_ROUNDS (1)                that many services, one after the other, each on a fresh database
//   BENCH_NODE_FLAGS="--flag …"     added to the start script's (e.g. to try a V8 setting)
//   BENCH_ENV="NAME=value …"        added to the service's environment (e.g. MALLOC_ARENA_MAX=2)
//   BENCH_TREE=<checkout>           that checkout's service (its src/server.ts, start flags and compile cache)
//   MEMORY_SNAPSHOT=<dir>           heap snapshots of the service (--heapsnapshot-signal) when idle, after the
//                                   registrations and after the drain, each summarised (bench/memory-parts.ts);
//                                   writing one takes seconds and memory: its RSS figures are not the run's
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { postJson, startSandbox, writeResults } from './charging.bench.ts';
import { summarise } from './memory-parts.ts';
import { BENCH_ADMIN_TOKEN, BENCH_API_KEY, memoryOf, startService, type ServiceProcess } from './service-process.ts';

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 2000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const MOUNTED = process.env.BENCH_SANDBOX === 'mounted';
const SMAPS = process.env.MEMORY_SMAPS === '1';
const ALLOCATIONS = process.env.MEMORY_ALLOCATIONS === '1';
const SNAPSHOTS = process.env.MEMORY_SNAPSHOT ? path.resolve(process.env.MEMORY_SNAPSHOT) : undefined;
const TREE = process.env.BENCH_TREE ? path.resolve(process.env.BENCH_TREE) : undefined;
const EXTRA_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_ENV ?? '')
    .split(' ')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const log = pino({ level: 'error' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round1 = (value: number) => Math.round(value * 10) / 10;

/** The CPU time (user + system, ms) a process has used, from /proc (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident and anonymous memory of a process, in MB (smaps_rollup). */
function residentOf(pid: number): { rssMb: number; anonMb: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
  return { rssMb: round1(kb('Rss') / 1024), anonMb: round1(kb('Anonymous') / 1024) };
}

/**
 * What the resident memory is made of, from the service's own /metrics (prom-client's default metrics): V8's heap
 * reserved and used, per space, and the memory outside the heap that V8 knows of (external: Buffers, wasm); the rest
 * of the RSS is the binary's pages and native allocations (malloc).
 */
async function partsOf(service: ServiceProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${service.base}/metrics`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })).text();
  const value = (pattern: RegExp) => round1(Number(pattern.exec(text)?.[1] ?? Number.NaN) / 1048576);
  const parts: Record<string, number> = {
    rss: value(/^process_resident_memory_bytes (\S+)/m),
    heapTotal: value(/^nodejs_heap_size_total_bytes (\S+)/m),
    heapUsed: value(/^nodejs_heap_size_used_bytes (\S+)/m),
    external: value(/^nodejs_external_memory_bytes (\S+)/m),
  };
  for (const match of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)/gm)) {
    const size = round1(Number(match[2]) / 1048576);
    if (size >= 1) parts[`space ${match[1]}`] = size;
  }
  return parts;
}

const showParts = (parts: Record<string, number>) =>
  `heap ${parts.heapUsed}/${parts.heapTotal} MB used/reserved (${Object.entries(parts)
    .filter(([key]) => key.startsWith('space '))
    .map(([key, size]) => `${key.slice(6)} ${size}`)
    .join(', ')}), external ${parts.external}, rest ${round1(parts.rss! - parts.heapTotal! - parts.external!)}`;

/**
 * MEMORY_ALLOCATIONS=1: V8's sampling heap profiler over the registrations, through the inspector, counting every
 * sampled allocation, collected or not (what makes garbage), summed by the function that allocated it.
 */
async function allocationProfiler(inspectPort: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.onmessage = (message) => {
    const data = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
    if (data.id !== undefined) waiting.get(data.id)?.(data.result);
  };
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      id += 1;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send('HeapProfiler.enable');
  await send('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return async (count: number) => {
    interface Node {
      callFrame: { functionName: string; url: string; lineNumber: number };
      selfSize: number;
      children: Node[];
    }
    const { profile } = (await send('HeapProfiler.stopSampling')) as { profile: { head: Node } };
    socket.close();
    const bySite = new Map<string, number>();
    const byFile = new Map<string, number>();
    let total = 0;
    const walk = (node: Node) => {
      const url = node.callFrame.url.replace(/^file:\/\//, '').replace(process.cwd(), '.');
      const site = `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      const file = url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, '$1');
      byFile.set(file, (byFile.get(file) ?? 0) + node.selfSize);
      total += node.selfSize;
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
    console.log(`allocated: ${(total / 1048576).toFixed(0)} MB, ${(total / count / 1024).toFixed(0)} KB each`);
    for (const [file, size] of top(byFile, 15)) console.log(`  ${(size / count / 1024).toFixed(1).padStart(7)} KB each  ${file}`);
    console.log('by function:');
    for (const [site, size] of top(bySite, 30)) console.log(`  ${(size / count / 1024).toFixed(1).padStart(7)} KB each  ${site}`);
  };
}

/**
 * MEMORY_SMAPS=1: the process's resident anonymous memory by mapping (/proc/<pid>/smaps): the brk heap (malloc's main
 * arena), the mappings malloc's other arenas live in (64 MB reservations), and the rest (V8's pages, mostly).
 */
function smapsOf(pid: number): string {
  const groups = new Map<string, { rss: number; count: number }>();
  let current = '';
  let size = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      size = (Number.parseInt(head[2]!, 16) - Number.parseInt(head[1]!, 16)) / 1024;
      current = head[3] ? (head[3].startsWith('/') ? 'files' : head[3]) : 'anonymous';
      continue;
    }
    if (!line.startsWith('Rss:')) continue;
    const rss = Number(line.split(/\s+/)[1]);
    // malloc's arenas reserve 64 MB each (in one or two mappings).
    const key =
      current === 'anonymous' && size >= 32 * 1024 && size <= 64 * 1024
        ? 'anonymous 32-64 MB mappings (malloc arenas)'
        : current === 'anonymous'
          ? `anonymous ${size >= 1024 ? `${Math.min(2 ** Math.ceil(Math.log2(size / 1024)), 4096)} MB` : 'under 1 MB'} mappings`
          : current;
    const group = groups.get(key) ?? { rss: 0, count: 0 };
    group.rss += rss;
    group.count += 1;
    groups.set(key, group);
  }
  return [...groups]
    .filter(([, g]) => g.rss >= 1024)
    .sort((a, b) => b[1].rss - a[1].rss)
    .map(([key, g]) => `${key} ×${g.count}: ${(g.rss / 1024).toFixed(1)} MB`)
    .join('; ');
}

/** The highest RSS sampled between two calls of take(), every 50 ms. */
function peakSampler(pid: number) {
  let highest = 0;
  const timer = setInterval(() => {
    highest = Math.max(highest, memoryOf(pid).rssMb);
  }, 50);
  return {
    take() {
      const peak = Math.max(highest, memoryOf(pid).rssMb);
      highest = 0;
      return round1(peak);
    },
    stop: () => clearInterval(timer),
  };
}

/** One customer's registration, as the merchant's backend and the customer's browser make it. */
async function register(service: ServiceProcess, sandboxBase: string, index: number) {
  const created = await fetch(`${service.base}/api/v1/registrations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ userId: `memory-user-${index}`, method: 'CARD', amount: 9900, orderName: 'Monthly plan' }),
  });
  if (created.status !== 201) throw new Error(`registration answered ${created.status}: ${await created.text()}`);
  const { window } = (await created.json()) as { window: Record<string, unknown> };
  // The window page (the mounted sandbox's is served by the service), then the Approve button's form.
  if (typeof window.url === 'string') {
    const page = await fetch(window.url);
    if (!page.ok) throw new Error(`window page answered ${page.status}`);
    await page.arrayBuffer();
  }
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(window)) if (key !== 'url' && value !== undefined) form.set(key, String(value));
  form.set('decision', 'approve');
  // The decision redirects (303) to /billing/success, which redirects to the result page: followed as a browser does.
  const result = await fetch(`${sandboxBase}/window/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: form.toString(),
  });
  const text = await result.text();
  if (!result.ok || !result.url.includes('status=success'))
    throw new Error(`the window's approval ended at ${result.url} (${result.status}): ${text.slice(0, 200)}`);
}

async function registerAll(service: ServiceProcess, sandboxBase: string) {
  let next = 0;
  const browser = async () => {
    for (let index = next++; index < N; index = next++) await register(service, sandboxBase, index);
  };
  await Promise.all(Array.from({ length: C }, browser));
}

/** SIGUSR2 makes the service write a heap snapshot into `dir` (--heapsnapshot-signal, --diagnostic-dir); waits for it. */
async function snapshot(service: ServiceProcess, dir: string, stage: string) {
  const before = new Set(readdirSync(dir));
  process.kill(service.pid, 'SIGUSR2');
  for (;;) {
    await sleep(500);
    const written = readdirSync(dir).find((file) => !before.has(file) && file.endsWith('.heapsnapshot'));
    if (!written) continue;
    const file = path.join(dir, written);
    // Written once it reads whole (the file grows for seconds).
    for (;;) {
      await sleep(2000);
      try {
        JSON.parse(readFileSync(file, 'utf8'));
        break;
      } catch {
        // not yet
      }
    }
    console.log(`\n${stage}:`);
    summarise(file);
    return;
  }
}

async function oneRound(round: number) {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'memory-api-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const sandbox = MOUNTED ? undefined : await startSandbox();
  let snapshotDir: string | undefined;
  if (SNAPSHOTS) {
    snapshotDir = path.join(SNAPSHOTS, `round-${round}`);
    mkdirSync(snapshotDir, { recursive: true });
  }
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    const env: Record<string, string> = { CLOCK: 'simulated', SCHEDULER_CONCURRENCY: String(C), ...EXTRA_ENV };
    if (sandbox) env.PAYMENT_API_BASE_URL = sandbox.url;
    const inspectPort = ALLOCATIONS ? await freePort() : 0;
    const flags = [
      ...EXTRA_FLAGS,
      ...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : []),
      ...(ALLOCATIONS ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
    ];
    // The first start fills the compile cache, as a checkout's first `npm start` does; the second is measured.
    await (await startService(embedded.adminConnectionString, env, flags, TREE)).stop();
    const service = await startService(embedded.adminConnectionString, env, flags, TREE);
    const sandboxBase = sandbox ? sandbox.url : `${service.base}/sandbox`;
    const sampler = peakSampler(service.pid);
    const load = () => os.loadavg().map((l) => Math.round(l * 100) / 100);
    try {
      await sleep(3000);
      const maps = { idle: SMAPS ? smapsOf(service.pid) : '', registered: '', drained: '' };
      const idle = { ...residentOf(service.pid), parts: await partsOf(service), load: load() };
      sampler.take();
      if (snapshotDir) await snapshot(service, snapshotDir, 'heap when idle');
      const allocations = ALLOCATIONS ? await allocationProfiler(inspectPort) : undefined;
      let started = process.hrtime.bigint();
      await registerAll(service, sandboxBase);
      await allocations?.(N);
      const registerSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const registerPeak = sampler.take();
      await sleep(3000);
      if (SMAPS) maps.registered = smapsOf(service.pid);
      const registered = { ...residentOf(service.pid), parts: await partsOf(service), peakMb: registerPeak, seconds: round1(registerSeconds), load: load() };
      sampler.take();
      if (snapshotDir) await snapshot(service, snapshotDir, `heap after ${N} registrations`);

      // A month and a day on: every subscription's second cycle is due.
      const month = new Date(Date.now() + 32 * 86_400_000).toISOString();
      const admin = { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'idempotency-key': randomUUID() };
      const set = await fetch(`${service.base}/admin/clock`, {
        method: 'PUT',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ now: month }),
      });
      if (!set.ok) throw new Error(`admin/clock answered ${set.status}: ${await set.text()}`);
      if (sandbox)
        await fetch(`${sandbox.url}/_control/clock`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: month }) });
      sampler.take();
      const drainLoad = load();
      const cpuBefore = cpuMsOf(service.pid);
      started = process.hrtime.bigint();
      const answer = await postJson(`${service.base}/admin/scheduler/run`, { ...admin, 'idempotency-key': randomUUID() }, { reason: 'benchmark' });
      const drainSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (answer.status !== 200) throw new Error(`scheduler/run answered ${answer.status}: ${answer.body}`);
      const report = JSON.parse(answer.body) as { succeeded: number };
      if (report.succeeded !== N) throw new Error(`the drain charged ${report.succeeded} of ${N}: ${answer.body}`);
      const drainCpuMs = cpuMsOf(service.pid) - cpuBefore;
      const drainPeak = sampler.take();
      await sleep(3000);
      if (SMAPS) maps.drained = smapsOf(service.pid);
      const drained = {
        ...residentOf(service.pid),
        parts: await partsOf(service),
        peakMb: drainPeak,
        seconds: round1(drainSeconds),
        perSecond: Math.round(N / drainSeconds),
        cpuMsPerCharge: Math.round((drainCpuMs / N) * 100) / 100,
        load: drainLoad,
      };
      if (snapshotDir) await snapshot(service, snapshotDir, `heap after the drain of ${N}`);
      const result = {
        round,
        sandbox: MOUNTED ? 'mounted' : 'process',
        count: N,
        concurrency: C,
        flags: EXTRA_FLAGS,
        env: EXTRA_ENV,
        idle,
        registered,
        drained,
      };
      console.log(
        `round ${round}:\n  idle: ${showParts(idle.parts)}\n  after the registrations: ${showParts(registered.parts)}\n  after the drain: ${showParts(drained.parts)}\n${SMAPS ? `  mappings: idle: ${maps.idle}\n    after the registrations: ${maps.registered}\n    after the drain: ${maps.drained}\n` : ''}  idle ${idle.rssMb} MB (anonymous ${idle.anonMb}; load ${idle.load.join(' ')}) | ${N} registrations in ${registered.seconds} s: peak ${registered.peakMb} MB, then ${registered.rssMb} MB (anonymous ${registered.anonMb}) | drain ${drained.perSecond}/s, CPU ${drained.cpuMsPerCharge} ms/charge: peak ${drained.peakMb} MB, then ${drained.rssMb} MB (anonymous ${drained.anonMb}; load ${drainLoad.join(' ')})`,
      );
      return result;
    } finally {
      sampler.stop();
      await service.stop();
    }
  } finally {
    sandbox?.stop();
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

console.log(
  `memory through the API: ${N} registrations then a drain of ${N}, SCHEDULER_CONCURRENCY ${C}, the sandbox ${MOUNTED ? 'mounted in the service' : 'in a process of its own'}${TREE ? `, the service of ${TREE}` : ''}${EXTRA_FLAGS.length ? `, extra flags ${EXTRA_FLAGS.join(' ')}` : ''}${Object.keys(EXTRA_ENV).length ? `, extra env ${process.env.BENCH_ENV}` : ''}; node ${process.version}`,
);
const runs = [];
for (let round = 1; round <= ROUNDS; round += 1) runs.push(await oneRound(round));
if (!SNAPSHOTS) writeResults('memory-api', runs);
