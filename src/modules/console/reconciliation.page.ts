// Reconciliation (/console/reconciliation, docs/console.md "Operator console"; docs/reconciliation.md "Reconciling with the gateway"):
// upload a settlement file (a multipart form with its CSRF token and an idempotency key made when the page was
// rendered) through the import service of POST /admin/settlement-imports, under that route's idempotency scope and
// with the operator named; the import's summary; the period's summary (refunds outside the gateway included); the
// lines by status (the admin list's filters and keyset pages); and the whole filtered list as CSV (the admin route's
// CSV). No rule of its own.
import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { ValidationError } from '../../lib/errors.ts';
import { containsNul } from '../../lib/input.ts';
import { scopeOf } from '../idempotency/idempotency.ts';
import { sha256Of } from '../reconciliation/import-settlement.ts';
import { getImport, itemsCsv, listImports, listItems, summarizePeriod, summaryPeriod } from '../reconciliation/reconciliation.queries.ts';
import { ItemsQuery, KoreaDate } from '../reconciliation/reconciliation.schemas.ts';
import { who } from '../shared/admin-actions.ts';
import { readDb } from '../shared/read-db.ts';
import { Uuid } from '../shared/schemas.ts';
import { codeWithWord } from './code-words.ts';
import { renderPage } from './console-page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { dropBlankFields, listHref } from './list-filters.ts';

const ROUTE = '/reconciliation';
const PATH = `/console${ROUTE}`;
const PageQuery = Type.Object({ ...ItemsQuery.properties, import: Type.Optional(Uuid) }, { additionalProperties: false });
const { limit: _limit, cursor: _cursor, ...exportFilters } = ItemsQuery.properties;
const ExportQuery = Type.Object(exportFilters, { additionalProperties: false });

