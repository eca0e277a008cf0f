-- Customer portal sessions (docs/operating.md "Customer portal"). A row is made by POST /api/v1/portal-sessions and
-- holds the link token's SHA-256 only (the token itself is in the link the merchant sends the browser to, never here);
-- the link's first GET marks it used and starts the session, whose cookie carries a random secret stored here as its
-- SHA-256. Link and session expiry are real time (never the simulated billing clock).
CREATE TABLE "portal_sessions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "linkHash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "returnUrl" TEXT,
    "locale" TEXT NOT NULL,
    "flow" TEXT,
    "subscriptionId" UUID,
    "linkExpiresAt" TIMESTAMPTZ(3) NOT NULL,
    "usedAt" TIMESTAMPTZ(3),
    "secretHash" TEXT,
    "expiresAt" TIMESTAMPTZ(3),
    "endedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "portal_sessions_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "portal_sessions_linkHash_key" ON "portal_sessions"("linkHash");
CREATE UNIQUE INDEX "portal_sessions_secretHash_key" ON "portal_sessions"("secretHash");
CREATE INDEX "portal_sessions_linkExpiresAt_idx" ON "portal_sessions"("linkExpiresAt");
