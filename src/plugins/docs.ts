// OpenAPI 3 from the route schemas (@fastify/swagger), served at GET /docs (UI) and GET /docs/json. Registered
// before any route so every route is seen. Each route's schema names its operation (`operationId`, `summary`,
// `tags`) and the coded errors of its own (`errors`); the rules every route shares are added here, once:
// - the auth scheme follows from the prefix: /api/v1 takes an API key, /admin an admin token, the rest none;
// - every error response has the one error shape (components.schemas.Error) and lists the codes it can carry:
//   400 VALIDATION_ERROR where anything is validated, 401 UNAUTHORIZED behind a token, 404 NOT_FOUND on an :id,
//   415 UNSUPPORTED_MEDIA_TYPE on JSON bodies of the API, 429 RATE_LIMITED where rate limits apply;
// - a body that the route's schema marks optional (TypeBox Optional) is not a required requestBody;
// - a string limited in bytes of UTF-8 (`x-max-utf8-bytes`, the gateway's unit) is shown as a union of character
//   limits that every value within is accepted, see `documentUtf8Limits`;
// - a route that reads its body itself documents it (`requestBody`), and query parameters its handler cannot go
//   without but refuses itself, with a code of its own, are documented required (`requiredQuery`);
// - the shapes the modules name (`named`, src/lib/api-document.ts) are written once in components.schemas and
//   referred to by `$ref`; the route schemas themselves are left as they are, so validation and answers do not change;
// - each success answer is described (`responseDescriptions`, else the named shape's description), with the
//   rate-limit headers where limits apply and Idempotent-Replayed where an Idempotency-Key is taken; 429 carries
//   Retry-After; another media type a route answers with Accept (text/csv) is listed beside JSON (`otherMedia`);
// - the groups (tags) are the document's own, in a merchant's order (src/lib/api-document.ts), and the paths follow
//   them; the events a merchant receives are the document's `webhooks` (OpenAPI 3.1), from app.ts.
// The development sandbox is not part of the service's contract and is left out.
// The UI's pages (/docs and its assets) carry a Content-Security-Policy of their own, DOCS_CSP below.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { IsOptional, type TSchema } from 'typebox';
import { MAX_UTF8_BYTES } from '../lib/input.ts';
import { nameOf, TAG_GROUPS, TAGS } from '../lib/api-document.ts';
import { IDEMPOTENCY_KEY_HEADER } from '../lib/errors.ts';
import { SANDBOX_PREFIX } from './gateway.ts';
import { ErrorBodySchema } from './error-handler.ts';

declare module 'fastify' {
  interface FastifySchema {
    /** Coded errors this route answers with besides the shared ones (see above), by HTTP status. Documentation only. */
    errors?: Record<number, readonly string[]>;
    /** An OpenAPI requestBody, for a route that reads its body itself (no `body` for Fastify to validate). Documentation only. */
    requestBody?: Record<string, unknown>;
    /** Query parameters the handler refuses to go without, with a code of its own (not a 400 VALIDATION_ERROR). Documentation only. */
    requiredQuery?: readonly string[];
    /** What each success answer is, in words, by HTTP status. Documentation only. */
    responseDescriptions?: Record<number, string>;
    /** Media types a success answer also comes in (asked with Accept), besides JSON, by HTTP status. Documentation only. */
    otherMedia?: Record<number, Record<string, { schema: Record<string, unknown>; example?: unknown }>>;
  }
}

/** One event type as the document's `webhooks` show it: what the service POSTs to a merchant's endpoint. */
export interface WebhookDoc {
  type: string;
  summary: string;
  description: string;
  /** The event as sent (its `type` and `data.object` of this type's shape). */
  payload: TSchema;
  example: unknown;
}

export interface DocsOptions {
  webhooks?: readonly WebhookDoc[];
}

type Errors = Record<number, Set<string>>;

const OPTIONAL_BODY = 'x-optional-body';
const REQUEST_BODY = 'x-request-body';
const SCHEMAS = '#/components/schemas/';

