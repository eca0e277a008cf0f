// The retention pass's life in the app (src/modules/erasure/purge-identities.ts, passed in by app.ts): the vaults of
// erased customers are destroyed once their retainUntil (a Korea date, kept through the whole day) has passed. The
// pass runs when the app is ready and then at minute 7 of every hour (node-cron, Korea time), on every replica: a
// vault is gone within the first hour of the Korea day after its retainUntil even if a replica was down at midnight,
// and replicas are kept apart by the pass's row locks (FOR UPDATE SKIP LOCKED), not by the cron, as the charging tick
// is (src/plugins/scheduler.ts). Its day is the service clock's (a simulated clock moves it); the timer is real time.
// Off with SCHEDULER_ENABLED=false, like the charging tick: POST /admin/retention/run drives it by hand.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { scheduleTimedPass } from './timed-pass.ts';

export const RETENTION_CRON = '7 * * * *';

/** What the timer drives: the retention pass (src/modules/erasure/purge-identities.ts), passed in by app.ts. */
export type RetentionPass = () => Promise<{ purged: number }>;

async function retentionPlugin(app: FastifyInstance, options: { purgeExpiredIdentities: RetentionPass }) {
  // Its batches are short transactions: a pass in flight at close is let finish (timed-pass.ts).
  scheduleTimedPass(app, {
    name: 'retention-pass',
    cron: RETENTION_CRON,
    run: options.purgeExpiredIdentities,
    failure: 'retention pass failed; the next one retries',
  });
}

export default fp(retentionPlugin, { name: 'retention', fastify: '5.x', dependencies: ['db'] });
