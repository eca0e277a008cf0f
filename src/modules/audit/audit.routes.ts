// GET /admin/audit (docs/operating.md "Admin routes"): the audit trail, newest first, filtered by entity and actor; a refund's entries are
// on its payment, and a settlement import's resolutions carry `actor: "settlement-import:<import id>"`.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { named, TAGS } from '../../lib/api-document.ts';
import { Cursor, Limit, StringEnum, pageOf } from '../shared/schemas.ts';

const ENTITY_TYPES = ['payment', 'subscription', 'registration', 'order', 'webhook_endpoint', 'settlement_import', 'scheduler', 'clock'];

const AuditQuery = Type.Object(
  {
    entityType: Type.Optional(StringEnum(ENTITY_TYPES)),
    entityId: Type.Optional(Type.String({ maxLength: 200 })),
    actor: Type.Optional(Type.String({ maxLength: 200 })),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

const AuditEntry = named(
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
const AuditPage = pageOf('AuditPage', AuditEntry, 'A page of the audit trail, newest first');

export function auditRoutes(deps: { db: Db }) {
  const { db } = deps;
  return async (app: App) => {
    app.get(
      '/audit',
      {
        schema: {
          operationId: 'listAudit',
          summary: 'The audit trail, newest first (filters: entityType, entityId, actor)',
          tags: [TAGS.adminAudit.name],
          querystring: AuditQuery,
          response: { 200: AuditPage },
        },
      },
      async (request) => {
        const { entityType, entityId, actor, limit, cursor } = request.query;
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
      },
    );
  };
}
