// The event snapshot holds instants as strings; rendering turns back exactly the fields Prisma types as DateTime
// (read from schema.prisma by Prisma's own parser), so a column added later cannot be left a string.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { INSTANT_FIELDS } from '../../../src/modules/events/events.render.ts';

const require = createRequire(import.meta.url);
const wasm = require('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string };
const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: readFileSync(new URL('../../../prisma/schema.prisma', import.meta.url), 'utf8') }))) as {
  datamodel: { models: Array<{ name: string; fields: Array<{ name: string; type: string; kind: string }> }> };
};

describe('INSTANT_FIELDS', () => {
  it.each([
    ['subscription', 'Subscription'],
    ['payment', 'Payment'],
    ['registration', 'Registration'],
    ['order', 'Order'],
  ] as const)('%s lists every DateTime column of %s', (objectType, model) => {
    const fields = dmmf.datamodel.models
      .find((m) => m.name === model)!
      .fields.filter((f) => f.kind === 'scalar' && f.type === 'DateTime')
      .map((f) => f.name);
    expect([...INSTANT_FIELDS[objectType]].sort()).toEqual(fields.sort());
  });
});
