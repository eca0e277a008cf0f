// The Erasures pages (docs/operating.md "A customer asks to be forgotten"): /console/erasures lists the erasures newest
// first in keyset pages, /console/erasures/:id shows one with its audit entries (the erasure, each reading of the
// sealed identity with its reason, its destruction). Neither shows the identity: the pseudonym, when, by whom and why,
// what was erased, and until when the identity is kept (or when it was destroyed).
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { listAudit } from '../audit/audit.queries.ts';
import { Cursor, IdParams } from '../shared/schemas.ts';
import { actionKey } from './audit.page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { renderPage, speechOf } from './console-page.ts';
import { listHref } from './list-filters.ts';

const PATH = '/console/erasures';
const ROWS = 20;
const ErasuresQuery = Type.Object({ cursor: Type.Optional(Cursor) }, { additionalProperties: false });

/** The counts an erasure recorded, each a number (0 when absent), for the catalog's sentence of them. */
const COUNTED = ['subscriptions', 'payments', 'orders', 'registrations', 'billingKeys'] as const;
function countsOf(counts: unknown): Record<(typeof COUNTED)[number], number> {
  const recorded = counts !== null && typeof counts === 'object' ? (counts as Record<string, unknown>) : {};
  return Object.fromEntries(COUNTED.map((name) => [name, typeof recorded[name] === 'number' ? recorded[name] : 0])) as Record<(typeof COUNTED)[number], number>;
}

const ERASURE_ROW = {
  id: true,
  pseudonym: true,
  reason: true,
  actor: true,
  counts: true,
  erasedAt: true,
  retainUntil: true,
  identityPurgedAt: true,
  createdAt: true,
} as const;

export function erasuresPage(deps: ConsoleDeps) {
  const { db } = deps.service;
  return async (scope: App) => {
    scope.get('/erasures', { schema: { querystring: ErasuresQuery } }, async function listErasures(request, reply) {
      const { cursor } = request.query;
      const rows = await db.erasure.findMany({ where: afterCursor(decodeCursor(cursor)), orderBy: PAGE_ORDER, take: ROWS + 1, select: ERASURE_ROW });
      const page = toPage(rows, ROWS);
      return renderPage(request, reply, 'erasures', {
        title: speechOf(request).t('console.customers.erasures.heading'),
        erasures: page.items.map((row) => ({ ...row, counts: countsOf(row.counts) })),
        next: page.nextCursor ? listHref(PATH, {}, page.nextCursor) : undefined,
        first: cursor ? PATH : undefined,
      });
    });

    scope.get('/erasures/:id', { schema: { params: IdParams } }, async function showErasure(request, reply) {
      const { id } = request.params;
      const [erasure, audit] = await Promise.all([
        db.erasure.findUnique({ where: { id }, select: ERASURE_ROW }),
        listAudit(db, { entityType: 'erasure', entityId: id, limit: 100 }),
      ]);
      if (!erasure) throw new NotFoundError('Erasure');
      return renderPage(request, reply, 'erasure', {
        title: speechOf(request).t('console.customers.erasure.title', { pseudonym: erasure.pseudonym }),
        erasure: { ...erasure, counts: countsOf(erasure.counts) },
        audit: audit.items.map((entry) => ({ ...entry, actionKey: actionKey(entry.action) })),
        customerHref: listHref('/console/customers', { userId: erasure.pseudonym }),
      });
    });
  };
}