/**
 * How the document states a limit in bytes of UTF-8. JSON Schema counts characters, and "at most N bytes" cannot be
 * written as a schema of practical size, so the document gives the limit itself (`x-max-utf8-bytes`, the description)
 * and, for client generators and fuzzers, a union of character limits that is safe whatever the text: up to N ASCII
 * characters (1 byte each), up to ⌊N/3⌋ characters of the Basic Multilingual Plane (Hangul, 3 bytes each; no
 * character outside it, 4 bytes), or up to ⌊N/4⌋ of anything. Every value the schema admits is accepted, and one
 * character past each branch's limit (of that branch's kind) is over N bytes, so refused. A text that mixes ASCII
 * and Hangul beyond ⌊N/3⌋ characters may still fit: the byte limit decides, as the description says.
 * (maxLength = N alone would let a generator send 100 Hangul syllables, 300 bytes; ⌊N/4⌋ alone would forbid a
 * 26-letter English name that fits.)
 */
function withUtf8Limits(source: Record<string, unknown>): Record<string, unknown> {
  const maxBytes = source[MAX_UTF8_BYTES];
  if (typeof maxBytes !== 'number') return source;
  const { maxLength: _characters, ...rest } = source;
  return {
    ...rest,
    // Each branch says `type` too, so that a client generator reads the union as a string (not as unknown).
    anyOf: [
      { type: 'string', maxLength: maxBytes, pattern: '^[\\u0000-\\u007F]*$' },
      { type: 'string', maxLength: Math.floor(maxBytes / 3), pattern: '^[\\u0000-\\uD7FF\\uE000-\\uFFFF]*$' },
      { type: 'string', maxLength: Math.floor(maxBytes / 4) },
    ],
  };
}

/** The named shapes met while the document is written: name → its schema as the document writes it. */
class Components {
  readonly schemas = new Map<string, unknown>();

  /** A route's (or a webhook's) schema as the document writes it: byte limits stated, each named shape a `$ref`. */
  document(schema: unknown, root = false): unknown {
    if (Array.isArray(schema)) return schema.map((item) => this.document(item));
    if (typeof schema !== 'object' || schema === null) return schema;
    const name = root ? undefined : nameOf(schema);
    if (name !== undefined) {
      this.add(name, schema);
      return { $ref: `${SCHEMAS}${name}` };
    }
    const source = withUtf8Limits(schema as Record<string, unknown>);
    return Object.fromEntries(Object.entries(source).map(([key, value]) => [key, this.document(value)]));
  }

  private add(name: string, schema: unknown): void {
    const known = this.schemas.get(name);
    if (known === null) return; // being written (a shape that holds itself)
    this.schemas.set(name, null);
    const written = this.document(schema, true);
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(written)) throw new Error(`two different schemas are named ${name}`);
    this.schemas.set(name, written);
  }
}

/**
 * The CSP of /docs and everything under it: @fastify/swagger-ui's own static policy (`staticCSP: true`), except that
 * styles may be inline. Swagger UI's script inserts inline styles as it renders, which `style-src 'self'` blocks (the
 * browser logs a CSP error). A nonce cannot reach what the bundle creates and hashes would pin one version's styles,
 * so `'unsafe-inline'` is allowed for styles, on these pages only (helmet's policy of the browser routes is another).
 * Scripts stay strict: only the service's own files, no inline script, no handler attributes, no eval.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' https: data:",
  "frame-ancestors 'self'",
  "img-src 'self' data: validator.swagger.io",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' https: 'unsafe-inline'",
  'upgrade-insecure-requests',
].join('; ');

function securityFor(url: string) {
  if (url.startsWith('/api/')) return [{ apiKey: [] }];
  if (url.startsWith('/admin/')) return [{ adminToken: [] }];
  return [];
}

function isRateLimited(url: string): boolean {
  return url.startsWith('/api/') || url.startsWith('/admin/') || url.startsWith('/billing/') || url.startsWith('/payments/') || url === '/result';
}

/** The errors every route of this kind can answer with, then the route's own. */
function errorsOf(url: string, schema: FastifySchema): Errors {
  const errors: Errors = {};
  const add = (status: number, code: string) => {
    errors[status] ??= new Set();
    errors[status].add(code);
  };
  if (schema.body || schema.querystring || schema.params || schema.headers) add(400, 'VALIDATION_ERROR');
  if (securityFor(url).length > 0) add(401, 'UNAUTHORIZED');
  if (/:id\b/.test(url)) add(404, 'NOT_FOUND');
  if (schema.body && (url.startsWith('/api/') || url.startsWith('/admin/'))) add(415, 'UNSUPPORTED_MEDIA_TYPE');
  if (isRateLimited(url)) add(429, 'RATE_LIMITED');
  for (const [status, codes] of Object.entries(schema.errors ?? {})) for (const code of codes) add(Number(status), code);
  return errors;
}

