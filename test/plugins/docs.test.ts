// GET /docs/json is a valid OpenAPI 3 document that lists every route of the service (the development sandbox
// aside), each with its auth scheme, and that a client generator can use: Redocly's recommended rules pass, every
// operation is named and summarised, errors share one schema, and headers and bodies are required exactly where
// the contract requires them. The UI at /docs renders under a Content-Security-Policy that lets Swagger UI's inline
// styles through and keeps scripts strict: checked on the header, and in headless Chromium (Debian's `chromium`,
// as test/e2e/browser.test.ts: skipped without it unless REQUIRE_BROWSER_TESTS=1) by the absence of CSP errors.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { launchChromium, SKIPPED } from '../helpers/browser.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  // A public address, as production documents its own (PUBLIC_BASE_URL becomes the document's server).
  app = await buildTestApp(database.url, { env: { PUBLIC_BASE_URL: 'https://billing.merchant.test' } });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

/** Every (method, path) the app serves, read from Fastify's own route tree (children extend their parent). */
function servedRoutes(): Array<[string, string]> {
  const routes: Array<[string, string]> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const at = line.indexOf('── ');
    if (at < 0) continue;
    const depth = (at - 1) / 4;
    const match = /^(\S+) \(([A-Z, ]+)\)$/.exec(line.slice(at + 3).trim());
    if (!match) continue;
    const path = (depth > 0 ? stack[depth - 1]! : '') + match[1]!;
    stack[depth] = path;
    for (const method of match[2]!.split(', ')) routes.push([method, path]);
  }
  return routes;
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  requestBody?: { required?: boolean; content: Record<string, unknown> };
  responses: Record<
    string,
    {
      headers?: Record<string, unknown>;
      content?: Record<string, { schema: { allOf?: Array<{ $ref?: string; properties?: { code?: { enum?: string[] } } }> } }>;
    }
  >;
}
type Document = { paths: Record<string, Record<string, Operation>>; servers?: Array<{ url: string }> };

async function documentJson(): Promise<{ text: string; doc: Document }> {
  const response = await app.inject({ method: 'GET', url: '/docs/json' });
  return { text: response.body, doc: response.json() as Document };
}

function operations(doc: Document): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
  );
}

const codesOf = (op: Operation, status: string) => op.responses[status]?.content?.['application/json']?.schema.allOf?.[1]?.properties?.code?.enum ?? [];

/** Every schema object of a document, with where it is. */
function* schemasIn(value: unknown, where = '#'): Generator<[string, Record<string, unknown>]> {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* schemasIn(item, `${where}/${i}`);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  yield [where, value as Record<string, unknown>];
  for (const [key, item] of Object.entries(value)) yield* schemasIn(item, `${where}/${key}`);
}

type Full = Document & {
  openapi: string;
  tags: Array<{ name: string; description?: string }>;
  components: { schemas: Record<string, unknown>; headers: Record<string, unknown> };
  webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { properties: { type: { const: string } } } } } } } }>;
};

