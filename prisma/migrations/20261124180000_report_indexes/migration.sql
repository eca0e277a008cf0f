-- Indexes for the revenue reports and the reconciliation's ledger side (issues 22 and 23; measured in BENCHMARKS.md
-- §6 and §7 with 1,000,000 payments): each report reads its rows through an index that holds them, never a scan of
-- payments or payment_attempts. Partial: each holds only the rows its readers ask for.

-- Revenue (approvals by approval time), the reconciliation's MISSING approvals and its summary's ledger totals:
-- succeeded (or since refunded) payments by approvedAt, with what the revenue report sums (an index-only scan).
CREATE INDEX "payments_approved_approvedAt_idx" ON "payments"("approvedAt") INCLUDE ("method", "amount")
  WHERE "status" IN ('SUCCEEDED', 'CANCELED');

-- Revenue (refunds by the time they were sent): succeeded refunds, by the instant the report reads.
CREATE INDEX "payment_attempts_refunds_at_idx" ON "payment_attempts"((COALESCE("sentAt", "completedAt", "createdAt"))) INCLUDE ("paymentId", "amount")
  WHERE "operation" = 'CANCEL' AND "status" = 'SUCCEEDED';

-- Recovery: declined charges by completion, each with its payment.
CREATE INDEX "payment_attempts_declines_completedAt_idx" ON "payment_attempts"("completedAt") INCLUDE ("paymentId")
  WHERE "operation" = 'BILLING_CONFIRM' AND "status" = 'DECLINED';
