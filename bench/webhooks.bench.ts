// npm run bench (part 2): webhook dispatch throughput (issue #13's budget) against a real PostgreSQL (embedded, in a
// temporary directory) and a receiver in another process that answers 204 after a settable delay. Each run seeds
// N subscriptions with their registrations (2N events, written by the outbox trigger), then times one drain of the
// 2N deliveries at WEBHOOK_CONCURRENCY C. Targets: ≥ 1,000 deliveries/s with an immediate receiver; ≥ 0.9 × C / L with
// a receiver that answers in L ms.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createKeyring } from '../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../test/helpers/bulk.ts';
import { truncateAll } from '../test/helpers/database.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { writeResults } from './charging.bench.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000); // subscriptions seeded: twice as many deliveries
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 8);
const RECEIVER_DELAYS_MS = (process.env.BENCH_RECEIVER_MS ?? '0,50').split(',').map(Number);

const RECEIVER = `
const http = require('node:http');
const delay = Number(process.env.DELAY);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => (delay > 0 ? setTimeout(() => res.writeHead(204).end(), delay) : res.writeHead(204).end()));
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send('ready'));
`;

async function startReceiver(delayMs: number) {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', RECEIVER], {
    env: { PORT: String(port), DELAY: String(delayMs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise((resolve) => child.once('message', resolve));
  return { url: `http://127.0.0.1:${port}/hooks`, stop: () => child.kill() };
}

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    console.log(
      `\nwebhook dispatch: ${2 * EVENTS} deliveries per run, WEBHOOK_CONCURRENCY ${CONCURRENCY}; receiver in another process; node ${process.version}; ${os.cpus().length} CPUs`,
    );
    console.log('receiver delay  seconds  deliveries/s  target');
    for (const delay of RECEIVER_DELAYS_MS) {
      const receiver = await startReceiver(delay);
      try {
        const { seconds, perSecond } = await measure(embedded.adminConnectionString, receiver.url, log);
        const target = delay === 0 ? 1000 : (0.9 * CONCURRENCY * 1000) / delay;
        console.log(
          `${String(delay).padStart(12)}ms  ${seconds.toFixed(2).padStart(7)}  ${perSecond.toFixed(0).padStart(12)}  ≥ ${target.toFixed(0)} ${perSecond >= target ? 'met' : 'MISSED'}`,
        );
        runs.push({
          name: `dispatch receiver ${delay}ms`,
          receiverDelayMs: delay,
          concurrency: CONCURRENCY,
          deliveries: 2 * EVENTS,
          seconds,
          perSecond,
          target,
        });
      } finally {
        receiver.stop();
      }
    }
  } finally {
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  writeResults('webhooks', runs);
}

const runs: Record<string, unknown>[] = [];

async function measure(databaseUrl: string, url: string, log: pino.Logger) {
  const port = await freePort();
  const config = await loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    API_KEYS: 'bench_api_key_0123456789abcdef',
    BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
    PAYMENT_SECRET_KEY: 'bench_secret_key',
    PAYMENT_MERCHANT_ID: 'BENCH',
    SCHEDULER_ENABLED: 'false',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    LOG_LEVEL: 'error',
  });
  config.webhooks.enabled = false; // driven here, one drain per run
  const app = await buildApp(config, { logger: log });
  await app.listen({ host: '127.0.0.1', port });
  try {
    // The same emptying as between test files (the tables kept by invariant 15 of docs/architecture.md refuse a plain TRUNCATE).
    await truncateAll(app.db);
    await seedDueSubscriptions(app.db, createKeyring(config.encryptionKeys), {
      count: EVENTS,
      sandboxUrl: `${config.publicBaseUrl}/sandbox`,
      dueAt: new Date(),
    });
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { authorization: 'Bearer bench_api_key_0123456789abcdef' },
      payload: { url },
    });
    if (created.statusCode !== 201) throw new Error(created.body);
    // Number the seeded events before the endpoint existed, then queue them for it (recover), so timing starts
    // with N pending deliveries.
    await app.inject({ method: 'GET', url: '/api/v1/events?limit=1', headers: { authorization: 'Bearer bench_api_key_0123456789abcdef' } });
    const recovered = await app.inject({
      method: 'POST',
      url: `/api/v1/webhook-endpoints/${created.json().id}/recover`,
      headers: { authorization: 'Bearer bench_api_key_0123456789abcdef' },
      payload: { since: '2000-01-01T00:00:00Z' },
    });
    if (recovered.statusCode !== 202) throw new Error(recovered.body);
    const started = process.hrtime.bigint();
    await app.webhooks.drain();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const delivered = await app.db.webhookDelivery.count({ where: { status: 'SUCCEEDED' } });
    // Events the first numbering did not reach are numbered (and queued for the endpoint) during the drain.
    if (delivered !== 2 * EVENTS) throw new Error(`expected ${2 * EVENTS} deliveries, got ${delivered}`);
    return { seconds, perSecond: delivered / seconds };
  } finally {
    await app.close();
  }
}

await main();
