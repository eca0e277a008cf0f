-- One window transaction belongs to one checkout: a transactionId sent to another registration's or order's
-- success URL must not be exchanged or confirmed again for it (issue #12, defects 2 and 3).
CREATE UNIQUE INDEX "registrations_transactionId_key" ON "registrations"("transactionId");
CREATE UNIQUE INDEX "orders_transactionId_key" ON "orders"("transactionId");
