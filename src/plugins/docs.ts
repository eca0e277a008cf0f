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
//   without but refuses itself, with a code of its own, are documented required (`requiredQuery`).
// The development sandbox is not part of the service's contract and is left out.
// The UI's pages (/docs and its assets) carry a Content-Security-Policy of their own, DOCS_CSP below.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { IsOptional } from 'typebox';
import { MAX_UTF8_BYTES } from '../lib/input.ts';
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
  }
}

type Errors = Record<number, Set<string>>;

const OPTIONAL_BODY = 'x-optional-body';
const REQUEST_BODY = 'x-request-body';

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
export function documentUtf8Limits(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(documentUtf8Limits);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Record<string, unknown>;
  const maxBytes = source[MAX_UTF8_BYTES];
  if (typeof maxBytes === 'number') {
    const { maxLength: _characters, ...rest } = source;
    return {
      ...rest,
      anyOf: [
        { maxLength: maxBytes, pattern: '^[\\u0000-\\u007F]*$' },
        { maxLength: Math.floor(maxBytes / 3), pattern: '^[\\u0000-\\uD7FF\\uE000-\\uFFFF]*$' },
        { maxLength: Math.floor(maxBytes / 4) },
      ],
    };
  }
  return Object.fromEntries(Object.entries(source).map(([key, value]) => [key, documentUtf8Limits(value)]));
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
        schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { code: { type: 'string', enum: list } } }] },
      },
    },
  };
}

async function docsPlugin(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Merchant billing service',
        version: '1.0.0',
        description: 'Recurring and one-time payments through the gateway. README.md states the whole contract.',
      },
      servers: [{ url: app.config.publicBaseUrl, description: 'this deployment (PUBLIC_BASE_URL)' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'one of API_KEYS' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'one of ADMIN_TOKENS' },
        },
        schemas: { Error: ErrorBodySchema as object },
      },
    },
    transform: ({ schema, url }) => {
      const base = (schema ?? {}) as FastifySchema & { hide?: boolean };
      // The sandbox, the docs themselves and the operator console's HTML pages and forms are not the service's API.
      if (url.startsWith(SANDBOX_PREFIX) || url.startsWith('/docs') || url === '/console' || url.startsWith('/console/'))
        return { schema: { ...base, hide: true } as FastifySchema, url };
      const { errors: _ownErrors, requestBody, requiredQuery, ...rest } = base;
      const response: Record<string, unknown> = { ...(base.response as Record<string, unknown> | undefined) };
      for (const [status, codes] of Object.entries(errorsOf(url, base))) response[status] ??= errorResponse(codes);
      const documented: Record<string, unknown> = { ...rest, response, security: securityFor(url) };
      for (const part of ['body', 'querystring', 'params', 'headers'] as const) if (base[part]) documented[part] = documentUtf8Limits(base[part]);
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
    // @fastify/swagger marks every requestBody required; a body the route marks optional is not.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      for (const operations of Object.values(openapiObject.paths ?? {})) {
        for (const operation of Object.values(operations as Record<string, Record<string, unknown>>)) {
          if (typeof operation !== 'object' || !operation) continue;
          if (REQUEST_BODY in operation) {
            operation.requestBody = operation[REQUEST_BODY];
            delete operation[REQUEST_BODY];
          }
          if (!(OPTIONAL_BODY in operation)) continue;
          delete operation[OPTIONAL_BODY];
          (operation.requestBody as { required: boolean }).required = false;
        }
      }
      return openapiObject;
    },
  });
  // In production the document and its UI take a bearer token of the service (src/plugins/auth.ts).
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, uiHooks: { onRequest: app.requireDocsReader } });
}

export default fp(docsPlugin, { name: 'docs', fastify: '5.x', dependencies: ['auth'] });
