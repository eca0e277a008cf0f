// When an erased customer's vault must be gone (docs/operating.md "A customer asks to be forgotten"), named once: the
// identity route refuses by it and the retention pass destroys by it, in the Prisma and SQL forms side by side.
//
// `retainUntil` is a Korea date and the LAST day the identity is kept, inclusive: the vault is kept "until" that date
// and through the whole of it, and is destroyed from the next Korea day on. The date is the Korea date of the
// customer's latest payment or refund record plus RETENTION_YEARS, and a period of years counted from a day ends at
// the end of the same date that many years later (its first day not counted: Articles 157 and 160 of the Civil Code
// (민법)), so keeping through `retainUntil` keeps the records' identity for the whole period Article 6 of the Act on the
// Consumer Protection in Electronic Commerce (전자상거래법) requires, and not a day longer (Article 21 of the Personal
// Information Protection Act (개인정보보호법): destroy without delay once the purpose has ended).
//
// The day is by the service's clock (the simulated one in tests and scenarios), never by the real time.
import { Prisma } from '../../generated/prisma/client.ts';
import { calendarDate, KOREA_ZONE } from '../../lib/calendar.ts';

/** Today's Korea date at `now`, YYYY-MM-DD: what `retainUntil` is compared with. */
export function koreaToday(now: Date): string {
  return calendarDate(now, KOREA_ZONE);
}

/** True once the retention of a vault kept until `retainUntil` (inclusive) is over at `now`. */
export function isRetentionOver(retainUntil: string, now: Date): boolean {
  // YYYY-MM-DD strings (a CHECK holds the form) order as the dates they name.
  return retainUntil < koreaToday(now);
}

/** The same predicate as a Prisma where: a vault still sealed whose retention is over at `now`. */
export function retentionOverWhere(now: Date) {
  return { retainUntil: { lt: koreaToday(now) }, identityCiphertext: { not: null } } satisfies Prisma.ErasureWhereInput;
}

/** The same predicate in SQL over "erasures" aliased `e` (the partial index erasures_retainUntil_sealed_idx serves it). */
export function retentionOverSql(now: Date): Prisma.Sql {
  return Prisma.sql`e."identityCiphertext" IS NOT NULL AND e."retainUntil" < ${koreaToday(now)}`;
}
