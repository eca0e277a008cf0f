// A pass run on a timer of its own (the retention pass, the daily settlement sync): once when the app is ready (not
// awaited: readiness does not wait on it), then on its cron in Korea time (node-cron, real time; a run still going
// makes the next one wait its turn: noOverlap), only when SCHEDULER_ENABLED. A failure is logged and the next run
// retries. preClose (before onClose, while the database and the gateways are open) stops the timer and lets a run in
// flight finish.
import type { FastifyInstance } from 'fastify';
import cron, { type ScheduledTask } from 'node-cron';
import { KOREA_ZONE } from '../lib/calendar.ts';

export function scheduleTimedPass(app: FastifyInstance, pass: { name: string; cron: string; run: () => Promise<unknown>; failure: string }): void {
  let task: ScheduledTask | undefined;
  let running: Promise<unknown> | undefined;

  const runPass = async () => {
    running = pass.run().catch((error: unknown) => app.log.error({ err: error }, pass.failure));
    await running;
  };

  if (app.config.scheduler.enabled) {
    app.addHook('onReady', async () => {
      void runPass();
      task = cron.schedule(pass.cron, runPass, { name: pass.name, noOverlap: true, timezone: KOREA_ZONE });
    });
  }

  app.addHook('preClose', async () => {
    await task?.destroy();
    await running;
  });
}
