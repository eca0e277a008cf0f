// Claiming deliveries (docs/api.md "Events and webhooks"): due deliveries are taken with FOR UPDATE SKIP LOCKED and a lease, so
// replicas never send one at once. Each claim statement writes its own lease token (the process's owner name and a
// counter) into "leaseOwner", and every write of a claim's outcome is fenced on that token: a delivery claimed again
// since (after its lease expired, by this process or another) or queued again (resend, recover: REQUEUE_DELIVERY in
// events/delivery.state.ts clears the lease) is not overwritten by the outcome of the older send. A delivery and its
// event are found by their keys with the partition key (the event's createdAt: both live in its month).
import { Prisma as P } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { EVENT_COLUMNS, type EventRow } from '../events/events.render.ts';
import type { StoredSecret } from './secrets.ts';
import { leaseFreeSql } from '../ledger/lease.queries.ts';

/** A claimed delivery with what sending it needs: its endpoint, its event (one statement) and its lease token. */
export interface Claimed extends EventRow {
  deliveryId: string;
  endpointId: string;
  attempts: number;
  url: string;
  secrets: StoredSecret[];
  failingSince: Date | null;
  /** The claim's token in "leaseOwner"; outcome writes match it or change nothing. */
  lease: string;
}

/** How long a delivery's claim holds: a wait in the ready queue and one request (each at most one timeout), plus time to record the outcome. */
export const leaseMsFor = (timeoutMs: number) => 2 * timeoutMs + 5_000;

/** Which endpoints may take how many deliveries in one claim. */
export type Quota =
  /** Each endpoint at most `half` (a failing one `failing`), less what it holds here already (`busy`, by endpoint). */
  | { kind: 'shares'; half: number; failing: number; busy: Map<string, number> }
  /** Only these endpoints, proven fast and not failing, up to the whole limit. */
  | { kind: 'fast'; endpoints: string[] };

export function createClaims(db: ServiceDeps['db'], owner: string, timeoutMs: number) {
  let claims = 0;

  /** Claims up to `limit` due deliveries of enabled endpoints, in random endpoint order, within `quota`. */
  async function claim(limit: number, quota: Quota): Promise<Claimed[]> {
    const lease = `${owner}#${++claims}`;
    const leaseMs = leaseMsFor(timeoutMs);
    const perEndpoint =
      quota.kind === 'shares'
        ? P.sql`GREATEST(0, (CASE WHEN w."failingSince" IS NULL THEN ${quota.half}::int ELSE ${quota.failing}::int END)
                            - COALESCE((${JSON.stringify(Object.fromEntries(quota.busy))}::jsonb ->> w."id"::text)::int, 0))`
        : P.sql`CASE WHEN w."failingSince" IS NULL AND w."id" = ANY (${quota.endpoints}::uuid[]) THEN ${limit}::int ELSE 0 END`;
    const rows = await db.$queryRaw<Omit<Claimed, 'lease'>[]>`
      WITH picked AS (
        SELECT d."id", d."eventCreatedAt" FROM (SELECT "id", "failingSince" FROM "webhook_endpoints" WHERE "status" = 'ENABLED' ORDER BY random()) w
        CROSS JOIN LATERAL (
          SELECT d."id", d."eventCreatedAt" FROM "webhook_deliveries" d
           WHERE d."endpointId" = w."id" AND d."status" = 'PENDING' AND d."nextAttemptAt" <= clock_timestamp()
             AND ${P.raw(leaseFreeSql('d."leaseExpiresAt"', 'clock_timestamp()'))}
           ORDER BY d."nextAttemptAt"
           LIMIT ${perEndpoint}
           FOR UPDATE OF d SKIP LOCKED) d
        LIMIT ${limit}::int)
      UPDATE "webhook_deliveries" d
         SET "leaseOwner" = ${lease}, "leaseExpiresAt" = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8)
        FROM picked, "events" e, "webhook_endpoints" w
       WHERE d."id" = picked."id" AND d."eventCreatedAt" = picked."eventCreatedAt"
         AND e."id" = d."eventId" AND e."createdAt" = d."eventCreatedAt" AND w."id" = d."endpointId"
      RETURNING d."id" AS "deliveryId", d."endpointId", d."attempts", w."url", w."secrets", w."failingSince", ${EVENT_COLUMNS}`;
    return rows.map((row) => ({ ...row, lease }));
  }

  /** Gives claims back unsent, so that any process may send them at once; a claim no longer held is left alone. */
  async function release(claimed: Claimed[]): Promise<void> {
    if (claimed.length === 0) return;
    await db.$executeRaw`
      UPDATE "webhook_deliveries" d SET "leaseOwner" = NULL, "leaseExpiresAt" = NULL
        FROM unnest(${claimed.map((c) => c.deliveryId)}::uuid[], ${claimed.map((c) => c.createdAt.toISOString())}::timestamptz[], ${claimed.map((c) => c.lease)}::text[]) AS v(id, at, lease)
       WHERE d."id" = v.id AND d."eventCreatedAt" = v.at AND d."leaseOwner" = v.lease`;
  }

  return { claim, release };
}
