// The retention pass's life in the app (src/modules/erasure/purge-identities.ts, passed in by app.ts): the vaults of
// erased customers are destroyed once their retainUntil (a Korea date, kept through the whole day) has passed. The
// pass runs when the app is ready and then at minute 7 of every hour (node-cron, Korea time), on every replica: a
// vault is gone within the first hour of the Korea day after its retainUntil even if a replica was down at midnight,
// and replicas are kept apart by the pass's row locks (FOR UPDATE SKIP LOCKED), not by the cron, as the charging tick
// is (src/plugins/scheduler.ts). Its day is the service clock's (a simulated clock moves it); the timer is real time.
// Off with SCHEDULER_ENABLED=false, like the charging tick: POST /admin/retention/run drives it by hand.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import cron, { type ScheduledTask } from 'node-cron';
import { KOREA_ZONE } from '../lib/calendar.ts';

export const RETENTION_CRON = '7 * * * *';

/** What the timer drives: the retention pass (src/modules/erasure/purge-identities.ts), passed in by app.ts. */
export type RetentionPass = () => Promise<{ purged: number }>;

async function retentionPlugin(app: FastifyInstance, options: { purgeExpiredIdentities: RetentionPass }) {
  const { purgeExpiredIdentities } = options;
  let task: ScheduledTask | undefined;
  let running: Promise<unknown> | undefined;

  const runPass = async () => {
    running = purgeExpiredIdentities().catch((error: unknown) => app.log.error({ err: error }, 'retention pass failed; the next one retries'));
    await running;
  };

  if (app.config.scheduler.enabled) {
    app.addHook('onReady', async () => {
      // Not awaited: readiness does not wait on the pass.
      void runPass();
      task = cron.schedule(RETENTION_CRON, runPass, { name: 'retention-pass', noOverlap: true, timezone: KOREA_ZONE });
    });
  }

  // preClose runs before onClose, while the database is still open: a pass in flight is let finish (its batches are
  // short transactions).
  app.addHook('preClose', async () => {
    await task?.destroy();
    await running;
  });
}

export default fp(retentionPlugin, { name: 'retention', fastify: '5.x', dependencies: ['db'] });
