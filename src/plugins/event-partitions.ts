// The partitions pass's life in the app (src/modules/events/event-partitions.ts, passed in by app.ts): the monthly
// partitions of events and webhook deliveries are made ahead and dropped past EVENT_RETENTION. The pass runs when the
// app is ready and then at minute 41 of every hour (node-cron, Korea time, real time), on every replica: the months
// are made two ahead, so a run that fails, or finds its lock taken, is followed by hundreds more before a month's
// first event; replicas are kept apart by the pass's advisory lock, not by the cron. Its months are the service
// clock's (a simulated clock moves them). Off with SCHEDULER_ENABLED=false, like the other timed passes:
// `app.eventPartitions.run()` runs it (tests), and nothing fails meanwhile (the events of a month not made wait in
// the default partition).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { scheduleTimedPass } from './timed-pass.ts';

export const EVENT_PARTITIONS_CRON = '41 * * * *';

/** What the timer drives: the partitions pass (event-partitions.ts), passed in by app.ts. */
export type EventPartitionsPass = () => Promise<{ made: string[]; dropped: string[]; postponed: string[] }>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The partitions pass, run by the timer; `run` runs it once now. */
    eventPartitions: { run: EventPartitionsPass };
  }
}

async function eventPartitionsPlugin(app: FastifyInstance, options: { keepEventPartitions: EventPartitionsPass }) {
  app.decorate('eventPartitions', { run: options.keepEventPartitions });
  scheduleTimedPass(app, {
    name: 'event-partitions',
    cron: EVENT_PARTITIONS_CRON,
    run: options.keepEventPartitions,
    failure: 'event partitions pass failed; the next one retries',
  });
}

export default fp(eventPartitionsPlugin, { name: 'event-partitions', fastify: '5.x', dependencies: ['db'] });
