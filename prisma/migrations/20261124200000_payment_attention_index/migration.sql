-- The payments waiting for an operator (ledger/payment.queries.ts needsAttentionWhere: UNKNOWN, or an attention reason
-- with its status), newest first: what the console's Needs attention and GET /admin/payments?needsAttention=true read.
-- Every arm of that predicate implies this index's, so PostgreSQL reads the few rows it holds in order instead of
-- scanning every payment (395 ms at 1,000,000 payments, 0.3 ms with it; BENCHMARKS.md "Operator console").
-- Partial: Prisma's schema cannot state it (test/db/schema-drift.test.ts lists it).
CREATE INDEX "payments_attention_idx" ON "payments"("createdAt" DESC, "id" DESC) WHERE "status" = 'UNKNOWN' OR "attentionReason" IS NOT NULL;
