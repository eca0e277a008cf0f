// The retention pass (docs/operating.md "A customer asks to be forgotten"): destroys every erasure vault whose
// retention is over (vault-retention.ts: `retainUntil` is before today's Korea date): the four vault columns become
// NULL and `identityPurgedAt` the service clock's now, with one audit entry `erasure.identity_purged` per erasure in
// the same transaction (no destruction without its entry, no entry without its destruction).
//
// Run by the retention plugin (src/plugins/retention.ts) on every replica, and by POST /admin/retention/run. Safe with
// several at once: each batch claims its rows with FOR UPDATE SKIP LOCKED, and the UPDATE is fenced on the vault still
// being sealed, so every vault is destroyed, and audited, exactly once; a row another pass holds is skipped, and the
// other pass destroys it (or, if it fails, the next pass does). Idempotent: a destroyed vault no longer matches.
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';
import { writeAudit } from '../audit/audit.ts';
import { retentionOverSql } from './vault-retention.ts';

export const IDENTITY_PURGED = 'erasure.identity_purged';
/** The actor of the entries the scheduled pass writes (an operator's run writes its own name). */
export const RETENTION_ACTOR = 'retention-pass';

const BATCH = 200;

export interface RetentionDeps {
  db: Db;
  clock: Clock;
  log: Pick<Logger, 'info'>;
  /** Counts destroyed vaults (the metric billing_erasure_identities_purged_total). */
  observer?: { identitiesPurged(count: number): void };
}

export type PurgeIdentities = (by?: { actor: string; reason?: string; requestId?: string }) => Promise<{ purged: number }>;

export function createIdentityRetention(deps: RetentionDeps): PurgeIdentities {
  const { db, clock, log } = deps;

  /** One batch in one transaction: claims, destroys and audits up to BATCH vaults; returns how many. */
  async function purgeBatch(by: { actor: string; reason?: string; requestId?: string }, now: Date): Promise<number> {
    return db.$transaction(async (tx) => {
      const purged = await tx.$queryRaw<Array<{ id: string; pseudonym: string; retainUntil: string }>>`
        WITH due AS (
          SELECT e."id" FROM "erasures" e WHERE ${retentionOverSql(now)}
           ORDER BY e."retainUntil", e."id" LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
        UPDATE "erasures" e
           SET "identityKeyId" = NULL, "identityIv" = NULL, "identityTag" = NULL, "identityCiphertext" = NULL,
               "identityPurgedAt" = ${now}, "updatedAt" = ${now}
          FROM due
         WHERE e."id" = due."id" AND e."identityCiphertext" IS NOT NULL
        RETURNING e."id", e."pseudonym", e."retainUntil"`;
      for (const row of purged) {
        await writeAudit(tx, {
          actor: by.actor,
          action: IDENTITY_PURGED,
          entityType: 'erasure',
          entityId: row.id,
          reason: `retention ended after ${row.retainUntil}${by.reason ? `; run by hand: ${by.reason}` : ''}`,
          requestId: by.requestId,
          after: { pseudonym: row.pseudonym, retainUntil: row.retainUntil, identityPurgedAt: now.toISOString() },
        });
      }
      return purged.length;
    });
  }

  return async function purgeExpiredIdentities(by = { actor: RETENTION_ACTOR }) {
    // One instant for the whole pass: every vault it destroys is dated alike, and the day does not turn mid-pass.
    const now = clock.now();
    let purged = 0;
    for (;;) {
      const count = await purgeBatch(by, now);
      purged += count;
      if (count < BATCH) break;
    }
    if (purged > 0) {
      deps.observer?.identitiesPurged(purged);
      log.info({ purged }, 'erasure vaults past their retention destroyed');
    }
    return { purged };
  };
}
