// The API document (/docs/json) as the tests that hold it to the code read it: its schemas' keywords, and an app of
// the file's own that serves it (test/plugins/document-limits.test.ts probes its limits at their edges,
// test/plugins/document-fuzz.test.ts fuzzes every operation from it).
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
    doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
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
