// The reconciliation admin routes (docs/reconciliation.md "Reconciling with the gateway"): import a settlement file (text/csv or multipart/form-data; its
// Idempotency-Key honoured), read Toss's settlements by API (docs/reconciliation.md "Toss settlements by API"), list and read imports, list the reconciliation items (JSON pages, or the whole filtered
// list as CSV with Accept: text/csv) and summarise a period. Mounted by app.ts under /admin, behind the admin token.
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Db } from '../../db/prisma.ts';
import { codesByStatus, defineError, ValidationError } from '../../lib/errors.ts';
import { IDEMPOTENT, IdempotencyHeader, who } from '../shared/admin-actions.ts';
import { readDb } from '../shared/read-db.ts';
import { IdParams } from '../shared/schemas.ts';
import { GatewayNotConfiguredError } from '../shared/gateway-for.ts';
import { TAGS } from '../../lib/api-document.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { SettlementFileInvalidError, sha256Of, type createSettlementImports, type SettlementUpload } from './import-settlement.ts';
import { getImport, itemsCsv, listImports, listItems, summarizePeriod, summaryPeriod } from './reconciliation.queries.ts';
import { ImportList, ImportQuery, ImportResponse, ItemList, ItemsQuery, ListQuery, SummaryQuery, SummaryResponse, SyncBody } from './reconciliation.schemas.ts';
import {
  SettlementFeedFailedError,
  SettlementFeedUnavailableError,
  SettlementRangeInvalidError,
  SYNC_MAX_DAYS,
  type SettlementSync,
} from './sync-settlements.ts';

export const SettlementTooLargeError = defineError('PAYLOAD_TOO_LARGE', 'The settlement file is over %s bytes', 413);
export const SettlementMediaTypeError = defineError('UNSUPPORTED_MEDIA_TYPE', 'Send the file as text/csv or multipart/form-data (field "file")', 415);

/** A raw text/csv body, held where the generic input checks (NUL scan, idempotency hash) do not walk its bytes. */
class CsvBody {
  readonly #bytes: Buffer;
  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }
  get bytes() {
    return this.#bytes;
  }
}

const MULTIPART_FIELDS = new Set(['mapping', 'from', 'to']);
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The file and its options, from either body; multipart fields may come in any order. */
async function readUpload(request: FastifyRequest, maxBytes: number): Promise<SettlementUpload> {
  const query = request.query as Omit<SettlementUpload, 'bytes'>;
  if (request.body instanceof CsvBody) return { ...query, bytes: request.body.bytes };
  if (!request.isMultipart()) throw new SettlementMediaTypeError();
  const upload: Partial<SettlementUpload> = { ...query };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || upload.bytes) throw new ValidationError(`unexpected file field "${part.fieldname}": send one field "file"`);
        upload.bytes = await part.toBuffer();
        upload.filename = part.filename || upload.filename;
      } else {
        if (!MULTIPART_FIELDS.has(part.fieldname)) throw new ValidationError(`unknown field "${part.fieldname}"`);
        const value = String(part.value);
        if (part.fieldname !== 'mapping' && !DATE.test(value)) throw new ValidationError(`${part.fieldname} must be YYYY-MM-DD`);
        upload[part.fieldname as 'mapping' | 'from' | 'to'] = value;
      }
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new SettlementTooLargeError(maxBytes);
    throw error;
  }
  if (!upload.bytes) throw new ValidationError('the multipart body has no field "file"');
  return upload as SettlementUpload;
}

interface ReconciliationDeps {
  db: Db;
  clock: Clock;
  imports: ReturnType<typeof createSettlementImports>;
  sync: SettlementSync;
  idempotency: Idempotency;
  maxBytes: number;
}

export function reconciliationRoutes(deps: ReconciliationDeps) {
  const { maxBytes } = deps;
  return async (app: App) => {
    const tags = [TAGS.adminReconciliation.name];
    app.addContentTypeParser('text/csv', { parseAs: 'buffer', bodyLimit: maxBytes }, (_request, body, done) => done(null, new CsvBody(body as Buffer)));
    await app.register(multipart, { limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 20 } });
    registerImportSettlement(app, deps, tags);
    registerSyncSettlements(app, deps, tags);
    registerImportReads(app, deps.db, tags);
    registerItemReads(app, deps, tags);
  };
}

/** The import's body (text/csv, or multipart/form-data with its options) as the API document describes it. */
const settlementFileBody = (maxBytes: number) => ({
  required: true,
  description: `The gateway's transaction export, at most ${maxBytes} bytes (413 beyond)`,
  content: {
    'text/csv': { schema: { type: 'string', format: 'binary', description: 'the file itself: UTF-8 (with or without BOM) or CP949' } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          file: { type: 'string', format: 'binary', description: 'the file; its name becomes the import’s filename' },
          mapping: { type: 'string', description: 'JSON {"<field>": "<header>"}' },
          from: { type: 'string', description: 'YYYY-MM-DD (Korea), the first day the file covers' },
          to: { type: 'string', description: 'YYYY-MM-DD (Korea), the last day the file covers' },
        },
      },
    },
  },
});

