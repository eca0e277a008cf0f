// A standalone sandbox gateway on an ephemeral port, driven through its own HTTP control routes, and a gateway
// client pointed at it: contract tests talk real HTTP end to end. The Toss sandbox standalone too, for services
// started against both gateways.
import Fastify from 'fastify';
import pino from 'pino';
import { createGatewayClient } from '../../src/gateway/client.ts';
import type { GatewayClient } from '../../src/gateway/types.ts';
import { createSimulatedClock, type SimulatedClock } from '../../src/lib/clock.ts';
import { createRedactor, type Redactor } from '../../src/lib/redact.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { sandboxRoutes } from '../../src/sandbox/sandbox.routes.ts';
import { createTossSandbox } from '../../src/sandbox/toss/toss-mount.ts';
import type { FaultSpec as AnyFaultSpec } from '../../src/sandbox/faults.ts';
import type { TossLedgerEntry, TossOperation } from '../../src/sandbox/toss/toss.state.ts';
import { createSandboxState, type FaultSpec, type LedgerEntry, type WindowTerms } from '../../src/sandbox/sandbox.state.ts';
import type { LogCapture } from './app.ts';
// service.ts imports this module too: waitFor is only called once both are loaded.
import { waitFor } from './service.ts';

export const SANDBOX_SECRET = 'sandbox_contract_secret_key';
export const SANDBOX_MERCHANT = 'CONTRACT_MERCHANT';

export interface RunningSandbox {
  url: string;
  app: { close(): Promise<void> };
  clock: SimulatedClock;
  ledger(): Promise<LedgerEntry[]>;
  /** Queues a fault; answers its id (for release). */
  fault(spec: FaultSpec): Promise<{ id: number }>;
  /** Waits until `count` calls are held by faults with until 'released' (they have arrived). */
  held(count?: number): Promise<void>;
  /** Lets the held calls (of one fault, or all) go on; how many were held. */
  release(faultId?: number): Promise<number>;
  setClock(instant: Date): Promise<void>;
  reset(): Promise<void>;
  /** Approves (or declines) the hosted window through its JSON call; returns the window's transactionId. */
  authorize(
    terms: Partial<WindowTerms> & Pick<WindowTerms, 'method'>,
    decision?: 'approve' | 'decline',
  ): Promise<{ transactionId?: string; redirectUrl: string }>;
  close(): Promise<void>;
}

async function json<T>(response: Response): Promise<T> {
  if (!response.ok) throw new Error(`sandbox control answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

export async function startSandbox(): Promise<RunningSandbox> {
  const clock = createSimulatedClock();
  const app = Fastify({ loggerInstance: pino({ level: 'silent' }) });
  await app.register(sandboxRoutes, { state: createSandboxState({ clock, merchantId: SANDBOX_MERCHANT }), secretKey: SANDBOX_SECRET, prefix: '' });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const post = (path: string, body: unknown, method = 'POST') =>
    fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return {
    url,
    app,
    clock,
    ledger: async () => (await json<{ entries: LedgerEntry[] }>(await fetch(`${url}/_control/ledger`))).entries,
    fault: async (spec) => json<{ id: number }>(await post('/_control/faults', spec)),
    held: (count = 1) =>
      waitFor(
        `${count} gateway call(s) held by the sandbox`,
        async () => (await json<{ held: unknown[] }>(await fetch(`${url}/_control/held`))).held.length >= count,
      ),
    release: async (faultId) => (await json<{ released: number }>(await post('/_control/release', faultId === undefined ? {} : { faultId }))).released,
    setClock: async (instant) => void (await json(await post('/_control/clock', { now: instant.toISOString() }, 'PUT'))),
    reset: async () => void (await json(await post('/_control/reset', {}))),
    authorize: async (terms, decision = 'approve') =>
      json(
        await post('/window/authorize', {
          paymentsMethod: terms.method,
          merchantId: terms.merchantId ?? SANDBOX_MERCHANT,
          orderId: terms.orderId ?? `reg-${Math.random().toString(36).slice(2, 10)}`,
          orderName: terms.orderName ?? 'Monthly plan',
          amount: String(terms.amount ?? 9900),
          userId: terms.userId ?? 'user-1',
          successUrl: terms.successUrl ?? 'http://merchant.test/billing/success?state=s1',
          failUrl: terms.failUrl ?? 'http://merchant.test/billing/fail?state=s1',
          issueKeyOnly: terms.issueKeyOnly ?? false,
          itemCode: terms.itemCode,
          userName: terms.userName,
          userPhoneNumber: terms.userPhoneNumber,
          decision,
        }),
      ),
    close: () => app.close(),
  };
}

type TossFaultSpec = AnyFaultSpec<TossOperation>;

export interface RunningTossSandbox {
  url: string;
  clock: SimulatedClock;
  /** The keys it takes (its development keys): TOSS_SECRET_KEY and TOSS_CLIENT_KEY of a service pointed at it. */
  secretKey: string;
  clientKey: string;
  ledger(): Promise<TossLedgerEntry[]>;
  /** Queues a fault (operations ISSUE_BILLING_KEY, CHARGE, CANCEL, LOOKUP, SETTLEMENTS); answers its id. */
  fault(spec: TossFaultSpec): Promise<{ id: number }>;
  /** The environment of a service that calls it (TOSS_API_BASE_URL and its keys). */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/** A standalone Toss sandbox on an ephemeral port (memory only), as `npm run sandbox` serves it under /toss. */
export async function startTossSandbox(): Promise<RunningTossSandbox> {
  const clock = createSimulatedClock();
  const app = Fastify({ loggerInstance: pino({ level: 'silent' }) });
  const sandbox = createTossSandbox({ clock });
  await app.register(sandbox.plugin, { prefix: '' });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    clock,
    secretKey: sandbox.secretKey,
    clientKey: sandbox.clientKey,
    ledger: async () => (await json<{ entries: TossLedgerEntry[] }>(await fetch(`${url}/_control/ledger`))).entries,
    fault: async (spec) =>
      json<{ id: number }>(
        await fetch(`${url}/_control/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec) }),
      ),
    env: () => ({ TOSS_API_BASE_URL: url, TOSS_SECRET_KEY: sandbox.secretKey, TOSS_CLIENT_KEY: sandbox.clientKey }),
    close: () => app.close(),
  };
}

export function clientFor(
  url: string,
  options: { secretKey?: string; merchantId?: string; timeoutMs?: number; logs?: LogCapture; redactor?: Redactor } = {},
): GatewayClient {
  const redactor = options.redactor ?? createRedactor([options.secretKey ?? SANDBOX_SECRET]);
  return createGatewayClient({
    baseUrl: url,
    secretKey: options.secretKey ?? SANDBOX_SECRET,
    merchantId: options.merchantId ?? SANDBOX_MERCHANT,
    timeoutMs: options.timeoutMs ?? 2000,
    mobileIssueKeyPath: '/v1/billing/mobile/issue-key',
    cancelPath: '/payments/cancel',
    log: createLogger({ level: options.logs ? 'trace' : 'silent', redactor, destination: options.logs }),
    redactor,
  });
}
