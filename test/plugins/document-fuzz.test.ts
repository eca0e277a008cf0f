// A fuzzer that trusts the OpenAPI document (/docs/json), run inside the suite: for every documented operation,
// requests built from the document and then bent (values of other types, strings of any length and script, fields
// left out or unknown, a missing or wrong token) must never answer 5xx, must answer every refusal of the JSON API in
// the service's error shape, and must answer only status codes the operation documents. The outside fuzzer of issue 30
// (Schemathesis, about 30,000 requests) is not installable here (no Python registry); this is its check in our suite.
//
// Random by design, so a run can find what the last one did not; a failure prints fast-check's seed and path, and
// FUZZ_SEED=<seed> replays it. The number of requests is bounded (FUZZ_RUNS per operation).
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN, TEST_API_KEY } from '../helpers/app.ts';
import { enumOf, type Operation, type Schema, useDocumentedApp } from '../helpers/openapi.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 50);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

// The rate limits stay as configured: a 429 is an answer the document must list too.
const served = useDocumentedApp();

/** Any value of a schema's shape, often valid, often not: the document's values, then the wrong type, then anything. */
function arbitraryOf(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const anything = fc.oneof(
    fc.string({ maxLength: 300, unit: 'binary' }),
    fc.string({ minLength: 90, maxLength: 300, unit: 'grapheme-ascii' }),
    fc.string({ maxLength: 40, unit: 'grapheme' }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(''),
    fc.uuid(),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  );
  if (!schema || depth > 3) return anything;
  const documented: fc.Arbitrary<unknown>[] = [];
  const literals = enumOf(schema);
  if (literals?.length) documented.push(fc.constantFrom(...literals));
  else if (schema.anyOf) documented.push(fc.oneof(...schema.anyOf.map((b) => arbitraryOf(b, depth + 1))));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object') documented.push(objectOf(schema, depth + 1));
  if (type === 'array') documented.push(fc.array(arbitraryOf(schema.items, depth + 1), { maxLength: 4 }));
  if (type === 'integer') documented.push(fc.oneof(fc.integer({ min: -2, max: 200_000 }), fc.constantFrom(0, 1, 2 ** 31, -(2 ** 31), Number.MAX_SAFE_INTEGER)));
  if (type === 'string')
    documented.push(fc.oneof(fc.uuid(), fc.string({ maxLength: 20 }), fc.constantFrom('2026-01', '2026-01-31', '2026-01-31T15:00:00.000Z')));
  if (type === 'boolean') documented.push(fc.boolean());
  return documented.length ? fc.oneof({ arbitrary: fc.oneof(...documented), weight: 3 }, { arbitrary: anything, weight: 1 }) : anything;
}

/** An object of the schema's properties, each present or not, and now and then one it does not know. */
function objectOf(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(schema.properties ?? {}).map(([key, property]) => [key, arbitraryOf(property, depth)] as const);
  const known = fc.record(Object.fromEntries(entries), { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>;
  return fc
    .tuple(known, fc.option(fc.string({ minLength: 1, maxLength: 8 }), { freq: 5 }))
    .map(([object, extra]) => (extra ? { ...object, [extra]: 1 } : object));
}

const pathParamsOf = (op: Operation) => (op.parameters ?? []).some((p) => p.in === 'path');

function requestOf(method: string, path: string, op: Operation) {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const json = op.requestBody?.content['application/json']?.schema;
  return fc.record({
    // '.' and '..' are dot-segments, not values: a client removes them (RFC 3986 §5.2.4), which asks for another path.
    path: fc
      .tuple(...pathParams.map((p) => arbitraryOf(p.schema).filter((v) => v !== '.' && v !== '..')))
      .map((values) => pathParams.reduce((url, p, i) => url.replace(`{${p.name}}`, encodeURIComponent(String(values[i]))), path)),
    // Now and then a path that is not valid percent-encoded UTF-8, as a careless client sends it.
    brokenPath: fc.option(fc.constantFrom('%', '%E0%A4%A', '%zz', '%C0%AF', '%FF'), { freq: 8 }),
    query: fc.tuple(...queryParams.map((p) => fc.option(arbitraryOf(p.schema), { freq: 2 }))).map((values) => {
      const query = new URLSearchParams();
      queryParams.forEach((p, i) => {
        if (values[i] !== null && values[i] !== undefined) query.set(p.name, String(values[i]));
      });
      return query.toString();
    }),
    body: json ? fc.oneof({ arbitrary: arbitraryOf(json), weight: 4 }, { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 }) : fc.constant(undefined),
    token: fc.constantFrom('right', 'right', 'right', 'right', 'none', 'wrong'),
    method: fc.constant(method.toUpperCase()),
  });
}

it('no documented operation answers 5xx, a refusal outside the error shape, or a status it does not document', async () => {
  const problems: string[] = [];
  let requests = 0;
  for (const [path, methods] of Object.entries(served.doc.paths)) {
    // The sandbox gateway's own control routes reset and fault the gateway that the rest of the file talks to.
    if (path.startsWith('/sandbox')) continue;
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const documented = Object.keys(op.responses ?? {});
      await fc.assert(
        fc.asyncProperty(requestOf(method, path, op), async (request) => {
          requests += 1;
          const headers: Record<string, string> = { accept: 'application/json' };
          const secret = path.startsWith('/admin') ? TEST_ADMIN_TOKEN : TEST_API_KEY;
          if (request.token === 'right') headers.authorization = `Bearer ${secret}`;
          if (request.token === 'wrong') headers.authorization = `Bearer ${secret}x`;
          if (request.method !== 'GET') headers['idempotency-key'] = randomUUID();
          const target = request.brokenPath && pathParamsOf(op) ? request.path.replace(/[^/]*$/, request.brokenPath) : request.path;
          const answer = await served.app.inject({
            method: request.method as 'GET',
            url: `${target}${request.query ? `?${request.query}` : ''}`,
            headers,
            ...(request.body !== undefined ? { payload: JSON.stringify(request.body), headers: { ...headers, 'content-type': 'application/json' } } : {}),
          });
          const where = `${request.method} ${target}${request.query ? `?${request.query}` : ''} (token ${request.token}) → ${answer.statusCode}`;
          if (answer.statusCode >= 500) problems.push(`${where}: ${answer.body.slice(0, 200)}`);
          if (!documented.includes(String(answer.statusCode)) && !documented.includes(`${String(answer.statusCode)[0]}XX`)) {
            problems.push(`${where}: not among the documented ${documented.join(', ')}`);
          }
          const jsonApi = path.startsWith('/api/') || path.startsWith('/admin/');
          if (jsonApi && answer.statusCode >= 400) {
            const body = answer.json() as Record<string, unknown>;
            const shaped =
              body.statusCode === answer.statusCode &&
              typeof body.code === 'string' &&
              /^[A-Z][A-Z0-9_]*$/.test(body.code) &&
              typeof body.error === 'string' &&
              typeof body.message === 'string';
            if (!shaped) problems.push(`${where}: outside the error shape: ${answer.body.slice(0, 200)}`);
          }
          // Every problem is collected, not thrown: one run lists all of them rather than the first.
          return true;
        }),
        { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
    }
  }
  expect(requests).toBeGreaterThan(RUNS * 40);
  expect([...new Set(problems)]).toEqual([]);
});
