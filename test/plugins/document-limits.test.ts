// The OpenAPI document (/docs/json) says what the code enforces, so that a client generator or a fuzzer that trusts it
// is neither refused for what it allows nor let through what it forbids (issue 30: a refund reason documented 500
// characters and refused over 200 bytes, months 2026-13 allowed by the pattern, `state` optional though required, the
// settlement import with no request body, 429 undocumented on the admin routes).
//
// Generic over every documented operation: for each string limit of a JSON body's top-level properties, a query
// parameter or a path parameter (minLength, maxLength, pattern, enum, required, and x-max-utf8-bytes: the gateway's
// byte limits), a request valid but for that value is sent at the edge: at the limit it is not refused for that field
// (no 400 VALIDATION_ERROR naming it), one past it is 400 in the error shape naming it. A pattern is probed with
// samples from the table below: a new pattern without samples fails the test, so its edges get written down.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DAY_PATTERN, INSTANT_PATTERN, MONTH_PATTERN, UUID_PATTERN } from '../../src/lib/input.ts';
import { PHONE_NUMBER_PATTERN } from '../../src/modules/shared/terms.ts';
import { TEST_ADMIN_TOKEN, TEST_API_KEY } from '../helpers/app.ts';
import { enumOf, type Operation, type Schema, useDocumentedApp } from '../helpers/openapi.ts';

