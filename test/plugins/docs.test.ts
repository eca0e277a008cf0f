// GET /docs/json is a valid OpenAPI 3 document that lists every route of the service (the development sandbox
// aside), each with its auth scheme.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url);
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
    const served = servedRoutes().filter(([method, path]) => method !== 'HEAD' && !path.startsWith('/sandbox') && !path.startsWith('/docs'));
    expect(served.length).toBeGreaterThan(30);
    const missing = served.filter(([method, path]) => !doc.paths[toOpenApiPath(path)]?.[method.toLowerCase()]);
    expect(missing).toEqual([]);
    for (const [method, path] of served) {
      const operation = doc.paths[toOpenApiPath(path)]![method.toLowerCase()]!;
      const expected = path.startsWith('/api/') ? [{ apiKey: [] }] : path.startsWith('/admin/') ? [{ adminToken: [] }] : [];
      expect(operation.security, `${method} ${path}`).toEqual(expected);
    }
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/sandbox'))).toBe(false);
  });

  it('serves the UI at /docs', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
  });
});
