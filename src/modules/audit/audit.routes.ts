// GET /admin/audit (docs/operating.md "Admin routes"): the audit trail, newest first, filtered by entity and actor; a refund's entries are
// on its payment, and a settlement import's resolutions carry `actor: "settlement-import:<import id>"`.
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { TAGS } from '../../lib/api-document.ts';
import { readDb } from '../shared/read-db.ts';
import { pageOf } from '../shared/schemas.ts';
import { AuditEntry, AuditQuery, listAudit } from './audit.queries.ts';

const AuditPage = pageOf('AuditPage', AuditEntry, 'A page of the audit trail, newest first');

export function auditRoutes(_deps: { db: Db }) {
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
      async (request) => listAudit(await readDb(request), request.query),
    );
  };
}