function errorResponse(codes: Set<string>) {
  const list = [...codes].sort();
  return {
    description: `Error codes: ${list.join(', ')}`,
    content: {
      'application/json': {
        schema: { allOf: [{ $ref: `${SCHEMAS}Error` }, { type: 'object', properties: { code: { type: 'string', enum: list } } }] },
      },
    },
  };
}

/** The headers answers carry (components.headers), by where they apply. */
const HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed per minute to this client in this part of the service (RATE_LIMIT_API, RATE_LIMIT_ADMIN, RATE_LIMIT_BROWSER)',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': { description: 'Requests left in the current minute', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the current minute’s count starts over', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before sending again', schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: 'Present when this is the stored answer of an earlier request with the same Idempotency-Key: nothing was done again',
    schema: { type: 'string', enum: ['true'] },
  },
};
const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': headerRef('X-RateLimit-Reset'),
};

/** The Standard Webhooks headers of every delivery (components.parameters). */
const WEBHOOK_PARAMETERS = {
  WebhookId: {
    in: 'header',
    name: 'webhook-id',
    required: true,
    description: 'The event’s id: the same on every retry, so a receiver processes each event once',
    schema: { type: 'string', format: 'uuid' },
  },
  WebhookTimestamp: {
    in: 'header',
    name: 'webhook-timestamp',
    required: true,
    description: 'When this attempt was sent (real time), unix seconds: refuse one too far from your clock',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  WebhookSignature: {
    in: 'header',
    name: 'webhook-signature',
    required: true,
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` with the endpoint’s secret; two, space-separated, while a rotated secret is still valid',
    schema: { type: 'string' },
  },
};

/** Each success answer as the document writes it: described, in each media type it comes in. */
function successResponses(schema: FastifySchema, components: Components): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, raw] of Object.entries((schema.response ?? {}) as Record<string, Record<string, unknown>>)) {
    // A redirect (no body) and an answer written out already stay as they are.
    if (raw.type === 'null' || raw.content) {
      responses[status] = raw;
      continue;
    }
    const name = nameOf(raw);
    const described = schema.responseDescriptions?.[Number(status)] ?? (raw.description as string | undefined) ?? describedShape(raw);
    if (!described) throw new Error(`${schema.operationId}: the ${status} answer has no description (responseDescriptions)`);
    const written = components.document(raw);
    const media = Object.fromEntries((schema.produces ?? ['application/json']).map((type) => [type, { schema: written }]));
    const content = { ...media, ...schema.otherMedia?.[Number(status)] };
    responses[status] = { description: described, content };
    if (name === undefined && typeof raw.description === 'string') delete (written as Record<string, unknown>).description;
  }
  return responses;
}

/** The description of a named shape, for an answer that is that shape as it is. */
function describedShape(schema: Record<string, unknown>): string | undefined {
  return nameOf(schema) !== undefined && typeof schema.description === 'string' ? schema.description : undefined;
}

const TAG_ORDER: readonly string[] = Object.values(TAGS).map((tag) => tag.name);

function tagIndexOf(operations: Record<string, unknown>): number {
  const tags = Object.values(operations).flatMap((operation) => ((operation as { tags?: string[] }).tags ?? []) as string[]);
  const indexes = tags.map((tag) => TAG_ORDER.indexOf(tag)).filter((index) => index >= 0);
  return indexes.length ? Math.min(...indexes) : TAG_ORDER.length;
}

/** The paths in the order of their groups (a merchant's flow first), each group's paths as the routes were registered. */
function pathsInTagOrder(paths: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(paths).map(([path, operations], index) => ({
    path,
    operations,
    index,
    tag: tagIndexOf(operations as Record<string, unknown>),
  }));
  entries.sort((a, b) => a.tag - b.tag || a.index - b.index);
  return Object.fromEntries(entries.map(({ path, operations }) => [path, operations]));
}

/** The webhooks: each event type as a POST to the merchant's endpoint. */
function webhooksOf(webhooks: readonly WebhookDoc[], components: Components): Record<string, unknown> {
  return Object.fromEntries(
    webhooks.map((webhook) => [
      webhook.type,
      {
        post: {
          operationId: `${webhook.type.replace(/[._]([a-z])/g, (_match, letter: string) => letter.toUpperCase())}Webhook`,
          summary: webhook.summary,
          description: webhook.description,
          tags: [TAGS.events.name],
          security: [],
          parameters: Object.keys(WEBHOOK_PARAMETERS).map((name) => ({ $ref: `#/components/parameters/${name}` })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: components.document(webhook.payload), example: webhook.example } },
          },
          responses: {
            '2XX': { description: 'Delivered: any 2xx within WEBHOOK_TIMEOUT_MS; its body is not read' },
            '410': { description: 'Gone: the endpoint is disabled at once (disabledReason GONE) and nothing more is sent to it' },
            default: {
              description:
                'Anything else, a redirect included (redirects are not followed), or no answer in time: sent again after each of ' +
                'WEBHOOK_RETRY_DELAYS, then the delivery is FAILED; an endpoint whose deliveries all fail for WEBHOOK_DISABLE_AFTER is disabled (FAILING)',
            },
          },
        },
      },
    ]),
  );
}

