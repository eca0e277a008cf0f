-- Operator console sign-ins (issue #24, DESIGN.md §5 "Operator console"): server-side sessions, so the server
-- enforces CONSOLE_SESSION_TTL and sign-out (a signed cookie alone could not be taken back). The cookie carries a
-- random secret; only its SHA-256 is stored here, and never the admin token (only its fingerprint).
CREATE TABLE "console_sessions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "secretHash" TEXT NOT NULL,
    "operatorName" TEXT,
    "tokenFingerprint" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "endedAt" TIMESTAMPTZ(3),

    CONSTRAINT "console_sessions_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "console_sessions_secretHash_key" ON "console_sessions"("secretHash");
CREATE INDEX "console_sessions_expiresAt_idx" ON "console_sessions"("expiresAt");

-- The console's subscription and payment timelines read an object's events, newest first: without this index
-- that is a scan of the whole events table per page (the complaint about Kaui's 10-15 s timelines).
CREATE INDEX "events_objectId_pos_idx" ON "events"("objectId", "pos");

-- Needs attention reads the payments waiting for an operator (ledger/payment.queries.ts needsAttentionWhere: UNKNOWN,
-- or one of the attention reasons) newest first; they are a handful among millions, so a partial index keeps that
-- read from scanning the payments table. Every arm of the predicate implies this index's condition.
CREATE INDEX "payments_waiting_for_operator" ON "payments"("createdAt", "id") WHERE "status" = 'UNKNOWN' OR "attentionReason" IS NOT NULL;
