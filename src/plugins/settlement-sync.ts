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
import { scheduleTimedPass } from './timed-pass.ts';

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
  app.decorate('settlementSync', { runDaily: options.syncYesterday });
  scheduleTimedPass(app, {
    name: 'settlement-sync',
    cron: SETTLEMENT_SYNC_CRON,
    run: options.syncYesterday,
    failure: 'daily settlement sync failed; the next run retries',
  });
}

export default fp(settlementSyncPlugin, { name: 'settlement-sync', fastify: '5.x', dependencies: ['db', 'gateway'] });
