// The process as an operator runs it: src/server.ts and src/cli/migrate.ts in child processes.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './setup/global-setup.ts';
import { run, waitUntilReady } from './helpers/process.ts';
import { waitFor } from './helpers/service.ts';
import { createPrismaClient, createTestDatabase } from './helpers/database.ts';
import { createRegistration } from './factories/index.ts';
import { createEndpointsService } from '../src/modules/webhooks/endpoints.service.ts';
import { createKeyring } from '../src/lib/crypto.ts';
import { readBillingKey, storeBillingKey } from '../src/modules/billing-keys/billing-keys.service.ts';
import { openIdentity, type VaultColumns } from '../src/modules/erasure/identity-vault.ts';
import { createErasure } from './helpers/erasure.ts';
import { isProcessRunning } from '../src/db/embedded-postgres.ts';
import { bannerText, startupBanner, type StartupBanner } from '../src/banner.ts';

const KEYS = {
  API_KEYS: 'server_test_api_key_0123456789',
  ADMIN_TOKENS: 'server_test_admin_token_0123456789',
  BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 3).toString('base64')}`,
  // With every secret given, a process started in the checkout generates nothing into its .data/.
  CONSOLE_SESSION_KEYS: Buffer.alloc(32, 6).toString('base64'),
};

function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postmaster.pid');
  return existsSync(file) ? Number.parseInt(readFileSync(file, 'utf8').split('\n')[0]!, 10) : undefined;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

describe('server process', () => {
  it('serves /ready against DATABASE_URL and exits 0 on SIGTERM', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const port = await freePort();
    const server = run('src/server.ts', { ...KEYS, DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', SCHEDULER_ENABLED: 'false' });
    cleanup.push(() => void server.child.kill('SIGKILL'));
    await waitUntilReady(port, server);
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });

  it('prints one start-up line naming the console, the API document, the sandbox window and the clock; its log stays JSON lines', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // Every secret given, in a directory of its own: nothing is generated, nothing printed but the log.
    const workDir = mkdtempSync(path.join(tmpdir(), 'billing-banner-'));
    cleanup.push(() => rmSync(workDir, { recursive: true, force: true }));
    const env = {
      ...KEYS,
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      CLOCK: 'simulated',
      SCHEDULER_ENABLED: 'false',
    };
    const server = run('src/server.ts', env, workDir);
    cleanup.push(() => void server.child.kill('SIGKILL'));
    await waitUntilReady(port, server);
    await waitFor('the start-up line', async () => server.output().includes('"msg":"service ready"'));

    // Not a terminal here: nothing but JSON lines, and the banner is one of them.
    const lines = server.output().trim().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const banners = records.filter((record) => record.msg === 'service ready');
    expect(banners).toHaveLength(1);
    expect(banners[0]).toMatchObject({
      level: 30,
      console: `${base}/console`,
      docs: `${base}/docs`,
      sandboxWindow: `${base}/sandbox/window`,
      clock: 'simulated',
    });
    const banner = banners[0] as unknown as StartupBanner;

    // Each address is what it says: the console's sign-in, the API document, the window a registration opens.
    const consolePage = await fetch(banner.console);
    expect(consolePage.status).toBe(200);
    expect(consolePage.url).toBe(`${base}/console/login?next=%2Fconsole`);
    const docs = await fetch(banner.docs);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
    const registration = await fetch(`${base}/api/v1/registrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.API_KEYS}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'banner', method: 'CARD', amount: 1000, orderName: 'Banner check' }),
    });
    expect(registration.status).toBe(201);
    const { window } = (await registration.json()) as { window: { url: string } };
    expect(window.url.startsWith(`${banner.sandboxWindow}?`)).toBe(true);
    expect((await fetch(window.url)).status).toBe(200);

    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
  });

  it('the start-up banner names no sandbox with a real gateway, and reads in words at a terminal', () => {
    const real = startupBanner({ publicBaseUrl: 'https://billing.example', clock: 'system', gateway: { baseUrl: 'https://gateway.example' } } as never);
    expect(real).toEqual({ console: 'https://billing.example/console', docs: 'https://billing.example/docs', clock: 'system' });
    expect(bannerText(real)).not.toContain('Sandbox');
    expect(bannerText(real)).toContain('Clock              real time');
    const sandbox = startupBanner({ publicBaseUrl: 'http://localhost:3000', clock: 'simulated', gateway: { baseUrl: undefined } } as never);
    expect(bannerText(sandbox).split('\n')).toEqual([
      '',
      'Merchant billing service is ready.',
      '  Operator console   http://localhost:3000/console',
      '  API document       http://localhost:3000/docs',
      "  Sandbox window     http://localhost:3000/sandbox/window (where a registration's window.url sends the customer)",
      '  Clock              simulated: PUT /admin/clock sets it',
      '',
      '',
    ]);
  });

  it('with no variables runs the embedded database under .data/, keeps its data across restarts and stops it on SIGTERM', async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'billing-server-'));
    cleanup.push(() => rmSync(workDir, { recursive: true, force: true }));
    const dataDir = path.join(workDir, '.data', 'postgres');
    const port = await freePort();
    const dbPort = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', EMBEDDED_DB_PORT: String(dbPort), SCHEDULER_ENABLED: 'false' };

    const first = run('src/server.ts', env, workDir);
    cleanup.push(() => void first.child.kill('SIGKILL'));
    await waitUntilReady(port, first);
    expect(first.output()).toContain('embedded DEVELOPMENT PostgreSQL');
    expect(first.output()).toContain('Development secrets were generated');
    expect(existsSync(path.join(workDir, '.data', 'dev-secrets.json'))).toBe(true);
    const pid = postmasterPid(dataDir);
    expect(pid).toBeGreaterThan(0);

    const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${dbPort}/billing` });
    await client.connect();
    await client.query(`INSERT INTO audit_events (actor, action, "entityType", "entityId") VALUES ('test', 'persist', 'probe', '1')`);
    await client.end();

    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
    expect(isProcessRunning(pid!)).toBe(false);

    const second = run('src/server.ts', env, workDir);
    cleanup.push(() => void second.child.kill('SIGKILL'));
    await waitUntilReady(port, second);
    // Secrets are printed once, at first start only.
    expect(second.output()).not.toContain('Development secrets were generated');
    const again = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${dbPort}/billing` });
    await again.connect();
    const { rows } = await again.query(`SELECT action FROM audit_events WHERE "entityType" = 'probe'`);
    await again.end();
    expect(rows).toEqual([{ action: 'persist' }]);
    const secondPid = postmasterPid(dataDir);
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
    expect(isProcessRunning(secondPid!)).toBe(false);
  });

  // Four processes start one after the other, the first with a new PostgreSQL cluster: on a loaded 2-core machine that
  // alone took over 30 s; each start is waited for by its /ready, under the suite's safety net.
  it('a second process on the same .data/ reuses the running embedded database and never stops it; an orphaned one is adopted', async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'billing-shared-'));
    cleanup.push(() => rmSync(workDir, { recursive: true, force: true }));
    const dataDir = path.join(workDir, '.data', 'postgres');
    const [port, otherPort, dbPort] = [await freePort(), await freePort(), await freePort()];
    const env = { HOST: '127.0.0.1', EMBEDDED_DB_PORT: String(dbPort), SCHEDULER_ENABLED: 'false' };

    const first = run('src/server.ts', { ...env, PORT: String(port) }, workDir);
    cleanup.push(() => void first.child.kill('SIGKILL'));
    await waitUntilReady(port, first);
    const pid = postmasterPid(dataDir)!;

    const migrate = run('src/cli/migrate.ts', env, workDir);
    expect(await migrate.exit).toBe(0);
    expect(migrate.output()).toContain('already running');
    const second = run('src/server.ts', { ...env, PORT: String(otherPort) }, workDir);
    cleanup.push(() => void second.child.kill('SIGKILL'));
    await waitUntilReady(otherPort, second);
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);

    // The first server's database outlived both.
    expect(postmasterPid(dataDir)).toBe(pid);
    expect(isProcessRunning(pid)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(200);

    // Killed outright, the first leaves its cluster running; the next start adopts it and stops it on SIGTERM.
    first.child.kill('SIGKILL');
    await first.exit;
    expect(isProcessRunning(pid)).toBe(true);
    const third = run('src/server.ts', { ...env, PORT: String(port) }, workDir);
    cleanup.push(() => void third.child.kill('SIGKILL'));
    await waitUntilReady(port, third);
    expect(third.output()).toContain('adopting the embedded PostgreSQL');
    third.child.kill('SIGTERM');
    expect(await third.exit).toBe(0);
    expect(isProcessRunning(pid)).toBe(false);
  });

  it('refuses to start in production without DATABASE_URL, naming it', async () => {
    const server = run('src/server.ts', { NODE_ENV: 'production' });
    expect(await server.exit).not.toBe(0);
    expect(server.output()).toMatch(/DATABASE_URL/);
  });

  it('a malformed DATABASE_URL stops the process with one line naming it, without repeating the value', async () => {
    const server = run('src/server.ts', { DATABASE_URL: 'postgres//billing:hunter2-secret@db/billing' });
    expect(await server.exit).toBe(1);
    const lines = server.output().trim().split('\n');
    expect(lines).toEqual([expect.stringMatching(/^Configuration error: DATABASE_URL: not a PostgreSQL connection string/)]);
    expect(server.output()).not.toContain('hunter2');
  });

  it('runs on the Node major production runs on (24 or later), as npm scripts bring it', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
  });

  it('npm run sandbox serves the sandbox gateway alone on SANDBOX_PORT and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const sandbox = run('src/sandbox/server.ts', { SANDBOX_PORT: String(port), HOST: '127.0.0.1' });
    cleanup.push(() => void sandbox.child.kill('SIGKILL'));
    let clock: Response | undefined;
    const answered = async () => {
      clock = await fetch(`http://127.0.0.1:${port}/_control/clock`).catch(() => undefined);
      return clock !== undefined;
    };
    await waitFor('npm run sandbox to listen on SANDBOX_PORT', answered);
    expect(clock?.status).toBe(200);
    const unauthorized = await fetch(`http://127.0.0.1:${port}/billing/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unauthorized.status).toBe(401);
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exit).toBe(0);
  });

  it('keys:rotate re-encrypts stored billing keys, webhook signing secrets and erasure vaults under the first configured key and exits 0', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const db = createPrismaClient(database.url);
    const registration = await createRegistration(db);
    const k0 = { id: 'k0', key: Buffer.alloc(32, 4) };
    const k1 = { id: 'k1', key: Buffer.alloc(32, 5) };
    await db.$transaction((tx) =>
      storeBillingKey(tx, createKeyring([k0]), {
        registrationId: registration.id,
        userId: 'u',
        method: 'CARD',
        fields: { billingKey: 'BK_ROTATE_ME_0001', extra: {} },
      }),
    );
    const endpoints = createEndpointsService({ db, keyring: createKeyring([k0]), config: { webhooks: { allowHttp: true } } as never });
    const endpoint = await endpoints.create({ url: 'https://merchant.example/hooks' });
    const identity = { userId: 'VAULT_USER_ROTATE_ME', names: ['박지훈'], phoneNumbers: ['01044443333'] };
    const erasure = await createErasure(db, { identity, keyring: createKeyring([k0]) });
    // In a directory of its own: the development defaults it fills in are written to its .data/, not the checkout's.
    const workDir = mkdtempSync(path.join(tmpdir(), 'billing-rotate-'));
    cleanup.push(() => rmSync(workDir, { recursive: true, force: true }));
    const rotate = run(
      'src/cli/rotate-keys.ts',
      {
        DATABASE_URL: database.url,
        BILLING_KEY_ENCRYPTION_KEYS: `k1:${k1.key.toString('base64')},k0:${k0.key.toString('base64')}`,
      },
      workDir,
    );
    expect(await rotate.exit).toBe(0);
    expect(rotate.output()).toContain('"rotated":1');
    const row = await db.billingKey.findFirstOrThrow();
    expect(readBillingKey(createKeyring([k1]), row)).toBe('BK_ROTATE_ME_0001');
    expect(rotate.output()).not.toContain('BK_ROTATE_ME_0001');
    // Webhook signing secrets too: readable with the new key alone, unchanged.
    const after = createEndpointsService({ db, keyring: createKeyring([k1]), config: { webhooks: { allowHttp: true } } as never });
    expect(await after.currentSecret(endpoint.id)).toBe(endpoint.secret);
    expect(rotate.output()).not.toContain(endpoint.secret.slice(6));
    // Erasure vaults too: re-sealed under the new key, the same identity, none of it in the output.
    const vault = (await db.erasure.findUniqueOrThrow({ where: { id: erasure.id } })) as unknown as VaultColumns;
    expect(vault.identityKeyId).toBe('k1');
    expect(openIdentity(createKeyring([k1]), erasure.id, vault)).toEqual(identity);
    expect(rotate.output()).toContain('erasure vaults re-sealed');
    for (const value of [identity.userId, ...identity.names, ...identity.phoneNumbers]) expect(rotate.output()).not.toContain(value);
    await db.$disconnect();
  });

  it('db:migrate on an up-to-date database changes nothing and exits 0', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const read = async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query('SELECT * FROM _prisma_migrations ORDER BY id');
      await client.end();
      return rows;
    };
    const before = await read();
    const migrate = run('src/cli/migrate.ts', { DATABASE_URL: database.url });
    expect(await migrate.exit).toBe(0);
    expect(migrate.output()).toContain('database already up to date');
    expect(await read()).toEqual(before);
  });
});