/** What the upload form posts; the file part arrives as {filename, bytes} (onFile below). */
const UploadBody = Type.Object(
  {
    _csrf: Type.String(),
    idempotencyKey: Type.String({ minLength: 1, maxLength: 200 }),
    from: Type.Optional(KoreaDate),
    to: Type.Optional(KoreaDate),
    file: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
interface UploadedFile {
  filename?: string;
  bytes: Buffer;
}

/**
 * The period's summary with the refunds made outside the gateway added to our side, so the totals add up:
 * - the settlement files' net (approvals − cancels) is compared with our ledger's gateway net (approvals − refunds
 *   through the gateway): refunds outside the gateway (an operator's bank transfer, record-external-refund.ts) appear
 *   in no settlement file, so they are never in either of these two;
 * - our ledger after every refund = approvals − refunds through the gateway − refunds outside it, i.e. gateway net −
 *   external refunds (count and amount: refunds + external refunds); it is what the revenue report's net counts
 *   for the same Korea dates (reports/revenue-report.ts: external refunds by the date they were recorded).
 * test/modules/console/record-pages.test.ts ("counts the refunds made outside the gateway…") checks these sums on the page.
 */
function withExternalRefunds(summary: Awaited<ReturnType<typeof summarizePeriod>>) {
  const { refunds, externalRefunds, net } = summary.ledger;
  return {
    ...summary,
    allRefunds: { count: refunds.count + externalRefunds.count, amount: refunds.amount + externalRefunds.amount },
    netAfterExternal: net - externalRefunds.amount,
  };
}

const dropBlank = async (request: FastifyRequest) => {
  dropBlankFields(request.query);
};

export function reconciliationPage(deps: ConsoleDeps) {
  const { db, clock, config } = deps.service;
  const { settlementImports, idempotency } = deps;

  return async (scope: App) => {
    /**
     * The page, with an upload's refusal (its errors by line) when there is one. `reader`: where it reads once the
     * queued refresh is written (the replica for the GET, shared/read-db.ts; the primary after a refused upload).
     */
    async function showPage(
      request: FastifyRequest,
      reply: Parameters<typeof renderPage>[1],
      query: Static<typeof PageQuery>,
      reader: () => Promise<Db>,
      refusal?: { message: string; errors: Array<{ line: number; column?: string; message: string }> },
      statusCode = 200,
    ) {
      const { import: importId, ...filters } = query;
      // One client for the whole page, asked once the refresh of listItems is written.
      let chosen: Db | undefined;
      const lines = await listItems(db, filters, async () => (chosen ??= await reader()));
      const from = chosen ?? db;
      const [selected, recent, period] = await Promise.all([
        importId ? getImport(from, importId) : undefined,
        listImports(from, { limit: 10 }),
        summaryPeriod(from, clock.now(), filters),
      ]);
      const { limit, cursor, ...kept } = filters;
      const paging = { ...(importId ? { import: importId } : {}), ...kept, ...(limit === 20 ? {} : { limit }) };
      return renderPage(
        request,
        reply,
        'reconciliation',
        {
          title: 'Reconciliation',
          filters,
          selected,
          recent: recent.items,
          summary: withExternalRefunds(await summarizePeriod(db, period, async () => from)),
          lines: lines.items,
          next: lines.nextCursor ? listHref(PATH, paging, lines.nextCursor) : undefined,
          first: cursor ? listHref(PATH, paging) : undefined,
          exportHref: listHref(`${PATH}/export`, kept),
          idempotencyKey: randomUUID(),
          maxBytes: config.settlementMaxBytes,
          refusal,
          codeWithWord,
        },
        statusCode,
      );
    }

    scope.get(ROUTE, { schema: { querystring: PageQuery }, preValidation: dropBlank }, async (request, reply) =>
      showPage(request, reply, request.query, () => readDb(request)),
    );

    scope.get(`${ROUTE}/export`, { schema: { querystring: ExportQuery }, preValidation: dropBlank }, async (request, reply) => {
      const { items } = await listItems(db, request.query, () => readDb(request));
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="reconciliation.csv"')
        .header('cache-control', 'no-store')
        .send(itemsCsv(items));
    });

    // The upload: its own scope, for the multipart parser that hands the fields (the CSRF token first of all) to the
    // body, the file as {filename, bytes}; bounded as the admin route is (SETTLEMENT_MAX_BYTES, one file).
    await scope.register(async (instance) => {
      const upload = instance as App;
      await upload.register(multipart, {
        attachFieldsToBody: 'keyValues',
        limits: { fileSize: config.settlementMaxBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 20 },
        onFile: async (part) => {
          (part as unknown as { value: UploadedFile }).value = { filename: part.filename || undefined, bytes: await part.toBuffer() };
        },
      });
      upload.post(
        `${ROUTE}/imports`,
        {
          schema: { body: UploadBody },
          preValidation: async (request) => {
            // The scope's NUL guard ran before the multipart parser filled the body: the fields are checked here.
            const { file: _file, ...fields } = (request.body ?? {}) as Record<string, unknown>;
            if (containsNul(fields)) throw new ValidationError('strings must not contain NUL characters');
            dropBlankFields(request.body);
          },
          preHandler: upload.csrfProtection,
        },
        async (request, reply) => {
          const { idempotencyKey, from, to, file } = request.body;
          const uploaded = file as UploadedFile | undefined;
          if (!uploaded?.bytes || uploaded.bytes.length === 0) throw new ValidationError('Choose a settlement file to import');
          const options = { filename: uploaded.filename, from, to };
          // What the admin route's Idempotency-Key compares: the file by its hash and the options, never the bytes.
          const payload = { query: {}, body: { sha256: sha256Of(uploaded.bytes), ...options } };
          try {
            const { outcome } = await idempotency.once(scopeOf('POST', '/admin/settlement-imports'), idempotencyKey, payload, () =>
              settlementImports.importSettlement({ bytes: uploaded.bytes, ...options }, who(request, 'settlement import')),
            );
            if (outcome.statusCode >= 400) return refused(request, reply, outcome.body);
            const created = outcome.body as { id: string; coverage: { from: string; to: string } };
            return reply.redirect(listHref(PATH, { import: created.id, from: created.coverage.from, to: created.coverage.to }), 303);
          } catch (error) {
            if ((error as { code?: string }).code !== 'SETTLEMENT_FILE_INVALID') throw error;
            return refused(request, reply, error);
          }
        },
      );

      /** A refused file: the page again, with the refusal's lines, and a new form (a new idempotency key). */
      function refused(request: FastifyRequest, reply: Parameters<typeof renderPage>[1], error: unknown) {
        const e = error as { statusCode?: number; message?: string; details?: { errors?: Array<{ line: number; column?: string; message: string }> } };
        return showPage(
          request,
          reply,
          { limit: 20 },
          async () => db,
          { message: e.message ?? 'The settlement file is refused', errors: e.details?.errors ?? [] },
          e.statusCode ?? 422,
        );
      }
    });
  };
}
