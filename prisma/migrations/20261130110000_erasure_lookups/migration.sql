-- An erasure finds every row of one customer by index (docs/operating.md "A customer asks to be forgotten"): the
-- erasure of a customer with years of history among a million payments reads a few hundred rows, never a table.
-- subscriptions ("userId", "createdAt", "id") and orders ("userId") had theirs; payments (by subscriptionId, oneTimeOrderId,
-- and a registration's INITIAL payment), attempts, events, audit entries and settlement lines are reached through the
-- ids of the customer's rows, by their existing indexes. Nothing is added to the charging path's tables.

-- The customer's registrations, billing keys and portal sessions.
CREATE INDEX "registrations_userId_idx" ON "registrations"("userId");
CREATE INDEX "billing_keys_userId_idx" ON "billing_keys"("userId");
CREATE INDEX "portal_sessions_userId_idx" ON "portal_sessions"("userId");

-- The idempotency records whose stored answer names a customer: a subscription's (top-level userId) or a
-- registration's or order's (its window's userId). Partial: most answers (payments, sessions) name none.
CREATE INDEX "idempotency_records_userId_idx" ON "idempotency_records"
  ((coalesce("responseBody" ->> 'userId', "responseBody" -> 'window' ->> 'userId')))
  WHERE coalesce("responseBody" ->> 'userId', "responseBody" -> 'window' ->> 'userId') IS NOT NULL;

-- The idempotency records of an action on one of the customer's objects: the scope's third part is the resource id
-- (`POST /admin/payments/:id/refunds/external <id>`, idempotency.ts scopeOf), and the answer may carry what the
-- customer gave (a consent's or a refund's reference) without naming the customer.
CREATE INDEX "idempotency_records_resource_idx" ON "idempotency_records" ((split_part("scope", ' ', 3)))
  WHERE split_part("scope", ' ', 3) <> '';