describe('GET /docs/json, as a merchant integrates from it', () => {
  const fullDocument = async () => (await documentJson()).doc as Full;

  it('is OpenAPI 3.1, its groups declared with descriptions, the merchant API first and the paths in the groups’ order', async () => {
    const doc = await fullDocument();
    expect(doc.openapi).toBe('3.1.0');
    const order = doc.tags.map((tag) => tag.name);
    for (const tag of doc.tags) expect(tag.description, tag.name).toBeTruthy();
    expect(order.slice(0, 6)).toEqual(['Registrations', 'Subscriptions', 'Orders', 'Payments', 'Events', 'Webhook endpoints']);
    const positions = Object.values(doc.paths).map((ops) =>
      Math.min(
        ...Object.values(ops)
          .flatMap((op) => op.tags ?? [])
          .map((t) => order.indexOf(t)),
      ),
    );
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(Object.keys(doc.paths)[0]).toBe('/api/v1/registrations');
    // Redocly's groups of groups hold every group once, in the same order.
    const grouped = (doc as unknown as { 'x-tagGroups': Array<{ tags: string[] }> })['x-tagGroups'].flatMap((group) => group.tags);
    expect(grouped).toEqual(order);
  });

  it('names the resources in components.schemas, refers to them by $ref, and writes enumerations as enum', async () => {
    const doc = await fullDocument();
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Error', 'Registration', 'Subscription', 'Order', 'Payment', 'Refund', 'Attempt', 'Event', 'WebhookEndpoint', 'Method']),
    );
    const get = (path: string) => doc.paths[path]!.get!.responses['200']!.content!['application/json']!.schema as unknown as { $ref?: string };
    expect(get('/api/v1/subscriptions/{id}').$ref).toBe('#/components/schemas/Subscription');
    expect(get('/api/v1/payments/{id}').$ref).toBe('#/components/schemas/Payment');
    const unions = [...schemasIn(doc)].filter(
      ([, schema]) =>
        Array.isArray(schema.anyOf) &&
        (schema.anyOf as Array<Record<string, unknown>>).every((branch) => 'const' in branch || (Array.isArray(branch.enum) && branch.enum.length === 1)),
    );
    expect(unions.map(([where]) => where)).toEqual([]);
    const refs = [...schemasIn(doc)].map(([, schema]) => schema.$ref).filter((ref): ref is string => typeof ref === 'string');
    for (const ref of refs)
      expect(
        ref.startsWith('#/components/') &&
          ref
            .split('/')
            .slice(1)
            .reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], doc),
        ref,
      ).toBeTruthy();
  });

  it('describes every answer, and gives every JSON request body an example', async () => {
    const doc = await fullDocument();
    for (const [name, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const description = (response as { description?: string }).description;
        expect(description && description !== 'Default Response', `${name} ${status}`).toBeTruthy();
      }
      const json = op.requestBody?.content['application/json'] as { example?: unknown; examples?: unknown } | undefined;
      if (json) expect(json.example ?? json.examples, `${name}: an example body`).toBeDefined();
    }
  });

  it('each request body’s example is taken by its route (not refused VALIDATION_ERROR)', async () => {
    const doc = await fullDocument();
    const { TEST_API_KEY } = await import('../helpers/app.ts');
    let sent = 0;
    for (const [name, op] of operations(doc)) {
      const example = (op.requestBody?.content['application/json'] as { example?: unknown } | undefined)?.example;
      if (example === undefined) continue;
      const [method, path] = name.split(' ') as [string, string];
      const token = path.startsWith('/admin/') ? TEST_ADMIN_TOKEN : TEST_API_KEY;
      const answer = await app.inject({
        method: method as 'POST',
        url: path.replace('{id}', '00000000-0000-4000-8000-000000000000'),
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': `example-${sent}`, accept: 'application/json' },
        payload: example as object,
      });
      sent++;
      expect(answer.headers['content-type'], name).toMatch(/json/);
      expect(answer.json().code, `${name}: ${answer.body.slice(0, 200)}`).not.toBe('VALIDATION_ERROR');
    }
    expect(sent).toBeGreaterThan(20);
  });

  it('states byte limits in bytes with the Hangul count, and the rules between a registration’s fields', async () => {
    const doc = await fullDocument();
    const registration = doc.paths['/api/v1/registrations']!.post!.requestBody!.content['application/json'] as {
      schema: { description: string; properties: Record<string, { description?: string; 'x-max-utf8-bytes'?: number }> };
    };
    for (const [field, property] of Object.entries(registration.schema.properties)) {
      const bytes = property['x-max-utf8-bytes'];
      if (bytes === undefined) continue;
      expect(property.description, field).toContain(`${bytes} bytes of UTF-8`);
      expect(property.description, field).toContain(`${Math.floor(bytes / 3)} Hangul syllables`);
    }
    expect(registration.schema.description).toMatch(/MOBILE needs itemCode/);
    expect(registration.schema.description).toMatch(/trialDays implies issueKeyOnly/);
  });

  it('documents the rate-limit and idempotency headers as the service sends them, and the CSV answers', async () => {
    const doc = await fullDocument();
    type Headers = Record<string, unknown> | undefined;
    const headersOf = (path: string, method: string, status: string) => (doc.paths[path]![method]!.responses[status] as { headers?: Headers }).headers ?? {};
    expect(Object.keys(headersOf('/api/v1/registrations', 'post', '201'))).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Idempotent-Replayed']),
    );
    expect(Object.keys(headersOf('/api/v1/registrations', 'post', '429'))).toContain('Retry-After');
    expect(Object.keys(headersOf('/health', 'get', '200'))).toEqual([]);
    // The service sends what the document names (header names are case-insensitive).
    const { TEST_API_KEY } = await import('../helpers/app.ts');
    const request = {
      method: 'POST' as const,
      url: '/api/v1/registrations',
      headers: { authorization: `Bearer ${TEST_API_KEY}`, 'idempotency-key': 'docs-replay-check' },
      payload: { userId: 'u1', method: 'CARD', amount: 9900, orderName: '프리미엄 월간 구독' },
    };
    const first = await app.inject(request);
    const again = await app.inject(request);
    expect(first.statusCode).toBe(201);
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) expect(first.headers[name.toLowerCase()], name).toBeDefined();
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    for (const [path, status] of [
      ['/admin/reconciliation', '200'],
      ['/admin/reports/mrr', '200'],
    ] as const) {
      expect(Object.keys(doc.paths[path]!.get!.responses[status]!.content!), path).toEqual(['application/json', 'text/csv']);
    }
  });

  it('links a registration to its subscription and a payment to its refunds, and names only operations it has', async () => {
    const doc = await fullDocument();
    const ids = new Set(operations(doc).map(([, op]) => op.operationId));
    const linksOf = (path: string, method: string, status: string) =>
      (doc.paths[path]![method]!.responses[status] as { links?: Record<string, { operationId: string }> }).links ?? {};
    expect(linksOf('/api/v1/registrations/{id}', 'get', '200').getSubscription?.operationId).toBe('getSubscription');
    expect(linksOf('/api/v1/payments/{id}', 'get', '200').refundPayment?.operationId).toBe('refundPayment');
    let links = 0;
    for (const [, op] of operations(doc)) {
      for (const response of Object.values(op.responses)) {
        for (const link of Object.values((response as { links?: Record<string, { operationId: string }> }).links ?? {})) {
          links++;
          expect(ids.has(link.operationId), link.operationId).toBe(true);
        }
      }
    }
    expect(links).toBeGreaterThan(10);
  });

  it('describes every event type a merchant receives as a webhook, with its payload', async () => {
    const doc = await fullDocument();
    const { EVENT_TYPES } = await import('../../src/modules/events/event-types.ts');
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const [type, webhook] of Object.entries(doc.webhooks)) {
      expect(webhook.post.requestBody.content['application/json'].schema.properties.type.const, type).toBe(type);
    }
  });
});

