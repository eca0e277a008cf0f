-- GET /admin/payments?userId= lists a customer's one-time order payments too (issue 30): their orders by userId.
CREATE INDEX "orders_userId_idx" ON "orders"("userId");
