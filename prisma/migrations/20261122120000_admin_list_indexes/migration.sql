-- Admin lists (issue 6): keyset pagination is (createdAt DESC, id DESC) under each filter, so every filter gets an
-- index ending in (createdAt, id); an equality prefix plus a backward scan serves each page without sorting.
DROP INDEX "subscriptions_userId_id_idx";
DROP INDEX "subscriptions_needsAttention_id_idx";
DROP INDEX "payments_status_id_idx";
DROP INDEX "payments_subscriptionId_id_idx";

CREATE INDEX "subscriptions_createdAt_id_idx" ON "subscriptions"("createdAt", "id");
CREATE INDEX "subscriptions_status_createdAt_id_idx" ON "subscriptions"("status", "createdAt", "id");
CREATE INDEX "subscriptions_needsAttention_createdAt_id_idx" ON "subscriptions"("needsAttention", "createdAt", "id");
CREATE INDEX "subscriptions_userId_createdAt_id_idx" ON "subscriptions"("userId", "createdAt", "id");
CREATE INDEX "subscriptions_method_createdAt_id_idx" ON "subscriptions"("method", "createdAt", "id");

CREATE INDEX "payments_createdAt_id_idx" ON "payments"("createdAt", "id");
CREATE INDEX "payments_status_createdAt_id_idx" ON "payments"("status", "createdAt", "id");
CREATE INDEX "payments_subscriptionId_createdAt_id_idx" ON "payments"("subscriptionId", "createdAt", "id");
CREATE INDEX "payments_kind_createdAt_id_idx" ON "payments"("kind", "createdAt", "id");
CREATE INDEX "payments_method_createdAt_id_idx" ON "payments"("method", "createdAt", "id");

-- SQL only: what a charging pass claims (due, chargeable, nobody waiting on it), in due order.
CREATE INDEX "subscriptions_due_claim_idx" ON "subscriptions"("nextChargeAt") WHERE "status" IN ('ACTIVE', 'PAST_DUE') AND "needsAttention" = false;