/** Values a pattern accepts and values at its edges that it refuses. */
const PATTERN_SAMPLES: Record<string, { valid: string[]; invalid: string[] }> = {
  [UUID_PATTERN]: { valid: ['7d444840-9dc0-41a2-8e3e-000000000001'], invalid: ['7d444840-9dc0-41a2-8e3e-00000000000', 'not-a-uuid'] },
  [INSTANT_PATTERN]: { valid: ['2026-01-31T15:00:00.000Z'], invalid: ['0000-01-01T00:00:00.000Z'] },
  [MONTH_PATTERN]: { valid: ['2026-01', '2025-12', '0001-01'], invalid: ['0000-00', '2026-13', '2026-00', '0000-01', '2026-1'] },
  [DAY_PATTERN]: {
    valid: ['2026-01-31', '2024-02-29', '2000-02-29', '2026-04-30'],
    invalid: ['2026-02-29', '1900-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '0000-01-01'],
  },
  '^https?://': { valid: ['https://shop.example.com/return'], invalid: ['ftp://shop.example.com/return', 'shop.example.com'] },
  [PHONE_NUMBER_PATTERN]: { valid: ['+82-10-1234-5678', '010 1234 5678'], invalid: ['phone', '010'] },
  '\\S': { valid: ['a'], invalid: [' ', '\u3000'] },
};

const documented = useDocumentedApp();

/** A valid value of a schema, read from the schema alone. */
function sample(schema: Schema, name: string): unknown {
  const values = enumOf(schema);
  if (values) return values[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  if (schema.type === 'boolean') return false;
  if (schema.type === 'array') return [];
  if (schema.type === 'object') {
    const body: Record<string, unknown> = {};
    for (const key of schema.required ?? []) body[key] = sample(schema.properties![key]!, key);
    // At least minProperties: the first optional properties that take a plain value.
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (Object.keys(body).length >= (schema.minProperties ?? 0)) break;
      if (!(key in body) && (enumOf(property) || property.type === 'string')) body[key] = sample(property, key);
    }
    return body;
  }
  if (schema.pattern) {
    const samples = PATTERN_SAMPLES[schema.pattern];
    if (!samples) throw new Error(`no samples for the pattern of ${name}: ${schema.pattern} (add them to PATTERN_SAMPLES)`);
    return samples.valid[0];
  }
  if (schema.format === 'date-time') return '2026-01-31T15:00:00.000Z';
  return 'a'.repeat(Math.max(1, schema.minLength ?? 1));
}

interface Target {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: Record<string, unknown>;
  headers: Record<string, string>;
}

function baseline(method: string, path: string, op: Operation): Target | undefined {
  const target: Target = { method: method.toUpperCase(), path, query: {}, headers: { accept: 'application/json' } };
  if (path.startsWith('/api/')) target.headers.authorization = `Bearer ${TEST_API_KEY}`;
  if (path.startsWith('/admin/')) target.headers.authorization = `Bearer ${TEST_ADMIN_TOKEN}`;
  for (const p of op.parameters ?? []) {
    if (p.in === 'path') target.path = target.path.replace(`{${p.name}}`, String(sample(p.schema, p.name)));
    else if (p.in === 'query' && p.required) target.query[p.name] = String(sample(p.schema, p.name));
  }
  const json = op.requestBody?.content['application/json']?.schema;
  if (op.requestBody && !json) return undefined; // a file upload: its query string is probed without a body below
  if (json) target.body = sample(json, 'body') as Record<string, unknown>;
  return target;
}

async function send(target: Target) {
  const headers = { ...target.headers };
  // A fresh Idempotency-Key each time: no probe replays another's answer.
  if (target.method !== 'GET') headers['idempotency-key'] = randomUUID();
  const query = new URLSearchParams(target.query).toString();
  const response = await documented.app.inject({
    method: target.method as 'GET',
    url: `${target.path}${query ? `?${query}` : ''}`,
    headers,
    ...(target.body !== undefined ? { payload: target.body } : {}),
  });
  const body = response.headers['content-type']?.toString().includes('json') ? (response.json() as Record<string, unknown>) : {};
  return { status: response.statusCode, body };
}

/** Refused because of `field`'s value: 400 VALIDATION_ERROR whose message names the field. */
const refusedFor = (answer: { status: number; body: Record<string, unknown> }, field: string) =>
  answer.status === 400 && answer.body.code === 'VALIDATION_ERROR' && new RegExp(`\\b${field}\\b`).test(String(answer.body.message));

interface Probe {
  field: string;
  where: 'query' | 'body' | 'path';
  value: unknown;
  accepted: boolean;
  why: string;
}

/** The edges of one string schema. */
function edges(field: string, schema: Schema, where: Probe['where']): Probe[] {
  const probes: Probe[] = [];
  const add = (value: unknown, accepted: boolean, why: string) => probes.push({ field, where, value, accepted, why });
  const values = enumOf(schema);
  if (values) {
    for (const value of values) add(value, true, `enum value ${String(value)}`);
    add('NOT_ONE_OF_THEM', false, 'outside the enum');
    return probes;
  }
  if (schema.type !== 'string' && !schema['x-max-utf8-bytes']) return probes;
  const samples = schema.pattern ? PATTERN_SAMPLES[schema.pattern] : undefined;
  if (schema.pattern && !samples) throw new Error(`no samples for the pattern of ${field}: ${schema.pattern} (add them to PATTERN_SAMPLES)`);
  // An opaque token (a cursor) is valid only as the service issued it: only its limits' refusals are probed.
  const opaque = /^opaque\b/.test(schema.description ?? '');
  if (opaque) {
    if (schema.maxLength !== undefined) add('a'.repeat(schema.maxLength + 1), false, `maxLength ${schema.maxLength} + 1`);
    return probes;
  }
  for (const value of samples?.valid ?? []) add(value, true, `matches ${schema.pattern}`);
  for (const value of samples?.invalid ?? []) add(value, false, `does not match ${schema.pattern}`);
  const base = samples?.valid[0] ?? 'a';
  const pattern = schema.pattern ? new RegExp(schema.pattern, 'u') : undefined;
  /** `base` stretched to n characters with its own last character, when the pattern still holds. */
  const ofLength = (n: number) => {
    const value = base.length >= n ? base.slice(0, n) : base.padEnd(n, base.at(-1));
    return !pattern || pattern.test(value) ? value : undefined;
  };
  const bytes = schema['x-max-utf8-bytes'];
  if (bytes !== undefined) {
    // Each branch of the documented union at its edge, and the byte limit itself with mixed text.
    const branches = schema.anyOf ?? [];
    expect(
      branches.map((b) => b.maxLength),
      `${field}: the union of character limits`,
    ).toEqual([bytes, Math.floor(bytes / 3), Math.floor(bytes / 4)]);
    const hangul = Math.floor(bytes / 3);
    const emoji = Math.floor(bytes / 4);
    add('a'.repeat(bytes), true, `${bytes} ASCII characters`);
    add('a'.repeat(bytes + 1), false, `${bytes + 1} ASCII characters`);
    add('가'.repeat(hangul), true, `${hangul} Hangul syllables`);
    add('가'.repeat(hangul + 1), false, `${hangul + 1} Hangul syllables`);
    add('😀'.repeat(emoji), true, `${emoji} emoji`);
    add('😀'.repeat(emoji + 1), false, `${emoji + 1} emoji`);
    add(`${'가'.repeat(hangul)}${'a'.repeat(bytes - 3 * hangul)}`, true, `mixed text of exactly ${bytes} bytes`);
    add(`${'가'.repeat(hangul)}${'a'.repeat(bytes - 3 * hangul + 1)}`, false, `mixed text of ${bytes + 1} bytes`);
  } else if (schema.maxLength !== undefined) {
    const at = ofLength(schema.maxLength);
    if (at !== undefined) add(at, true, `maxLength ${schema.maxLength}`);
    add('a'.repeat(schema.maxLength + 1), false, `maxLength ${schema.maxLength} + 1`);
  }
  const min = schema.minLength ?? 0;
  if (min > 0) {
    const at = ofLength(min);
    if (at !== undefined) add(at, true, `minLength ${min}`);
    add(base.slice(0, min - 1), false, `minLength ${min} - 1`);
  }
  return probes;
}

function operations(): Array<[string, string, Operation]> {
  return Object.entries(documented.doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [method, path, op] as [string, string, Operation]),
  );
}

