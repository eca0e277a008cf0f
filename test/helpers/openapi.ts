// The API document (/docs/json) as the tests that hold it to the code read it: its schemas' keywords, and an app of
// the file's own that serves it (test/plugins/document-limits.test.ts probes its limits at their edges,
// test/plugins/document-fuzz.test.ts fuzzes every operation from it). Those read it with each `$ref` to a named
// schema (components.schemas) replaced by the schema, as a fuzzer or a client generator resolves it.
import { afterAll, beforeAll } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp } from './app.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  items?: Schema;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  minProperties?: number;
  description?: string;
  'x-max-utf8-bytes'?: number;
}
export interface Parameter {
  in: 'query' | 'path' | 'header';
  name: string;
  required?: boolean;
  description?: string;
  schema: Schema;
}
export interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, unknown>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** The document with every `$ref` to components.schemas replaced by the schema it names (the service's have no cycle). */
export function dereferenced<T extends OpenApiDocument>(doc: T): T {
  const schemas = doc.components?.schemas ?? {};
  const resolve = (value: unknown, depth: number): unknown => {
    if (depth > 50) throw new Error('a $ref cycle in the document');
    if (Array.isArray(value)) return value.map((item) => resolve(item, depth + 1));
    if (typeof value !== 'object' || value === null) return value;
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const target = schemas[ref.slice('#/components/schemas/'.length)];
      if (!target) throw new Error(`${ref} names no schema`);
      return resolve(target, depth + 1);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, depth + 1)]));
  };
  return { ...doc, paths: resolve(doc.paths, 0) as T['paths'] };
}

/** The literal values of an enum, or of a union of constants (TypeBox's Union of Literals). */
export function enumOf(schema: Schema): unknown[] | undefined {
  if (schema.enum) return schema.enum;
  if (schema.anyOf?.every((branch) => branch.enum || branch.const !== undefined)) return schema.anyOf.flatMap((branch) => branch.enum ?? [branch.const]);
  return undefined;
}

/** An app over a database of the file's own, with its document, for the whole file. Read them inside tests. */
export function useDocumentedApp(): { readonly app: App; readonly doc: OpenApiDocument } {
  let database: TestDatabase;
  let app: App;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await buildTestApp(database.url);
    doc = dereferenced((await app.inject({ method: 'GET', url: '/docs/json' })).json());
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
  });
  return {
    get app() {
      return app;
    },
    get doc() {
      return doc;
    },
  };
}
