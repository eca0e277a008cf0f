// Every time the service writes comes from its injected clock (docs/architecture.md "Development notes"), a row's own createdAt and updatedAt
// included. A column's DEFAULT now() reads the database's clock and Prisma's @updatedAt the process's wall clock; with
// CLOCK=simulated both are left behind (a refund asked at a simulated 2027-05-12 showed today's `requestedAt`). This
// Prisma query extension stamps them from the clock on every Prisma write that does not set them itself, so every
// writer, present or future, is covered in one place. Raw SQL writers pass the clock's value themselves
// (payments/charge.prepare.ts, payments/charge.record.ts); the database's triggers date what they write from a time the
// service wrote in the same statement (the events trigger: the row's updatedAt; MRR movements: the row's changedAt).
//
// Left to the real clock, on purpose: console sessions (their TTL is real time, docs/console.md "Operator console"),
// webhook deliveries (real-time plumbing: retries, leases, and webhook-timestamp is the real time of sending), events
// (written only by the database's trigger, never by Prisma), and an external refund's createdAt: no answer shows it (a
// refund's times are its recordedAt), it only orders refunds recorded at one instant as they were recorded, which a
// frozen simulated clock would not.
import { Prisma } from '../generated/prisma/client.ts';
import type { Clock } from '../lib/clock.ts';

const REAL_TIME_MODELS = new Set<string>([Prisma.ModelName.ConsoleSession, Prisma.ModelName.WebhookDelivery, Prisma.ModelName.Event]);

interface Stamps {
  createdAt: boolean;
  updatedAt: boolean;
}

/** The models with a createdAt or updatedAt column the clock stamps, from Prisma's own list of each model's columns. */
const INSERTION_ORDER_ONLY = new Set<string>([Prisma.ModelName.ExternalRefund]);

const STAMPED: ReadonlyMap<string, Stamps> = new Map(
  Object.values(Prisma.ModelName)
    .filter((model) => !REAL_TIME_MODELS.has(model))
    .map((model) => {
      const columns = (Prisma as unknown as Record<string, Record<string, string> | undefined>)[`${model}ScalarFieldEnum`] ?? {};
      return [model, { createdAt: 'createdAt' in columns && !INSERTION_ORDER_ONLY.has(model), updatedAt: 'updatedAt' in columns }] as const;
    })
    .filter(([, stamps]) => stamps.createdAt || stamps.updatedAt),
);

type Data = Record<string, unknown>;

function stampCreate(stamps: Stamps, data: Data, now: Date): Data {
  return {
    ...(stamps.createdAt && data.createdAt === undefined ? { createdAt: now } : {}),
    ...(stamps.updatedAt && data.updatedAt === undefined ? { updatedAt: now } : {}),
    ...data,
  };
}

function stampUpdate(stamps: Stamps, data: Data, now: Date): Data {
  return stamps.updatedAt && data.updatedAt === undefined ? { ...data, updatedAt: now } : data;
}

/**
 * The clock's reading for an audit entry. The audit trail is ordered by its entries' times (newest first, in its list
 * and the console's timelines), which the database's clock kept in write order; a frozen simulated clock reads one
 * instant for every entry, so an entry written at the reading of the one before is dated 1 ms after it (still the
 * simulated time, to the millisecond the column keeps). A clock that moved, forward or back, is taken as it reads.
 * Only the audit trail: every other row's times must equal the `now` its use case decided with (a refund's requestedAt
 * beside another's recordedAt, an event's time beside a key's revokedAt).
 */
export function createOrderedClock(clock: Clock): () => Date {
  let lastReading = Number.NaN;
  let lastStamp = Number.NaN;
  return () => {
    const reading = clock.now().getTime();
    lastStamp = reading === lastReading ? lastStamp + 1 : reading;
    lastReading = reading;
    return new Date(lastStamp);
  };
}

/** The client whose writes take createdAt and updatedAt from `clock` (the same client type: only queries change). */
export function withClockStamps<C extends { $extends: (extension: never) => unknown }>(db: C, clock: Clock): C {
  const auditClock = createOrderedClock(clock);
  const stamp = <A extends { data?: unknown; create?: unknown; update?: unknown }>(model: string, args: A, kind: 'create' | 'update' | 'upsert'): A => {
    const stamps = STAMPED.get(model);
    if (!stamps) return args;
    const now = model === Prisma.ModelName.AuditEvent ? auditClock() : clock.now();
    if (kind === 'upsert') {
      return { ...args, create: stampCreate(stamps, args.create as Data, now), update: stampUpdate(stamps, args.update as Data, now) };
    }
    const one = (data: Data) => (kind === 'create' ? stampCreate(stamps, data, now) : stampUpdate(stamps, data, now));
    const data = args.data as Data | Data[] | undefined;
    if (!data) return args;
    return { ...args, data: Array.isArray(data) ? data.map(one) : one(data) };
  };
  const extension = Prisma.defineExtension({
    name: 'clock-stamps',
    query: {
      $allModels: {
        create: ({ model, args, query }) => query(stamp(model, args, 'create')),
        createMany: ({ model, args, query }) => query(stamp(model, args, 'create')),
        createManyAndReturn: ({ model, args, query }) => query(stamp(model, args, 'create')),
        update: ({ model, args, query }) => query(stamp(model, args, 'update')),
        updateMany: ({ model, args, query }) => query(stamp(model, args, 'update')),
        updateManyAndReturn: ({ model, args, query }) => query(stamp(model, args, 'update')),
        upsert: ({ model, args, query }) => query(stamp(model, args, 'upsert')),
      },
    },
  });
  return db.$extends(extension as never) as C;
}
