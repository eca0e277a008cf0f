// What an erasure writes (docs/operating.md "A customer asks to be forgotten"), table by table, inside its transaction
// (erase-customer.ts holds the locks). Each statement finds the customer's rows by an index: by userId (subscriptions,
// registrations, orders, billing keys, portal sessions, idempotency answers), by the ids of the customer's rows
// (attempts, consents, external refunds, events, webhook deliveries, audit entries, idempotency records of actions on
// them: their scope's resource id) or by their transactionId and
// orderId (settlement lines). None sets updatedAt nor a column the events trigger watches, so the rewrite itself
// writes no event: the erasure's only event is customer.erased. Personal JSON is rewritten by erased_json
// (prisma/functions/erasure.sql), the one rule for every stored document.
import type { Prisma } from '../../generated/prisma/client.ts';
import { DESTROYED_KEY_ID } from '../billing-keys/billing-keys.service.ts';

type Tx = Prisma.TransactionClient;

export interface Rewrite {
  erasureId: string;
  userId: string;
  pseudonym: string;
  now: Date;
  subscriptionIds: string[];
  paymentIds: string[];
  /** The customer's subscriptions, payments, registrations and orders: the objects of their events. */
  objectIds: string[];
}

/**
 * The live tables: the userId becomes the pseudonym; names, phone numbers and masked card numbers are cleared; each
 * billing key is revoked (if it was not) and its ciphertext destroyed (empty IV, tag and ciphertext under no key:
 * nothing can decrypt it, and key rotation passes it by); the portal sessions end (deleted: their link and cookie stop
 * working at once). A return URL keeps its form with the pseudonym in place of the userId.
 */
export async function rewriteLiveRows(tx: Tx, r: Rewrite): Promise<void> {
  await tx.$executeRawUnsafe(`UPDATE "subscriptions" SET "userId" = $2 WHERE "userId" = $1`, r.userId, r.pseudonym);
  await tx.$executeRawUnsafe(
    `UPDATE "registrations" SET "userId" = $2, "userName" = NULL, "userPhoneNumber" = NULL, "returnUrl" = replace("returnUrl", $1, $2)
      WHERE "userId" = $1`,
    r.userId,
    r.pseudonym,
  );
  await tx.$executeRawUnsafe(`UPDATE "orders" SET "userId" = $2, "returnUrl" = replace("returnUrl", $1, $2) WHERE "userId" = $1`, r.userId, r.pseudonym);
  await tx.$executeRawUnsafe(
    `UPDATE "billing_keys" SET "userId" = $2, "cardNumber" = NULL, "phoneNumber" = NULL, "status" = 'REVOKED', "revokedAt" = coalesce("revokedAt", $3),
            "encryptionKeyId" = $4, "keyIv" = '\\x'::bytea, "keyTag" = '\\x'::bytea, "keyCiphertext" = '\\x'::bytea
      WHERE "userId" = $1`,
    r.userId,
    r.pseudonym,
    r.now,
    DESTROYED_KEY_ID,
  );
  await tx.$executeRawUnsafe(`DELETE FROM "portal_sessions" WHERE "userId" = $1`, r.userId);
}

/**
 * The kept records: the gateway's answers, consent and refund references, settlement lines' buyer columns (under the
 * guards' one exception: billing.erasure), audit entries (their before/after, a customer's actor), events' snapshots,
 * idempotency answers and webhook deliveries' last errors. Answers how many events were rewritten.
 */
export async function rewriteKeptRecords(tx: Tx, r: Rewrite): Promise<number> {
  const run = (sql: string, ...values: unknown[]) => tx.$executeRawUnsafe(sql, r.userId, r.pseudonym, ...values);
  await tx.$executeRawUnsafe(`SELECT set_config('billing.erasure', $1, true)`, r.erasureId);
  await run(
    `UPDATE "payment_attempts" SET "rawResponse" = "erased_json"("rawResponse", $1, $2) WHERE "paymentId" = ANY ($3::uuid[]) AND "rawResponse" IS NOT NULL`,
    r.paymentIds,
  );
  await tx.$executeRawUnsafe(
    `UPDATE "consents" SET "reference" = NULL WHERE "subscriptionId" = ANY ($1::uuid[]) AND "reference" IS NOT NULL`,
    r.subscriptionIds,
  );
  await tx.$executeRawUnsafe(`UPDATE "external_refunds" SET "reference" = NULL WHERE "paymentId" = ANY ($1::uuid[]) AND "reference" IS NOT NULL`, r.paymentIds);
  await tx.$executeRawUnsafe(SETTLEMENT_LINES_SQL, r.paymentIds);
  await run(AUDIT_SQL, r.subscriptionIds, r.paymentIds);
  const events = await run(
    `UPDATE "events" SET "snapshot" = "erased_json"("snapshot", $1, $2), "previous" = "erased_json"("previous", $1, $2) WHERE "objectId" = ANY ($3::uuid[])`,
    r.objectIds,
  );
  await run(
    `UPDATE "idempotency_records" SET "responseBody" = "erased_json"("responseBody", $1, $2)
      WHERE "id" IN (
        SELECT "id" FROM "idempotency_records" WHERE coalesce("responseBody" ->> 'userId', "responseBody" -> 'window' ->> 'userId') = $1
        UNION SELECT "id" FROM "idempotency_records" WHERE split_part("scope", ' ', 3) = ANY ($3::text[]) AND split_part("scope", ' ', 3) <> '')`,
    r.objectIds,
  );
  await run(
    `UPDATE "webhook_deliveries" SET "lastError" = replace("lastError", $1, $2)
      WHERE "eventId" IN (SELECT "id" FROM "events" WHERE "objectId" = ANY ($3::uuid[])) AND strpos("lastError", $1) > 0`,
    r.objectIds,
  );
  return events;
}

/** The lines of the customer's payments and refunds, by transactionId and by orderId (each by its index), lose `extra`. */
const SETTLEMENT_LINES_SQL = `
  WITH ours AS (
    SELECT "transactionId", "orderId" FROM "payments" WHERE "id" = ANY ($1::uuid[])
    UNION SELECT "transactionId", "orderId" FROM "payment_attempts" WHERE "paymentId" = ANY ($1::uuid[])
  )
  UPDATE "settlement_lines" SET "extra" = NULL
   WHERE "extra" IS NOT NULL AND "id" IN (
     SELECT l."id" FROM "settlement_lines" l WHERE l."transactionId" IN (SELECT "transactionId" FROM ours WHERE "transactionId" IS NOT NULL)
     UNION SELECT l."id" FROM "settlement_lines" l WHERE l."orderId" IN (SELECT "orderId" FROM ours))`;

/**
 * The audit entries of the customer's subscriptions and payments, and the customer's own actions in the portal (actor
 * `customer:<userId>`): before/after without the customer, the actor and an entityId naming the pseudonym.
 */
const AUDIT_SQL = `
  UPDATE "audit_events" SET "before" = "erased_json"("before", $1, $2), "after" = "erased_json"("after", $1, $2),
         "actor" = CASE WHEN "actor" = 'customer:' || $1 THEN 'customer:' || $2 ELSE "actor" END,
         "entityId" = CASE WHEN "entityId" = $1 THEN $2 ELSE "entityId" END
   WHERE "id" IN (
     SELECT "id" FROM "audit_events" WHERE "entityType" = 'subscription' AND "entityId" = ANY ($3::text[])
     UNION SELECT "id" FROM "audit_events" WHERE "entityType" = 'payment' AND "entityId" = ANY ($4::text[])
     UNION SELECT "id" FROM "audit_events" WHERE "actor" = 'customer:' || $1)`;
