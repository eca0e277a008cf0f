// Where the service's resident memory goes (issue 25, target 5; docs/benchmarks.md "Memory").
// Every figure is taken in a fresh node process started with the flags and the compile cache of `npm start`, after a
// full garbage collection (--expose-gc), from process.memoryUsage() and /proc/self/smaps.
//
//   node bench/memory-parts.ts                 each part imported alone, as the increase over a .ts file importing
//                                              nothing; each process runs twice and the second is shown (the first
//                                              fills the compile cache, as a checkout's first `npm start` does)
//   node bench/memory-parts.ts --stages        src/server.ts's stages in one process (run twice, the second shown),
//                                              against an embedded PostgreSQL of its own: imports, buildApp, listen,
//                                              idle 3 s; the gateway is given (no sandbox), the webhook dispatcher runs
//   MEMORY_SNAPSHOT=<file> … --stages          also writes a V8 heap snapshot at idle, and summarises it: self sizes by
//                                              node type and constructor, and the largest strings (module sources)
//   node bench/memory-parts.ts --summarise <file>   summarises a heap snapshot written before
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const MB = 1024 * 1024;

interface Figures {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Anonymous (not file-backed) resident memory. */
  anon: number;
  /** Resident pages of the node executable itself: its code, V8's snapshot, ICU's data, OpenSSL. */
  nodeBinary: number;
}

function measure(): Figures {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  let anon = 0;
  let nodeBinary = 0;
  let inBinary = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inBinary = line.trimEnd().endsWith(`/${path.basename(process.execPath)}`);
    else if (line.startsWith('Anonymous:')) anon += Number(line.split(/\s+/)[1]) * 1024;
    else if (inBinary && line.startsWith('Rss:')) nodeBinary += Number(line.split(/\s+/)[1]) * 1024;
  }
  return { rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external, anon, nodeBinary };
}

const show = (f: Figures) =>
  `RSS ${(f.rss / MB).toFixed(1).padStart(6)}  heap used ${(f.heapUsed / MB).toFixed(1).padStart(5)} of ${(f.heapTotal / MB).toFixed(1).padStart(5)}  external ${(f.external / MB).toFixed(1).padStart(5)}  anonymous ${(f.anon / MB).toFixed(1).padStart(6)}  node binary ${(f.nodeBinary / MB).toFixed(1).padStart(5)}`;

/** The parts measured alone: what the service's module graph is made of. */
const PARTS: Array<[string, string[]]> = [
  ['nothing (node running a .ts file)', []],
  ['fastify', ['fastify']],
  ['typebox', ['typebox']],
  ['pg', ['pg']],
  ["Prisma's generated client (imported, no query)", ['@prisma/adapter-pg', '../src/generated/prisma/client.ts']],
  ['pino', ['pino']],
  ['luxon', ['luxon']],
  ['prom-client', ['prom-client']],
  ['undici', ['undici']],
  ['@fastify/swagger + swagger-ui', ['@fastify/swagger', '@fastify/swagger-ui']],
  ['@fastify/view + eta + @fastify/static', ['@fastify/view', 'eta', '@fastify/static']],
  ['@fastify/multipart + csv-parse + iconv-lite', ['@fastify/multipart', 'csv-parse', 'iconv-lite']],
  ['src/config.ts', ['../src/config.ts']],
  ['src/plugins/docs.ts', ['../src/plugins/docs.ts']],
  ['src/sandbox/sandbox.routes.ts', ['../src/sandbox/sandbox.routes.ts']],
  ['src/modules/console/index.ts', ['../src/modules/console/index.ts']],
  ['src/app.ts (every module of the service)', ['../src/app.ts']],
];

// The parent only: a part's process imports nothing but node's own modules before its part.
const parent = process.argv[2] === undefined || process.argv[2] === '--stages';
const { serviceNodeEnv, serviceNodeFlags } = parent ? await import('./service-process.ts') : ({} as never);

