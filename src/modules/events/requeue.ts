// Queuing a delivery again (POST /events/:id/resend, POST /webhook-endpoints/:id/recover). A re-queue is a later
// writer than any send still on its way, and wins over it: it clears the lease, so that send's outcome, written
// fenced on its claim's lease token (webhooks/claims.ts), matches no row and cannot mark the re-queued delivery
// SUCCEEDED or FAILED. The delivery is due at once and is sent again, possibly while the older copy is still in
// flight (at least once: the receiver deduplicates by webhook-id).
import { Prisma as P } from '../../generated/prisma/client.ts';

/** The ON CONFLICT ("eventId", "endpointId") DO UPDATE assignments of a re-queue: a fresh attempt budget, due now, unleased. */
export const REQUEUE_DELIVERY = P.sql`"status" = 'PENDING', "attempts" = 0, "nextAttemptAt" = clock_timestamp(), "deliveredAt" = NULL,
        "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = clock_timestamp()`;