describe('the OpenAPI document holds to the code', () => {
  it('every documented string limit of every operation is where the code puts it', async () => {
    const failures: string[] = [];
    let probed = 0;
    for (const [method, path, op] of operations()) {
      const target = baseline(method, path, op) ?? { ...baseline(method, path, { ...op, requestBody: undefined })!, body: undefined };
      const name = `${method.toUpperCase()} ${path}`;
      const before = await send(target);
      if (before.status === 400 && /^(body|querystring|params|headers)\b/.test(String(before.body.message))) {
        failures.push(`${name}: the baseline request is refused: ${String(before.body.message)}`);
        continue;
      }
      const probes: Probe[] = [];
      for (const p of op.parameters ?? []) {
        // @fastify/swagger moves a parameter's description from its schema onto the parameter.
        if (p.in === 'query') probes.push(...edges(p.name, { ...p.schema, description: p.schema.description ?? p.description }, 'query'));
        if (p.in === 'path') probes.push(...edges(p.name, p.schema, 'path'));
      }
      const json = op.requestBody?.content['application/json']?.schema;
      for (const [field, schema] of Object.entries(json?.properties ?? {})) probes.push(...edges(field, schema, 'body'));

      for (const probe of probes) {
        const probeTarget: Target = { ...target, query: { ...target.query }, body: target.body && { ...target.body } };
        if (probe.where === 'query') {
          probeTarget.query[probe.field] = String(probe.value);
          // A range's other end takes the same value (from=to), so that only this value is judged.
          const own = op.parameters!.find((p) => p.name === probe.field)!.schema.pattern;
          if (probe.accepted && own)
            for (const p of op.parameters ?? []) if (p.in === 'query' && p.schema.pattern === own) probeTarget.query[p.name] = String(probe.value);
        } else if (probe.where === 'path') {
          probeTarget.path = path.replace(/\{[^}]+\}/g, (m) =>
            m === `{${probe.field}}` ? encodeURIComponent(String(probe.value)) : target.path.split('/')[path.split('/').indexOf(m)]!,
          );
        } else {
          probeTarget.body = { ...(target.body ?? {}), [probe.field]: probe.value };
        }
        const answer = await send(probeTarget);
        probed++;
        const refused = refusedFor(answer, probe.field);
        if (probe.accepted && refused) failures.push(`${name} ${probe.field} (${probe.why}): refused: ${String(answer.body.message)}`);
        if (!probe.accepted) {
          const shaped =
            answer.status === 400 && typeof answer.body.code === 'string' && answer.body.statusCode === 400 && typeof answer.body.message === 'string';
          if (!shaped || !refused)
            failures.push(`${name} ${probe.field} (${probe.why}): answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}`);
        }
      }
      // Every required body property and query parameter: without it, 400 in the error shape naming it.
      const required: Array<['query' | 'body', string]> = [
        ...(op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => ['query', p.name] as ['query', string]),
        ...(json?.required ?? []).map((field) => ['body', field] as ['body', string]),
      ];
      for (const [where, field] of required) {
        const without: Target = { ...target, query: { ...target.query }, body: target.body && { ...target.body } };
        if (where === 'query') delete without.query[field];
        else delete without.body![field];
        const answer = await send(without);
        probed++;
        const named = new RegExp(`\\b${field}\\b`).test(String(answer.body.message));
        if (answer.status !== 400 || answer.body.statusCode !== 400 || !named)
          failures.push(`${name} without ${field}: answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 160)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(probed).toBeGreaterThan(200);
  }, 240_000);

  it('documents each byte-limited field as the code limits it (the refund reason is the gateway’s 200 bytes)', () => {
    const body = (path: string, method: string) => documented.doc.paths[path]![method]!.requestBody!.content['application/json']!.schema.properties!;
    expect(body('/admin/payments/{id}/cancel', 'post').reason!['x-max-utf8-bytes']).toBe(200);
    for (const [path, method] of [
      ['/api/v1/registrations', 'post'],
      ['/api/v1/orders', 'post'],
      ['/admin/subscriptions/{id}', 'patch'],
    ] as const) {
      expect(body(path, method).orderName!['x-max-utf8-bytes'], `${method} ${path}`).toBe(100);
    }
    expect(body('/api/v1/registrations', 'post').itemCode!['x-max-utf8-bytes']).toBe(10);
  });

  it('requires the browser routes’ state, documents the settlement import’s body and the admin routes’ 429', () => {
    for (const path of ['/billing/success', '/billing/fail', '/payments/success', '/payments/fail']) {
      for (const method of ['get', 'post']) {
        const state = documented.doc.paths[path]![method]!.parameters!.find((p) => p.in === 'query' && p.name === 'state');
        expect(state?.required, `${method} ${path}`).toBe(true);
      }
    }
    const upload = documented.doc.paths['/admin/settlement-imports']!.post!.requestBody!;
    expect(Object.keys(upload.content).sort()).toEqual(['multipart/form-data', 'text/csv']);
    for (const [path, ops] of Object.entries(documented.doc.paths)) {
      if (!path.startsWith('/admin/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        expect((op as { responses: Record<string, unknown> }).responses['429'], `${method} ${path}`).toBeDefined();
      }
    }
  });
});