const DESCRIPTION = [
  'Recurring and one-time payments in KRW through a Korean payment gateway, for merchants. docs/api.md is the guide; this document is its reference.',
  '',
  'Integration: (1) create a registration (or an order), (2) send the customer’s browser to its `window.url`, the gateway’s window,',
  '(3) the gateway sends the browser back to the service, which completes it (subscription and first payment, or the order’s payment),',
  '(4) follow the changes through the event feed or webhooks. Recurring charges then run on their own.',
  '',
  'Amounts are integers in KRW. Text the gateway limits is limited in bytes of UTF-8 (a Hangul syllable is 3 bytes): each such field says so.',
  'Every POST of the merchant API and every admin POST/PATCH takes an Idempotency-Key (required where money moves): the same key with the',
  'same request answers the first answer again (Idempotent-Replayed: true), with another request 409 IDEMPOTENCY_KEY_REUSED. Requests are',
  'limited per client and minute (X-RateLimit-* headers; 429 RATE_LIMITED with Retry-After). Every error is one shape (Error) with a stable `code`.',
].join('\n');

async function docsPlugin(app: FastifyInstance, options: DocsOptions) {
  let components = new Components();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Merchant billing service', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: app.config.publicBaseUrl, description: 'this deployment (PUBLIC_BASE_URL)' }],
      tags: Object.values(TAGS).map((tag) => ({ ...tag })),
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'one of API_KEYS: the merchant API (/api/v1)' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'one of ADMIN_TOKENS: the operators’ routes (/admin)' },
        },
        schemas: { Error: ErrorBodySchema as object },
      },
    },
    transform: ({ schema, url }) => {
      const base = (schema ?? {}) as FastifySchema & { hide?: boolean };
      // The sandbox, the docs themselves, and the HTML pages and forms of the operator console and of the customer portal
      // are not the service's API (the portal's session is: POST /api/v1/portal-sessions).
      const page = ['/console', '/portal'].some((prefix) => url === prefix || url.startsWith(`${prefix}/`));
      if (url.startsWith(SANDBOX_PREFIX) || url.startsWith('/docs') || page) return { schema: { ...base, hide: true } as FastifySchema, url };
      const { errors: _ownErrors, requestBody, requiredQuery, responseDescriptions: _said, otherMedia: _other, produces: _produces, ...rest } = base;
      const response: Record<string, unknown> = successResponses(base, components);
      for (const [status, codes] of Object.entries(errorsOf(url, base))) response[status] ??= errorResponse(codes);
      const documented: Record<string, unknown> = { ...rest, response, security: securityFor(url) };
      for (const part of ['body', 'querystring', 'params', 'headers'] as const) if (base[part]) documented[part] = components.document(base[part], true);
      if (base.querystring) {
        // A parameter with a default is filled in when absent (Ajv's useDefaults): not required.
        const query = documented.querystring as { required?: string[]; properties?: Record<string, { default?: unknown }> };
        const defaulted = (name: string) => query.properties?.[name]?.default !== undefined;
        const required = [...(query.required ?? []).filter((name) => !defaulted(name)), ...(requiredQuery ?? [])];
        documented.querystring = { ...query, required: [...new Set(required)] };
      }
      if (base.body && IsOptional(base.body)) documented[OPTIONAL_BODY] = true;
      if (requestBody) documented[REQUEST_BODY] = requestBody;
      return { schema: documented as FastifySchema, url };
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      const paths = (openapiObject.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
      for (const [path, operations] of Object.entries(paths)) {
        for (const operation of Object.values(operations)) {
          if (typeof operation !== 'object' || !operation) continue;
          // @fastify/swagger marks every requestBody required; a body the route marks optional is not.
          if (REQUEST_BODY in operation) {
            operation.requestBody = operation[REQUEST_BODY];
            delete operation[REQUEST_BODY];
          }
          if (OPTIONAL_BODY in operation) {
            delete operation[OPTIONAL_BODY];
            (operation.requestBody as { required: boolean }).required = false;
          }
          addResponseHeaders(path, operation);
        }
      }
      openapiObject.paths = pathsInTagOrder(paths) as typeof openapiObject.paths;
      // Redocly's groups of groups (Swagger UI shows the groups alone).
      (openapiObject as Record<string, unknown>)['x-tagGroups'] = TAG_GROUPS;
      if (options.webhooks?.length) (openapiObject as Record<string, unknown>).webhooks = webhooksOf(options.webhooks, components);
      const openapiComponents = openapiObject.components as Record<string, Record<string, unknown>>;
      openapiComponents.schemas = { ...openapiComponents.schemas, ...Object.fromEntries([...components.schemas].sort(([a], [b]) => a.localeCompare(b))) };
      openapiComponents.headers = HEADERS;
      if (options.webhooks?.length) openapiComponents.parameters = WEBHOOK_PARAMETERS;
      components = new Components();
      return openapiObject;
    },
  });
  // In production the document and its UI take a bearer token of the service (src/plugins/auth.ts).
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, uiHooks: { onRequest: app.requireDocsReader } });
}

/** The rate-limit headers on every answer where limits apply, Retry-After on 429, Idempotent-Replayed where a key is taken. */
function addResponseHeaders(path: string, operation: Record<string, unknown>): void {
  const limited = isRateLimited(path);
  const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string }>;
  const idempotent = parameters.some((p) => p.in === 'header' && p.name === IDEMPOTENCY_KEY_HEADER);
  for (const [status, response] of Object.entries(operation.responses as Record<string, { headers?: Record<string, unknown> }>)) {
    const code = Number(status);
    const headers: Record<string, unknown> = { ...response.headers };
    if (limited) Object.assign(headers, RATE_LIMIT_HEADERS);
    if (code === 429) headers['Retry-After'] = headerRef('Retry-After');
    // Answers of the handler are kept and replayed, coded errors included; a refusal before it (token, media type, limit) is not.
    if (idempotent && code !== 401 && code !== 415 && code !== 429) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
    if (Object.keys(headers).length) response.headers = headers;
  }
}

export default fp(docsPlugin, { name: 'docs', fastify: '5.x', dependencies: ['auth'] });
