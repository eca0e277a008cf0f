// The scheduler (docs/architecture.md "House style"): a node-cron tick (SCHEDULER_CRON) runs one charging pass, then one
// inquiry pass (unknown outcomes a gateway can be asked about); ticks never overlap in one process, and replicas are
// kept apart by the passes' row leases, not by the cron. Closing the app stops the
// tick and drains the pass in flight (bounded) before the database closes, so every answer received is recorded.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import cron, { type ScheduledTask } from 'node-cron';

/** What the tick drives: the charging engine (src/modules/payments/charge.service.ts), passed in by app.ts. */
export interface ChargingEngine {
  runPass(): Promise<unknown>;
  stop(timeoutMs: number): Promise<boolean>;
}

/**
 * How long closing the app waits for the charging pass in flight: one gateway call's timeout plus 5 s to record
 * its outcome. src/server.ts, docs/architecture.md "Recurring charging" and docker-compose.yml's stop_grace_period all follow this one value.
 */
export function drainTimeoutMs(config: { gateway: { timeoutMs: number } }): number {
  return config.gateway.timeoutMs + 5_000;
}

/** The inquiry pass (src/modules/payments/inquire-unknowns.ts), passed in by app.ts. */
export type InquiryEngine = ChargingEngine;

async function schedulerPlugin(app: FastifyInstance, options: { charges: ChargingEngine; inquiries: InquiryEngine }) {
  const { config } = app;
  const { charges, inquiries } = options;
  let task: ScheduledTask | undefined;

  if (config.scheduler.enabled) {
    app.addHook('onReady', async () => {
      task = cron.schedule(
        config.scheduler.cron,
        async () => {
          try {
            await charges.runPass();
          } catch (error) {
            app.log.error({ err: error }, 'charging pass failed');
          }
          // After the charges: a lookup never holds up a charge that is due.
          try {
            await inquiries.runPass();
          } catch (error) {
            app.log.error({ err: error }, 'inquiry pass failed');
          }
        },
        { name: 'charging-pass', noOverlap: true, timezone: config.timezone },
      );
      app.log.info({ cron: config.scheduler.cron }, 'scheduler started');
    });
  }

  // preClose runs before onClose, while the database is still open.
  app.addHook('preClose', async () => {
    await task?.destroy();
    const [drained, asked] = await Promise.all([charges.stop(drainTimeoutMs(config)), inquiries.stop(drainTimeoutMs(config))]);
    if (!drained) app.log.warn('charging pass still running at shutdown; its attempts will become UNKNOWN when their leases expire');
    if (!asked) app.log.warn('inquiry pass still running at shutdown; its lookups are asked again when their leases expire');
  });
}

export default fp(schedulerPlugin, { name: 'scheduler', fastify: '5.x', dependencies: ['db', 'gateway'] });
