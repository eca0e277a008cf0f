// The gateway adapters alone (docs/benchmarks.md "Toss beside Danal"): Danal's and Toss's adapter, each charging
// billing keys its sandbox minted, 16 calls at a time, against the sandbox process (src/sandbox/server.ts) on its own
// port; prints per round the adapter's CPU per call (this process), the sandbox's (from /proc), the rate and the size
// of the stored answer. Rounds alternate Danal, Toss, Toss, Danal. Not part of `npm run bench`.
//
//   node bench/adapter-calls.ts          N (2000) charges a round, R (3) cycles of rounds
//   ONLY=TOSS|DANAL                      that adapter's rounds only (e.g. with --cpu-prof)
//   SBX_PROF=<dir>                       a V8 CPU profile of the sandbox process
import { spawn } from 'node:child_process';
import path from 'node:path';
import pino from 'pino';
import { createGatewayClient } from '../src/gateway/client.ts';
import { createDanalAdapter } from '../src/gateway/danal.adapter.ts';
import { createTossAdapter } from '../src/gateway/toss.adapter.ts';
import { createRedactor } from '../src/lib/redact.ts';
import { TOSS_SANDBOX_SECRET_KEY } from '../src/dev-secrets.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { readFileSync } from 'node:fs';

const ROOT = path.resolve(import.meta.dirname, '..');
const SECRET = 'bench_gateway_secret_key';
const port = await freePort();
const child = spawn(
  process.execPath,
  [...(process.env.SBX_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SBX_PROF}`] : []), path.join(ROOT, 'src/sandbox/server.ts')],
  {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      SANDBOX_PORT: String(port),
      PAYMENT_SECRET_KEY: SECRET,
      PAYMENT_MERCHANT_ID: 'BENCH',
      LOG_LEVEL: 'error',
    },
    stdio: 'inherit',
  },
);
const url = `http://127.0.0.1:${port}`;
for (;;) {
  try {
    if ((await fetch(`${url}/_control/ledger`)).ok) break;
  } catch {
    // not listening yet
  }
  await new Promise((r) => setTimeout(r, 100));
}
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const N = Number(process.env.N ?? 2000);
const C = 16;
const log = pino({ level: 'silent' });
const redactor = createRedactor([SECRET, TOSS_SANDBOX_SECRET_KEY]);
const danal = createDanalAdapter(
  createGatewayClient({
    baseUrl: url,
    secretKey: SECRET,
    merchantId: 'BENCH',
    timeoutMs: 10000,
    mobileIssueKeyPath: '/v1/billing/mobile/issue-key',
    cancelPath: '/payments/cancel',
    log,
    redactor,
  }),
);
const toss = createTossAdapter({ baseUrl: `${url}/toss`, secretKey: TOSS_SANDBOX_SECRET_KEY, timeoutMs: 10000, log, redactor });
interface Minted {
  keys: Array<{ billingKey: string; userId?: string; customerKey?: string }>;
}
async function post(p: string, body: unknown): Promise<Minted> {
  const response = await fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await response.json()) as Minted;
}
async function round(which: 'DANAL' | 'TOSS') {
  const users = Array.from({ length: N }, (_, i) => `u${i}x${Math.random().toString(36).slice(2, 8)}`);
  const keys =
    which === 'DANAL'
      ? (await post('/_control/billing-keys', { userIds: users })).keys.map((k) => ({ billingKey: k.billingKey, userId: k.userId!, customerKey: undefined }))
      : (await post('/toss/_control/billing-keys', { customerKeys: users })).keys.map((k, i) => ({
          billingKey: k.billingKey,
          customerKey: k.customerKey,
          userId: users[i]!,
        }));
  const adapter = which === 'DANAL' ? danal : toss;
  const cpu = process.cpuUsage();
  const sb = cpuOf(child.pid!);
  const t = performance.now();
  let next = 0;
  let ok = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < keys.length) {
        const k = keys[next++]!;
        const r = await adapter.chargeBillingKey({
          method: 'CARD',
          billingKey: k.billingKey,
          userId: k.userId,
          customerKey: k.customerKey,
          amount: 9900,
          orderName: 'Monthly plan',
          orderId: `S${Math.random().toString(36).slice(2, 14)}-1-1`,
        });
        if (r.outcome === 'SUCCEEDED') ok++;
        bytes += JSON.stringify(r.raw ?? {}).length;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - t;
  console.log(
    `${which}: ${ok}/${N} ok  client CPU ${((used.user + used.system) / 1000 / N).toFixed(3)} ms/call  sandbox CPU ${((cpuOf(child.pid!) - sb) / N).toFixed(3)} ms/call  ${((N / ms) * 1000).toFixed(0)}/s  raw ${Math.round(bytes / N)} B`,
  );
}
const ONLY_ONE = process.env.ONLY as 'DANAL' | 'TOSS' | undefined;
for (let i = 0; i < Number(process.env.R ?? 3); i++) {
  if (ONLY_ONE) {
    await round(ONLY_ONE);
    continue;
  }
  await round('DANAL');
  await round('TOSS');
  await round('TOSS');
  await round('DANAL');
}
child.kill('SIGINT');
danal.close();
toss.close();
await new Promise((r) => child.once('exit', r));
