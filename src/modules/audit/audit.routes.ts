// GET /admin/audit (docs/operating.md "Admin routes"): the audit trail, newest first, filtered by entity and actor; a refund's entries are
// on its payment, and a settlement import's resolutions carry `actor: "settlement-import:<import id>"`.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { named, TAGS } from '../../lib/api-document.ts';
import { pageOf } from '../shared/schemas.ts';
import { AuditQuery, listAudit } from './audit.queries.ts';

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
      async (request) => listAudit(db, request.query),
    );
  };
}