describe('GET /docs/json', () => {
  it('is a valid OpenAPI 3 document', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(response.statusCode).toBe(200);
    const result = await new Validator().validate(response.json());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every route the service serves, with the auth scheme of its prefix', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    const served = servedRoutes().filter(
      ([method, path]) =>
        method !== 'HEAD' && !path.startsWith('/sandbox') && !path.startsWith('/docs') && !path.startsWith('/console') && !path.startsWith('/portal'),
    );
    expect(served.length).toBeGreaterThan(30);
    const missing = served.filter(([method, path]) => !doc.paths[toOpenApiPath(path)]?.[method.toLowerCase()]);
    expect(missing).toEqual([]);
    for (const [method, path] of served) {
      const operation = doc.paths[toOpenApiPath(path)]![method.toLowerCase()]!;
      const expected = path.startsWith('/api/') ? [{ apiKey: [] }] : path.startsWith('/admin/') ? [{ adminToken: [] }] : [];
      expect(operation.security, `${method} ${path}`).toEqual(expected);
    }
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/sandbox') || p.startsWith('/console') || p.startsWith('/portal'))).toBe(false);
  });

  it('passes Redocly’s recommended rules with no error and no warning', async () => {
    const { text } = await documentJson();
    // Two rules do not fit this service: it is private (no license to state), and its health probes have no
    // client error to document. Every other recommended rule applies, warnings included.
    const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } });
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
    const reported = problems
      .map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`)
      .filter((line) => !/^warn operation-4xx-response #\/paths\/~1(health|ready)\/get\/responses:/.test(line));
    expect(reported).toEqual([]);
  });

  it('names every operation uniquely, summarises and tags it, and has a server', async () => {
    const { doc } = await documentJson();
    const all = operations(doc);
    const ids = all.map(([, op]) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [name, op] of all) {
      expect(op.summary, name).toBeTruthy();
      expect(op.tags?.length, name).toBeGreaterThan(0);
    }
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'https://billing.merchant.test' })]);
  });

  it('documents every error with the one error schema and the codes it can carry', async () => {
    const { doc } = await documentJson();
    for (const [name, op] of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        if (name === 'GET /ready' && status === '503') continue; // the readiness shape, not an error
        expect(response.content?.['application/json']?.schema.allOf?.[0]?.$ref, `${name} ${status}`).toBe('#/components/schemas/Error');
        expect(codesOf(op, status).length, `${name} ${status}`).toBeGreaterThan(0);
      }
    }
    const charge = doc.paths['/admin/subscriptions/{id}/charge']!.post!;
    expect(codesOf(charge, '400')).toEqual(expect.arrayContaining(['IDEMPOTENCY_KEY_REQUIRED', 'VALIDATION_ERROR']));
    expect(codesOf(charge, '401')).toEqual(['UNAUTHORIZED']);
    expect(codesOf(charge, '404')).toEqual(['NOT_FOUND']);
    expect(codesOf(charge, '409')).toEqual(expect.arrayContaining(['NOT_DUE', 'IDEMPOTENCY_KEY_REUSED', 'STATE_CONFLICT']));
    expect(codesOf(charge, '422')).toEqual(expect.arrayContaining(['MOBILE_WINDOW_CLOSED', 'MOBILE_AMOUNT_MISMATCH']));
    expect(Object.keys(charge.responses)).toEqual(expect.arrayContaining(['200', '201', '402', '415', '502', '503']));
    expect(codesOf(doc.paths['/api/v1/registrations']!.post!, '429')).toEqual(['RATE_LIMITED']);
    expect(codesOf(doc.paths['/billing/success']!.get!, '502')).toEqual(['GATEWAY_DECLINED', 'PAYMENT_OUTCOME_UNKNOWN']);
  });

  it('requires Idempotency-Key on charge and refund (dry runs included), and only there', async () => {
    const { doc } = await documentJson();
    const header = (op: Operation) => op.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key');
    expect(header(doc.paths['/admin/subscriptions/{id}/charge']!.post!)?.required).toBe(true);
    expect(header(doc.paths['/admin/payments/{id}/cancel']!.post!)?.required).toBe(true);
    expect(header(doc.paths['/admin/subscriptions/{id}/pause']!.post!)?.required).toBe(false);
    expect(header(doc.paths['/admin/scheduler/run']!.post!)?.required).toBe(false);
  });

  it('marks a request body required unless the route takes none', async () => {
    const { doc } = await documentJson();
    expect(doc.paths['/admin/scheduler/run']!.post!.requestBody?.required).toBe(false);
    expect(doc.paths['/api/v1/registrations']!.post!.requestBody?.required).toBe(true);
  });

  it('documents the browser routes’ 303 redirect, their JSON answer and their form posts', async () => {
    const { doc } = await documentJson();
    for (const path of ['/billing/success', '/billing/fail', '/payments/success', '/payments/fail']) {
      for (const method of ['get', 'post']) {
        const op = doc.paths[path]![method]!;
        expect(op.responses['303']?.headers, `${method} ${path}`).toHaveProperty('location');
        expect(op.responses['200']?.content, `${method} ${path}`).toHaveProperty(['application/json']);
      }
      expect(Object.keys(doc.paths[path]!.post!.requestBody!.content)).toContain('application/x-www-form-urlencoded');
    }
  });

  it('a missing Idempotency-Key is 400 IDEMPOTENCY_KEY_REQUIRED before anything runs, dry runs included', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/admin/subscriptions/00000000-0000-4000-8000-000000000000/charge?dryRun=true',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: { reason: 'check' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REQUIRED' });
  });

  it('serves the UI at /docs', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
  });
});

/** A CSP header's directives: name → its sources. */
function directives(header: string | string[] | number | undefined): Record<string, string[]> {
  expect(typeof header, 'content-security-policy header').toBe('string');
  const parsed: Record<string, string[]> = {};
  for (const part of (header as string).split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) parsed[name.toLowerCase()] = sources;
  }
  return parsed;
}

describe('GET /docs content security policy', () => {
  it('lets the UI’s inline styles through (no nonce or hash that would void unsafe-inline) and keeps scripts to the service’s own files', async () => {
    for (const url of ['/docs/', '/docs/static/index.html', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBeLessThan(400);
      const csp = directives(response.headers['content-security-policy']);
      expect(csp['style-src'], url).toContain("'unsafe-inline'");
      expect(
        csp['style-src']!.filter((s) => /^'(nonce|sha\d+)-/.test(s)),
        url,
      ).toEqual([]);
      expect(csp['style-src-elem'], url).toBeUndefined();
      expect(csp['style-src-attr'], url).toBeUndefined();
      expect(csp['script-src'], url).toEqual(["'self'"]);
      expect(csp['script-src-attr'], url).toEqual(["'none'"]);
      expect(csp['default-src'], url).toEqual(["'self'"]);
      expect(csp['object-src'], url).toEqual(["'none'"]);
    }
  });

  it('is the docs’ own: other routes do not carry it', async () => {
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.headers['content-security-policy']).toBeUndefined();
    // The browser routes keep helmet's policy, which allows no inline script either.
    const result = await app.inject({ method: 'GET', url: '/result?status=success' });
    const csp = directives(result.headers['content-security-policy']);
    expect(csp['script-src']).toEqual(["'self'"]);
    expect(csp['script-src-attr']).toEqual(["'none'"]);
  });

  it.skipIf(SKIPPED)('renders in Chromium with no CSP error in the console (skipped without Chromium unless REQUIRE_BROWSER_TESTS=1)', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
      await page.goto(`http://127.0.0.1:${port}/docs`);
      // The operations rendered from /docs/json; open one so that its parameters and responses render too.
      await page.locator('.opblock').first().waitFor();
      expect(await page.locator('.opblock').count()).toBeGreaterThan(30);
      await page.locator('.opblock-summary').first().click();
      await page.locator('.opblock-body').first().waitFor();
      await page.waitForLoadState('networkidle');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
