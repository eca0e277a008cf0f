// Reading the audit trail (docs/operating.md "Admin routes"; docs/console.md "Operator console"): newest first,
// filtered by entity and actor, in keyset pages on (createdAt, id). GET /admin/audit and the console's Audit page
// both read through here, so the two show the same entries in the same order with the same filters.
import { Type, type Static } from 'typebox';
import type { Db } from '../../db/prisma.ts';
import { named } from '../../lib/api-document.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { Cursor, Limit, StringEnum } from '../shared/schemas.ts';

/** The entity types an audit entry names (audit.ts writes them; the filter takes exactly these). */
export const ENTITY_TYPES = ['payment', 'subscription', 'registration', 'order', 'webhook_endpoint', 'settlement_import', 'scheduler', 'clock'];

/** The filters of a page of the trail, as GET /admin/audit takes them. */
export const AuditQuery = Type.Object(
  {
    entityType: Type.Optional(StringEnum(ENTITY_TYPES)),
    entityId: Type.Optional(Type.String({ maxLength: 200 })),
    actor: Type.Optional(Type.String({ maxLength: 200 })),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

/** An entry as the API shows it (GET /admin/audit's AuditEntry). Audit entries hold no secret (audit.ts): before/after are shapes the API shows too. */
export const AuditEntry = named(
  'AuditEntry',
  Type.Object(
    {
      id: Type.String(),
      at: Type.String({ format: 'date-time' }),
      actor: Type.String(),
      action: Type.String(),
      entityType: Type.String(),
      entityId: Type.String(),
      reason: Type.Optional(Type.String()),
      before: Type.Optional(Type.Unknown()),
      after: Type.Optional(Type.Unknown()),
    },
    { description: 'Who did what to which entity, when and why, with the entity before and after' },
  ),
);
export type AuditEntryShape = Static<typeof AuditEntry>;

/** One page of the trail, newest first, and the cursor of the next page (null on the last). */
export async function listAudit(db: Db, query: AuditQuery): Promise<{ items: AuditEntryShape[]; nextCursor: string | null }> {
  const { entityType, entityId, actor, limit, cursor } = query;
  const rows = await db.auditEvent.findMany({
    where: { entityType, entityId, actor, ...afterCursor(decodeCursor(cursor)) },
    orderBy: PAGE_ORDER,
    take: limit + 1,
  });
  const page = toPage(rows, limit);
  return {
    items: page.items.map((row) => ({
      id: row.id,
      at: row.createdAt.toISOString(),
      actor: row.actor,
      action: row.action,
      entityType: row.entityType,
      entityId: row.entityId,
      reason: row.reason ?? undefined,
      before: row.before ?? undefined,
      after: row.after ?? undefined,
    })),
    nextCursor: page.nextCursor,
  };
}
