// The Audit page (/console/audit, docs/console.md "Operator console"): the audit trail newest first with the filters
// of GET /admin/audit (entity type, entity id, actor) and its keyset pages, read through the same query
// (audit/audit.queries.ts listAudit). Each entry: its time in Korea time, the actor (an operator `admin:<name>`; a
// customer `customer:<userId>`, linked to their subscriptions; an import `settlement-import:<id>`, linked to its
// reconciliation page), the action in words, the entity linked to its console page, the reason, and what changed
// between before and after, field by field. Audit entries hold no secret (audit.ts writes the shapes the API shows;
// test/modules/checkout/no-secrets.test.ts reads this page too), and the page shows nothing the admin route does not.
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import { type AuditEntryShape, AuditQuery, ENTITY_TYPES, listAudit } from '../audit/audit.queries.ts';
import { ko } from '../i18n/catalog.ko.ts';
import { lookup } from '../i18n/messages.ts';
import { renderPage } from './console-page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { dropBlankFields, listHref } from './list-filters.ts';
import { readDb } from '../shared/read-db.ts';

const PATH = '/console/audit';
const SETTLEMENT_ACTOR = /^settlement-import:([0-9a-f-]{36})$/;
const CUSTOMER_ACTOR = /^customer:(.+)$/;

/** Where an actor links: an import to its reconciliation page, a customer to their subscriptions; an operator nowhere. */
function actorHref(actor: string): string | undefined {
  const importId = SETTLEMENT_ACTOR.exec(actor)?.[1];
  if (importId) return `/console/reconciliation?import=${importId}`;
  const userId = CUSTOMER_ACTOR.exec(actor)?.[1];
  return userId ? listHref('/console/subscriptions', { userId }) : undefined;
}

/** A form's blank fields filter nothing: dropped before the query is validated. */
const dropBlank = async (request: FastifyRequest) => {
  dropBlankFields(request.query);
};

/**
 * A value of before or after as the page writes it: an amount of won (the shapes' amount fields) by the page's money
 * formatter, an instant in Korea time, anything else as text (JSON for what is not a string); absent is empty.
 */
export type Shown = { kind: 'money'; value: number } | { kind: 'instant'; value: string } | { kind: 'text'; value: string };

/** One changed field: its value before and after. */
export interface Change {
  field: string;
  before: Shown;
  after: Shown;
}

/** The API shapes' fields that hold won (payments, subscriptions, refunds). */
const MONEY_FIELDS = new Set(['amount', 'canceledAmount', 'pendingAmount', 'lastAmount', 'remaining']);
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function shown(field: string, value: unknown): Shown {
  if (typeof value === 'number' && MONEY_FIELDS.has(field)) return { kind: 'money', value };
  if (typeof value === 'string' && INSTANT.test(value)) return { kind: 'instant', value };
  return { kind: 'text', value: value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value) };
}
const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields that differ between before and after (both objects), in their order; a value that is no object is one row. */
export function changesOf(before: unknown, after: unknown): Change[] {
  if (before === undefined && after === undefined) return [];
  if (!isRecord(before) && !isRecord(after)) return [{ field: '', before: shown('', before), after: shown('', after) }];
  const b = isRecord(before) ? before : {};
  const a = isRecord(after) ? after : {};
  const fields = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return fields.filter((field) => !same(b[field], a[field])).map((field) => ({ field, before: shown(field, b[field]), after: shown(field, a[field]) }));
}

/** The console page of an audit entry's entity, where it has one. */
function entityHref(entry: Pick<AuditEntryShape, 'entityType' | 'entityId'>): string | undefined {
  if (entry.entityType === 'subscription') return `/console/subscriptions/${entry.entityId}`;
  if (entry.entityType === 'payment') return `/console/payments/${entry.entityId}`;
  if (entry.entityType === 'settlement_import') return `/console/reconciliation?import=${entry.entityId}`;
  if (entry.entityType === 'erasure') return `/console/erasures/${entry.entityId}`;
  return undefined;
}

/** The catalog key of an action in words (console.records.auditAction.<entity>.<verb>), or undefined for one it does not know. */
export function actionKey(action: string): string | undefined {
  const key = `console.records.auditAction.${action}`;
  return /^[a-z_]+\.[a-z_]+$/.test(action) && lookup(ko, key) !== undefined ? key : undefined;
}

export function auditPage(_deps: ConsoleDeps) {
  return async (scope: App) => {
    scope.get('/audit', { schema: { querystring: AuditQuery }, preValidation: dropBlank }, async (request, reply) => {
      const page = await listAudit(await readDb(request), request.query);
      const { limit, cursor, ...filters } = request.query;
      const paging = limit === 20 ? filters : { ...filters, limit };
      return renderPage(request, reply, 'audit', {
        title: 'Audit',
        filters: request.query,
        entityTypes: ENTITY_TYPES,
        entries: page.items.map((entry) => ({
          ...entry,
          actionKey: actionKey(entry.action),
          href: entityHref(entry),
          actorHref: actorHref(entry.actor),
          changes: changesOf(entry.before, entry.after),
        })),
        next: page.nextCursor ? listHref(PATH, paging, page.nextCursor) : undefined,
        first: cursor ? listHref(PATH, paging) : undefined,
      });
    });
  };
}