/** POST /settlement-imports: a settlement file, all or nothing; its Idempotency-Key compares the file's hash. */
function registerImportSettlement(app: App, { imports, idempotency, maxBytes }: ReconciliationDeps, tags: string[]) {
  app.post(
    '/settlement-imports',
    {
      schema: {
        operationId: 'importSettlement',
        summary: 'Import a gateway settlement file (text/csv body, or multipart/form-data with field "file"): all or nothing',
        tags,
        querystring: ImportQuery,
        headers: IdempotencyHeader,
        // Read by readUpload, not validated by Fastify: documented for clients (they sent no body, every one a 415).
        requestBody: settlementFileBody(maxBytes),
        response: { 200: ImportResponse, 201: ImportResponse },
        responseDescriptions: {
          200: 'This file (by its hash) was imported before: that import, unchanged',
          201: 'Imported: every line matched against the ledger (all or nothing)',
        },
        errors: codesByStatus(SettlementFileInvalidError, SettlementTooLargeError, SettlementMediaTypeError, ...IDEMPOTENT),
      },
    },
    async (request, reply) => {
      const upload = await readUpload(request, maxBytes);
      // What the Idempotency-Key compares: the file by its hash and the options, never the bytes themselves.
      (request as { body: unknown }).body = {
        sha256: sha256Of(upload.bytes),
        filename: upload.filename,
        mapping: upload.mapping,
        from: upload.from,
        to: upload.to,
      };
      return idempotency.run(request, reply, () => imports.importSettlement(upload, who(request, 'settlement import')));
    },
  );
}

/** POST /settlement-imports/toss: Toss's settlements of a range of Korea dates, read by API and imported like a file. */
function registerSyncSettlements(app: App, { sync, idempotency }: ReconciliationDeps, tags: string[]) {
  app.post(
    '/settlement-imports/toss',
    {
      schema: {
        operationId: 'syncTossSettlements',
        summary: `Read Toss's settlements of Korea dates from..to (at most ${SYNC_MAX_DAYS} days) and import them like a settlement file`,
        tags,
        headers: IdempotencyHeader,
        body: SyncBody,
        response: { 200: ImportResponse, 201: ImportResponse },
        responseDescriptions: {
          200: 'Toss answered the same lines for this range before: that import, unchanged',
          201: 'Imported: every line matched against Toss’s payments',
        },
        errors: codesByStatus(SettlementRangeInvalidError, GatewayNotConfiguredError, SettlementFeedFailedError, SettlementFeedUnavailableError, ...IDEMPOTENT),
      },
    },
    async function syncTossSettlements(request, reply) {
      return idempotency.run(request, reply, () => sync.syncSettlements('TOSS', request.body, who(request, 'settlement sync')));
    },
  );
}

/** GET /settlement-imports and /settlement-imports/:id. */
function registerImportReads(app: App, db: Db, tags: string[]) {
  app.get(
    '/settlement-imports',
    {
      schema: {
        operationId: 'listSettlementImports',
        summary: 'List settlement imports, newest first',
        tags,
        querystring: ListQuery,
        response: { 200: ImportList },
      },
    },
    async (request) => listImports(await readDb(request), request.query),
  );
  app.get(
    '/settlement-imports/:id',
    {
      schema: {
        operationId: 'getSettlementImport',
        summary: 'Get a settlement import',
        tags,
        params: IdParams,
        response: { 200: ImportResponse },
        responseDescriptions: { 200: 'The import and what its matching found' },
      },
    },
    async (request) => getImport(db, request.params.id),
  );
}

/** GET /reconciliation (JSON pages, or the whole filtered list as CSV) and /reconciliation/summary. */
function registerItemReads(app: App, { db, clock }: ReconciliationDeps, tags: string[]) {
  app.get(
    '/reconciliation',
    {
      schema: {
        operationId: 'listReconciliation',
        summary: 'Reconciliation items by Korea trade date and status (Accept: text/csv for the whole filtered list)',
        tags,
        querystring: ItemsQuery,
        response: { 200: ItemList },
        otherMedia: {
          200: {
            'text/csv': {
              schema: {
                type: 'string',
                description:
                  'Accept: text/csv: the whole filtered list (no paging), UTF-8 with BOM, a header row of the JSON field names, reasons joined by ";"',
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const reader = () => readDb(request);
      if (!request.headers.accept?.includes('text/csv')) return listItems(db, request.query, reader);
      const { items } = await listItems(db, { ...request.query, limit: undefined, cursor: undefined }, reader);
      return reply
        .type('text/csv; charset=utf-8')
        .serializer((payload: unknown) => payload as string)
        .send(itemsCsv(items) as never);
    },
  );

  app.get(
    '/reconciliation/summary',
    {
      schema: {
        operationId: 'summarizeReconciliation',
        summary: 'Statement and ledger totals of a period (Korea dates), items by status and the anomalies’ amount',
        tags,
        querystring: SummaryQuery,
        response: { 200: SummaryResponse },
      },
    },
    async (request) => summarizePeriod(db, { ...(await summaryPeriod(db, clock.now(), request.query)), gateway: request.query.gateway }, () => readDb(request)),
  );
}
