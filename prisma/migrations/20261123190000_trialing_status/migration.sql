-- Trials (issue #14, DESIGN.md §5 "Subscription lifecycle"): a status of its own. Alone in its migration: a new
-- enum value cannot be used in the transaction that adds it.
ALTER TYPE "SubscriptionStatus" ADD VALUE 'TRIALING' AFTER 'ACTIVE';