function child(args: string[]): string {
  return execFileSync(process.execPath, [...serviceNodeFlags(), '--expose-gc', SELF, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...serviceNodeEnv() },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function parts() {
  console.log(
    `Each part imported alone (node ${process.version}, ${serviceNodeFlags().join(' ')}, compile cache ${serviceNodeEnv().NODE_COMPILE_CACHE ?? 'off'})`,
  );
  let base: Figures | undefined;
  for (const [name, specs] of PARTS) {
    child(['--part', ...specs]);
    const figures = JSON.parse(
      child(['--part', ...specs])
        .trim()
        .split('\n')
        .at(-1)!,
    ) as Figures;
    base ??= figures;
    const delta = (key: keyof Figures) => `${figures[key] >= base![key] ? '+' : ''}${((figures[key] - base![key]) / MB).toFixed(1)}`;
    console.log(
      `${name.padEnd(48)} ${show(figures)}   vs nothing: RSS ${delta('rss')}, heap used ${delta('heapUsed')}, anonymous ${delta('anon')}, node binary ${delta('nodeBinary')}`,
    );
  }
}

/** A free TCP port on the loopback interface. */
async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function stages() {
  const report = (stage: string) => console.log(`${stage.padEnd(24)} ${show(measure())}`);
  report('start');
  const pino = (await import('pino')).default;
  const { startEmbeddedPostgres } = await import('../src/db/embedded-postgres.ts');
  const { migrate } = await import('../src/db/migrator.ts');
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'memory-parts-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    report('database and migrations');
    const { loadConfig } = await import('../src/config.ts');
    const { buildApp } = await import('../src/app.ts');
    report('imported src/app.ts');
    const config = await loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: embedded.adminConnectionString,
      API_KEYS: 'bench_api_key_0123456789abcdef',
      ADMIN_TOKENS: 'bench_admin_token_0123456789abcdef',
      BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      PAYMENT_SECRET_KEY: 'bench_gateway_secret_key',
      PAYMENT_MERCHANT_ID: 'BENCH',
      PAYMENT_API_BASE_URL: 'http://127.0.0.1:9',
      PUBLIC_BASE_URL: 'http://127.0.0.1:1',
      SCHEDULER_ENABLED: 'false',
      LOG_LEVEL: 'error',
    });
    const app = await buildApp(config, { logger: log });
    report('buildApp');
    await app.listen({ host: '127.0.0.1', port: 0 });
    report('listening');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    report('idle 3 s');
    const file = process.env.MEMORY_SNAPSHOT;
    if (file) {
      v8.writeHeapSnapshot(file);
      await app.close();
      summarise(file);
    } else await app.close();
  } finally {
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Self sizes of a heap snapshot by node type and by constructor, and its largest strings. */
export function summarise(file: string) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [number, number, number];
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  const strings: Array<[number, string]> = [];
  let total = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt]!]!;
    const name = snapshot.strings[snapshot.nodes[i + nameAt]!]!;
    const size = snapshot.nodes[i + sizeAt]!;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    if (type === 'object' || type === 'native') byName.set(name.slice(0, 60), (byName.get(name.slice(0, 60)) ?? 0) + size);
    if (type === 'string' && size > 64 * 1024) strings.push([size, name.slice(0, 90).replace(/\s+/g, ' ')]);
  }
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\nheap snapshot ${file}: ${(total / MB).toFixed(1)} MB`);
  for (const [type, size] of top(byType, 8)) console.log(`  ${(size / MB).toFixed(2).padStart(6)} MB  ${type}`);
  console.log('objects and native memory by constructor:');
  for (const [name, size] of top(byName, 12)) console.log(`  ${(size / MB).toFixed(2).padStart(6)} MB  ${name}`);
  console.log('strings over 64 KB (module sources, mostly):');
  for (const [size, text] of strings.sort((a, b) => b[0] - a[0]).slice(0, 15)) console.log(`  ${(size / MB).toFixed(2).padStart(6)} MB  ${text}`);
}

const argv = process.argv.slice(2);
if (process.argv[1] !== SELF) {
  // Imported (bench/memory-api.bench.ts uses summarise): nothing to run.
} else if (argv[0] === '--part') {
  for (const spec of argv.slice(1)) await import(spec);
  console.log(JSON.stringify(measure()));
} else if (argv[0] === '--stages') {
  // Twice, the second shown: the first fills the compile cache.
  child(['--stages-run']);
  process.stdout.write(child(['--stages-run']));
} else if (argv[0] === '--stages-run') await stages();
else if (argv[0] === '--summarise') summarise(argv[1]!);
else await parts();
