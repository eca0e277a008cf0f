// The Toss sandbox as mounted with its development keys (src/dev-secrets.ts): under /sandbox/toss in the app
// (plugins/gateway.ts; its state kept in the service's database, beside the Danal sandbox's) and under /toss in
// `npm run sandbox` (memory only). It runs on the clock it is given, the Danal sandbox's.
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/prisma.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_MID, TOSS_SANDBOX_SECRET_KEY } from '../../dev-secrets.ts';
import type { Clock } from '../../lib/clock.ts';
import { createSandboxStore } from '../sandbox.store.ts';
import { tossSandboxRoutes } from './toss.routes.ts';
import { createTossSandboxState } from './toss.state.ts';

/** Its own table in the sandbox schema. */
const TOSS_TABLE = 'toss_records';

export interface TossSandboxOptions {
  /** Where it is mounted ('/sandbox/toss' in the app, '/toss' standalone): register it with this prefix. */
  prefix: string;
  clock: Clock;
  /** The database to keep its state in; memory only without one. */
  db?: Db;
}

export async function tossSandbox(app: FastifyInstance, options: TossSandboxOptions): Promise<void> {
  const state = createTossSandboxState({ clock: options.clock, mId: TOSS_SANDBOX_MID });
  const store = options.db ? createSandboxStore(options.db, state, TOSS_TABLE) : undefined;
  await app.register(tossSandboxRoutes, {
    prefix: '',
    mountedAt: options.prefix,
    state,
    store,
    secretKey: TOSS_SANDBOX_SECRET_KEY,
    clientKey: TOSS_SANDBOX_CLIENT_KEY,
  });
}
