// The Toss sandbox as mounted (its keys: the ones configured, else its development keys, src/dev-secrets.ts): under
// /sandbox/toss in the app and on the app's private loopback listener, one state for both (plugins/gateway.ts; kept
// in the service's database, beside the Danal sandbox's), and under /toss in `npm run sandbox` (memory only). It runs
// on the clock it is given, the Danal sandbox's.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/prisma.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_MID, TOSS_SANDBOX_SECRET_KEY } from '../../dev-secrets.ts';
import type { Clock } from '../../lib/clock.ts';
import { createSandboxStore } from '../sandbox.store.ts';
import { tossSandboxRoutes } from './toss.routes.ts';
import { createTossSandboxState, type TossSandboxState } from './toss.state.ts';

/** Its own table in the sandbox schema. */
const TOSS_TABLE = 'toss_records';

export interface TossSandboxOptions {
  clock: Clock;
  /** The database to keep its state in; memory only without one. */
  db?: Db;
  /** The keys it takes (TOSS_SECRET_KEY, TOSS_CLIENT_KEY when set without a URL); its development keys otherwise. */
  secretKey?: string;
  clientKey?: string;
}

/** The keys the sandbox takes, and so the ones the service calls it and opens its window with. */
export function tossSandboxKeys(options: { secretKey?: string; clientKey?: string }): { secretKey: string; clientKey: string } {
  return { secretKey: options.secretKey ?? TOSS_SANDBOX_SECRET_KEY, clientKey: options.clientKey ?? TOSS_SANDBOX_CLIENT_KEY };
}

export interface TossSandbox {
  readonly secretKey: string;
  readonly clientKey: string;
  readonly state: TossSandboxState;
  /** Its routes: register with `{ prefix }` where it is served, as often as needed (one state behind them all). */
  plugin(app: FastifyInstance, options: { prefix: string }): Promise<void>;
}

export function createTossSandbox(options: TossSandboxOptions): TossSandbox {
  const keys = tossSandboxKeys(options);
  const state = createTossSandboxState({ clock: options.clock, mId: TOSS_SANDBOX_MID });
  const store = options.db ? createSandboxStore(options.db, state, TOSS_TABLE) : undefined;
  return {
    ...keys,
    state,
    async plugin(app, { prefix }) {
      await app.register(tossSandboxRoutes, { prefix: '', mountedAt: prefix, state, store, ...keys });
    },
  };
}

/** One Toss sandbox, registered with `{ prefix, clock }` (npm run sandbox). */
export async function tossSandbox(app: FastifyInstance, options: TossSandboxOptions & { prefix: string }): Promise<void> {
  await createTossSandbox(options).plugin(app, { prefix: options.prefix });
}
