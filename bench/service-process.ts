// The service (src/server.ts) in a process of its own for the benchmarks, started with the node flags `npm start`
// uses (serviceNodeFlags), the scheduler off, and its resident memory sampled from /proc while it runs.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/setup/global-setup.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BENCH_ADMIN_TOKEN = 'bench_admin_token_0123456789abcdef';
export const BENCH_API_KEY = 'bench_api_key_0123456789abcdef';

/** VmRSS and VmHWM (the peak since the process started) of a process, in MB, from /proc. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

export interface ServiceProcess {
  base: string;
  pid: number;
  /** Starts sampling RSS every `ms`; stop() answers the highest sample and the kernel's peak (VmHWM). */
  sample(ms?: number): { stop(): { sampledPeakMb: number; peakMb: number; samples: number } };
  stop(): Promise<void>;
}

/** `tree`: the checkout whose src/server.ts runs, with its own `npm start` flags and compile cache. */
export async function startService(databaseUrl: string, env: Record<string, string> = {}, nodeFlags: string[] = [], tree = ROOT): Promise<ServiceProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...serviceNodeFlags(tree), ...nodeFlags, path.join(tree, 'src/server.ts')], {
    cwd: tree,
    env: {
      PATH: process.env.PATH ?? '',
      ...serviceNodeEnv(tree),
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      DATABASE_URL: databaseUrl,
      API_KEYS: BENCH_API_KEY,
      ADMIN_TOKENS: BENCH_ADMIN_TOKEN,
      BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      PAYMENT_SECRET_KEY: 'bench_gateway_secret_key',
      PAYMENT_MERCHANT_ID: 'BENCH',
      SCHEDULER_ENABLED: 'false',
      LOG_LEVEL: 'error',
      RATE_LIMIT_API: '100000000',
      RATE_LIMIT_BROWSER: '100000000',
      RATE_LIMIT_ADMIN: '100000000',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; ; i += 1) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i === 300) throw new Error('the service did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pid = child.pid!;
  return {
    base,
    pid,
    sample(ms = 50) {
      let highest = 0;
      let samples = 0;
      const timer = setInterval(() => {
        highest = Math.max(highest, memoryOf(pid).rssMb);
        samples += 1;
      }, ms);
      return {
        stop() {
          clearInterval(timer);
          return { sampledPeakMb: highest, peakMb: memoryOf(pid).peakMb, samples };
        },
      };
    },
    async stop() {
      child.kill();
      await exited;
    },
  };
}

/**
 * What `npm start` puts in node's environment besides the flags: the compile cache (package.json's start script), so
 * that the benchmarks' service processes start as `npm start` starts them (a tree whose script sets none gets none).
 */
export function serviceNodeEnv(tree = ROOT): Record<string, string> {
  const start = (JSON.parse(readFileSync(path.join(tree, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const match = /NODE_COMPILE_CACHE=\$\{NODE_COMPILE_CACHE:-([^}\s]+)\}/.exec(start);
  return match ? { NODE_COMPILE_CACHE: path.resolve(tree, match[1]!) } : {};
}

/** The node flags `npm start` runs the service with (package.json), so that the benchmarks measure it as deployed. */
export function serviceNodeFlags(tree = ROOT): string[] {
  const start = (JSON.parse(readFileSync(path.join(tree, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const match = /exec node ((?:--\S+ )*)src\/server\.ts$/.exec(start);
  if (!match) throw new Error(`package.json's start script does not run node src/server.ts: ${start}`);
  return match[1]!.trim().split(' ').filter(Boolean);
}
