-- Erasures (docs/operating.md "A customer asks to be forgotten"): one row per customer erased. The row never holds the
-- old userId in clear: the identity the law still needs (the old userId, name and phone number) is sealed in the
-- vault columns with the billing-key envelope (src/lib/crypto.ts: key id, IV, tag, ciphertext; associated data binds
-- it to this row) until `retainUntil`, the Korea date of the customer's latest payment or refund record plus
-- RETENTION_YEARS. The daily retention pass destroys it after that date: the vault columns become NULL and
-- `identityPurgedAt` says when. `keyDeletions` records, per billing key, what the gateway said to a deletion call made
-- after commit (or that the gateway cannot delete keys).
CREATE TABLE "erasures" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "pseudonym" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "counts" JSONB NOT NULL,
    "erasedAt" TIMESTAMPTZ(3) NOT NULL,
    "retainUntil" TEXT NOT NULL,
    "identityKeyId" TEXT,
    "identityIv" BYTEA,
    "identityTag" BYTEA,
    "identityCiphertext" BYTEA,
    "identityPurgedAt" TIMESTAMPTZ(3),
    "keyDeletions" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "erasures_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "erasures_status_check" CHECK ("status" IN ('COMPLETED')),
    CONSTRAINT "erasures_retain_until_check" CHECK ("retainUntil" ~ '^\d{4}-\d{2}-\d{2}$'),
    -- The vault is whole or gone: all four columns set, or none (after the purge, or when nothing was kept).
    CONSTRAINT "erasures_vault_whole_check" CHECK (
      ("identityKeyId" IS NULL) = ("identityIv" IS NULL)
      AND ("identityIv" IS NULL) = ("identityTag" IS NULL)
      AND ("identityTag" IS NULL) = ("identityCiphertext" IS NULL)
    )
);

CREATE UNIQUE INDEX "erasures_pseudonym_key" ON "erasures"("pseudonym");
-- GET /admin/erasures lists newest first.
CREATE INDEX "erasures_erasedAt_id_idx" ON "erasures"("erasedAt", "id");
-- The retention pass finds the vaults still sealed, oldest date first.
CREATE INDEX "erasures_retainUntil_sealed_idx" ON "erasures"("retainUntil") WHERE "identityCiphertext" IS NOT NULL;
