// Webhook delivery states and the moves between them, as data: the only place that spells a status a delivery's
// SQL writes (test/architecture.test.ts checks that no other UPDATE of webhook_deliveries sets "status"). A delivery
// is created PENDING (the column's default, by the events trigger, a resend or a recover); a send's outcome is written
// fenced on its claim's lease token (webhooks/claims.ts, webhooks/outcomes.ts).
//
// A re-queue (POST /events/:id/resend, POST /webhook-endpoints/:id/recover) is a later writer than any send still on
// its way, and wins over it: it clears the lease, so that send's outcome matches no row and cannot mark the
// re-queued delivery SUCCEEDED or FAILED. The delivery is due at once and is sent again, possibly while the older
// copy is still in flight (at least once: the receiver deduplicates by webhook-id).
import { Prisma as P } from '../../generated/prisma/client.ts';

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export const DELIVERY_TRANSITIONS = {
  /** A 2xx within the timeout. */
  deliver: { from: ['PENDING'], to: 'SUCCEEDED' },
  /** Anything else: PENDING again while a retry delay remains, FAILED after the last. */
  retry: { from: ['PENDING'], to: 'PENDING' },
  fail: { from: ['PENDING'], to: 'FAILED' },
  /** Sent again on request, whatever it ended as. */
  requeue: { from: ['PENDING', 'SUCCEEDED', 'FAILED'], to: 'PENDING' },
} as const satisfies Record<string, { from: readonly DeliveryStatus[]; to: DeliveryStatus }>;

export type DeliveryTransition = keyof typeof DELIVERY_TRANSITIONS;

/** The SET assignment of a move's status. */
export const setDeliveryStatus = (transition: DeliveryTransition) => P.sql`"status" = ${DELIVERY_TRANSITIONS[transition].to}::"WebhookDeliveryStatus"`;

/** The WHERE condition that a move may leave the delivery's status (`column` is the quoted column, with its alias). */
export const deliveryMayMove = (transition: DeliveryTransition, column: P.Sql) =>
  P.sql`${column}::text = ANY(${[...DELIVERY_TRANSITIONS[transition].from]}::text[])`;

/**
 * An endpoint subscribes to an event type: "*" or the type itself is among its `eventTypes` (both arguments are SQL:
 * the endpoint's types column or a text[] parameter, the event's type column or a parameter). The database's own
 * fan-out of new events (assign_event_sequences, prisma/functions/events.sql) spells
 * the same condition; test/modules/events/endpoint-subscribes.test.ts checks that the two agree.
 */
export const endpointSubscribes = (eventTypes: P.Sql, type: P.Sql) => P.sql`('*' = ANY (${eventTypes}) OR ${type} = ANY (${eventTypes}))`;

/** The ON CONFLICT ("eventId", "endpointId") DO UPDATE assignments of a re-queue: a fresh attempt budget, due now, unleased. */
export const REQUEUE_DELIVERY = P.sql`${setDeliveryStatus('requeue')}, "attempts" = 0, "nextAttemptAt" = clock_timestamp(), "deliveredAt" = NULL,
        "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()`;
