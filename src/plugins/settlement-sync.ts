// The daily settlement pass's life in the app (src/modules/reconciliation/sync-settlements.ts `syncYesterday`, passed
// in by app.ts): yesterday's settlements (Korea date, by the service's clock: a simulated clock moves it) of every
// configured gateway that serves them by API (capabilities.settlementFeed: Toss) are imported once, like a file. The
// pass runs when the app is ready and then at minute 23 of every hour (node-cron, Korea time, real time): a day is
// imported within the first hour after it ends even if a replica was down at midnight, and a gateway that failed is
// asked again the next hour. Once the day is imported each run is one indexed read. Replicas are kept apart by the
// import itself, not by the cron: a day already covered is skipped, and checked again under the imports' lock before
// anything is stored (two replicas may both read the gateway in the same minute; one import is stored).
// Off with SCHEDULER_ENABLED=false, like the charging tick: POST /admin/settlement-imports/toss imports any range by
// hand, and `app.settlementSync.runDaily()` runs the pass (tests).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import cron, { type ScheduledTask } from 'node-cron';
import { KOREA_ZONE } from '../lib/calendar.ts';

export const SETTLEMENT_SYNC_CRON = '23 * * * *';

/** What the timer drives: the daily pass (sync-settlements.ts syncYesterday), passed in by app.ts. */
export type DailySettlementPass = () => Promise<Array<{ gateway: string; date: string; importId: string; imported: boolean }>>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The daily settlement pass, run by the timer; `runDaily` runs it once now. */
    settlementSync: { runDaily: DailySettlementPass };
  }
}

async function settlementSyncPlugin(app: FastifyInstance, options: { syncYesterday: DailySettlementPass }) {
  const { syncYesterday } = options;
  let task: ScheduledTask | undefined;
  let running: Promise<unknown> | undefined;

  const runPass = async () => {
    running = syncYesterday().catch((error: unknown) => app.log.error({ err: error }, 'daily settlement sync failed; the next run retries'));
    await running;
  };

  app.decorate('settlementSync', { runDaily: syncYesterday });
  if (app.config.scheduler.enabled) {
    app.addHook('onReady', async () => {
      // Not awaited: readiness does not wait on the gateway.
      void runPass();
      task = cron.schedule(SETTLEMENT_SYNC_CRON, runPass, { name: 'settlement-sync', noOverlap: true, timezone: KOREA_ZONE });
    });
  }

  // preClose runs before onClose, while the database and the gateways are still open: a pass in flight is let finish.
  app.addHook('preClose', async () => {
    await task?.destroy();
    await running;
  });
}

export default fp(settlementSyncPlugin, { name: 'settlement-sync', fastify: '5.x', dependencies: ['db', 'gateway'] });
