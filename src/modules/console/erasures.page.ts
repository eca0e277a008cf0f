// The Erasures pages (docs/operating.md "A customer asks to be forgotten"): /console/erasures lists the erasures newest
// first in keyset pages and /console/erasures/:id shows one with its audit entries (the erasure, each reading of the
// sealed identity with its reason, its destruction), read through GET /admin/erasures[/:id]'s own queries
// (erasure/erasure-reads.ts listErasures, getErasure) with its filters. Neither shows the identity: the pseudonym, when,
// by whom and why, what was erased, and until when the identity is kept (or when it was destroyed).
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import { listAudit } from '../audit/audit.queries.ts';
import { type ErasureShape, ErasureQuery, getErasure, listErasures } from '../erasure/erasure-reads.ts';
import { IdParams } from '../shared/schemas.ts';
import { actionKey } from './audit.page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { renderPage, speechOf } from './console-page.ts';
import { dropBlankFields, listHref } from './list-filters.ts';
import { readDb } from '../shared/read-db.ts';

const PATH = '/console/erasures';

/** A form's blank fields filter nothing: dropped before the query is validated. */
const dropBlank = async (request: FastifyRequest) => {
  dropBlankFields(request.query);
};

/** The counts an erasure recorded, each a number (0 when absent), for the catalog's sentence of them. */
const COUNTED = ['subscriptions', 'payments', 'orders', 'registrations', 'billingKeys'] as const;
const countsOf = (counts: ErasureShape['counts']) =>
  Object.fromEntries(COUNTED.map((name) => [name, typeof counts[name] === 'number' ? counts[name] : 0])) as Record<(typeof COUNTED)[number], number>;

/** An erasure as the pages show it: its counts for the sentence, and the state of its sealed identity. */
const shown = (erasure: ErasureShape) => ({
  ...erasure,
  counts: countsOf(erasure.counts),
  identity: erasure.identityPurgedAt ? ('purged' as const) : erasure.identitySealed ? ('sealed' as const) : ('none' as const),
});

export function erasuresPage(_deps: ConsoleDeps) {
  return async (scope: App) => {
    scope.get('/erasures', { schema: { querystring: ErasureQuery }, preValidation: dropBlank }, async function listErasuresPage(request, reply) {
      const page = await listErasures(await readDb(request), request.query);
      const { limit, cursor, ...filters } = request.query;
      const paging = limit === 20 ? filters : { ...filters, limit };
      return renderPage(request, reply, 'erasures', {
        title: speechOf(request).t('console.customers.erasures.heading'),
        filters: request.query,
        erasures: page.items.map(shown),
        next: page.nextCursor ? listHref(PATH, paging, page.nextCursor) : undefined,
        first: cursor ? listHref(PATH, paging) : undefined,
      });
    });

    scope.get('/erasures/:id', { schema: { params: IdParams } }, async function showErasure(request, reply) {
      const { id } = request.params;
      const db = await readDb(request);
      const [erasure, audit] = await Promise.all([getErasure(db, id), listAudit(db, { entityType: 'erasure', entityId: id, limit: 100 })]);
      return renderPage(request, reply, 'erasure', {
        title: speechOf(request).t('console.customers.erasure.title', { pseudonym: erasure.pseudonym }),
        erasure: shown(erasure),
        audit: audit.items.map((entry) => ({ ...entry, actionKey: actionKey(entry.action) })),
        customerHref: listHref('/console/customers', { userId: erasure.pseudonym }),
      });
    });
  };
}
