// Reading erasures (docs/operating.md "A customer asks to be forgotten"): GET /admin/erasures lists them newest first
// (by erasedAt, in keyset pages), GET /admin/erasures/:id shows one. Neither ever shows the identity: the vault
// columns are not even selected, and whether the vault is still there is told by `identityPurgedAt` and
// `identitySealed` only. Revealing it is reveal-identity.ts, audited.
import { Type, type Static } from 'typebox';
import type { Db } from '../../db/prisma.ts';
import { named } from '../../lib/api-document.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursorOn, decodeCursor, toPage } from '../../lib/pagination.ts';
import { Cursor, Limit, Nullable } from '../shared/schemas.ts';

export const ErasureCounts = Type.Object(
  {
    subscriptions: Type.Integer(),
    payments: Type.Integer(),
    registrations: Type.Integer(),
    orders: Type.Integer(),
    billingKeys: Type.Integer(),
    events: Type.Integer(),
  },
  { additionalProperties: true, description: 'How many rows of each kind the erasure rewrote under the pseudonym' },
);

export const Erasure = named(
  'Erasure',
  Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      pseudonym: Type.String({ description: 'erased_ + 20 base32 characters: what the kept records carry instead of the userId' }),
      status: Type.String({ description: 'COMPLETED' }),
      reason: Type.String(),
      actor: Type.String({ description: 'the operator who erased the customer' }),
      erasedAt: Type.String({ format: 'date-time' }),
      retainUntil: Type.String({ description: 'Korea date (YYYY-MM-DD): the last day the sealed identity is kept; destroyed from the next day on' }),
      counts: ErasureCounts,
      keyDeletions: Type.Unknown({
        description: 'per billing key, what the gateway said to its deletion (or that it cannot delete keys), as the erasure recorded it',
      }),
      identitySealed: Type.Boolean({ description: 'the vault still holds the identity (GET /admin/erasures/{id}/identity reveals it)' }),
      identityPurgedAt: Nullable(Type.String({ format: 'date-time', description: 'when the retention pass destroyed the identity' })),
    },
    { description: 'A customer’s erasure. Never the identity: only GET /admin/erasures/{id}/identity reveals it, audited.' },
  ),
);
export type ErasureShape = Static<typeof Erasure>;

export const ErasureQuery = Type.Object(
  {
    pseudonym: Type.Optional(Type.String({ maxLength: 100 })),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ErasureQuery = Static<typeof ErasureQuery>;

/** What is read of a row: everything but the vault itself. */
const SHOWN = {
  id: true,
  pseudonym: true,
  status: true,
  reason: true,
  actor: true,
  erasedAt: true,
  retainUntil: true,
  counts: true,
  keyDeletions: true,
  identityKeyId: true,
  identityPurgedAt: true,
} as const;

type ShownRow = {
  id: string;
  pseudonym: string;
  status: string;
  reason: string;
  actor: string;
  erasedAt: Date;
  retainUntil: string;
  counts: unknown;
  keyDeletions: unknown;
  identityKeyId: string | null;
  identityPurgedAt: Date | null;
};

function toErasure(row: ShownRow): ErasureShape {
  return {
    id: row.id,
    pseudonym: row.pseudonym,
    status: row.status,
    reason: row.reason,
    actor: row.actor,
    erasedAt: row.erasedAt.toISOString(),
    retainUntil: row.retainUntil,
    counts: row.counts as ErasureShape['counts'],
    keyDeletions: row.keyDeletions,
    // The vault's columns are whole or NULL together (a CHECK): its key id says which.
    identitySealed: row.identityKeyId !== null,
    identityPurgedAt: row.identityPurgedAt?.toISOString() ?? null,
  };
}

/** One page of erasures, newest first by (erasedAt, id): the index erasures_erasedAt_id_idx. */
export async function listErasures(db: Db, query: ErasureQuery): Promise<{ items: ErasureShape[]; nextCursor: string | null }> {
  const { pseudonym, limit, cursor } = query;
  const rows = await db.erasure.findMany({
    where: { pseudonym, ...afterCursorOn('erasedAt', decodeCursor(cursor)) },
    orderBy: [{ erasedAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    select: SHOWN,
  });
  const page = toPage(
    rows.map((row) => ({ ...row, createdAt: row.erasedAt })),
    limit,
  );
  return { items: page.items.map(toErasure), nextCursor: page.nextCursor };
}

export async function getErasure(db: Db, id: string): Promise<ErasureShape> {
  const row = await db.erasure.findUnique({ where: { id }, select: SHOWN });
  if (!row) throw new NotFoundError('Erasure');
  return toErasure(row);
}
