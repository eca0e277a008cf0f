// "Nobody holds this lease", for every leased row (subscriptions, registrations, orders, attempts, webhook
// deliveries), named once with its Prisma and SQL forms side by side; test/modules/ledger/subscription.queries.test.ts
// checks the SQL form against the Prisma form on the migrated database.

/** A lease (of any leased row: subscription, registration, order, attempt) that nobody holds at `now`. */
export const leaseFreeWhere = (now: Date) => ({ OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lt: now } }] });
/** leaseFreeWhere in SQL: `column` is the quoted leaseExpiresAt column (with its alias), `now` a parameter. */
export const leaseFreeSql = (column: string, now: string) => `(${column} IS NULL OR ${column} < ${now})`;
