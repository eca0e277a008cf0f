// A client generated from the API document compiles against the documented examples: openapi-typescript turns
// GET /docs/json into TypeScript types in a folder of this run, and the TypeScript compiler checks, against them,
// - every JSON body that the README's and docs/'s shell examples send with curl (`-d '{…}'` to a documented route),
//   typed as that operation's request body, so a field the document lacks or types otherwise fails here;
// - a merchant's integration written with the generated types (the walkthrough's requests, the fields of the answers
//   it reads, a webhook's payload);
// - and, so that this check is known to fail when it should, a body with a misspelt field and one with an amount as
//   a string, which must both be refused.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { ROOT } from '../helpers/process.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url);
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

/** The Markdown files whose examples a reader runs: the README and every document under docs/. */
function documents(): string[] {
  const docs = path.join(ROOT, 'docs');
  const nested = readdirSync(docs, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.md'));
  return ['README.md', ...nested.map((name) => path.join('docs', name))];
}

interface SentBody {
  where: string;
  method: string;
  path: string;
  body: string;
}

/** Each curl of a ```sh block that sends a literal JSON body (`-d '{…}'`) to a route of the service. */
function sentBodies(file: string): SentBody[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found: SentBody[] = [];
  for (const block of text.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    const startLine = text.slice(0, block.index).split('\n').length + 1;
    const commands = block[1]!
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n')
      .replace(/\\\n/g, ' ')
      .split(/\n|\|(?!\|)/);
    for (const command of commands) {
      if (!/\bcurl\b/.test(command)) continue;
      const body = /(?:-d|--data)\s+'(\{[^']*\})'/.exec(command)?.[1];
      const url = /"\$BASE(\/[^"?]*)/.exec(command)?.[1];
      if (body === undefined || url === undefined || url.startsWith('/sandbox')) continue;
      const method = /-X\s+([A-Z]+)/.exec(command)?.[1] ?? 'POST';
      // A shell variable in the path (`$SUB`, `$(echo …)`) stands for an id.
      const documentPath = url.replace(/\/\$[^/]+/g, '/{id}').replace(/\/\$\([^)]*\)/g, '/{id}');
      found.push({ where: `${file} (block at line ${startLine})`, method: method.toLowerCase(), path: documentPath, body });
    }
  }
  return found;
}

/** A merchant's integration, typed with the generated client types. */
const INTEGRATION = `
import type { components, paths, webhooks } from './api.ts';

type JsonBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer A } } };
}
  ? A
  : never;

// Step 1: a registration (the README's walkthrough), and what the merchant reads from the answer.
const registration: JsonBody<'/api/v1/registrations', 'post'> = { userId: 'u1', method: 'CARD', amount: 9900, orderName: 'Monthly plan' };
declare const created: Answer<'/api/v1/registrations', 'post', 201>;
const windowUrl: string | undefined = created.window.url;
const pending: components['schemas']['CheckoutStatus'] = created.status;
// A MOBILE registration with its item code, a trial on a card.
const mobile: JsonBody<'/api/v1/registrations', 'post'> = { userId: 'u2', method: 'MOBILE', amount: 5500, orderName: '월간 데이터 요금', itemCode: 'DATA01' };
const trial: JsonBody<'/api/v1/registrations', 'post'> = { userId: 'u3', method: 'CARD', amount: 9900, orderName: '프리미엄', trialDays: 14 };

// Steps 3 and 4: the subscription and its payments.
declare const registrationRead: Answer<'/api/v1/registrations/{id}', 'get', 200>;
const subscriptionId: string | undefined = registrationRead.subscriptionId;
declare const subscription: Answer<'/api/v1/subscriptions/{id}', 'get', 200>;
const status: 'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'PAUSED' | 'CANCELED' = subscription.status;
const next: string | null = subscription.nextChargeAt;
const card: string | undefined = subscription.billingKey.cardNumber;
declare const payments: Answer<'/api/v1/payments', 'get', 200>;
const kinds: string[] = payments.items.map((payment) => payment.kind);
const cursor: string | null = payments.nextCursor;

// A one-time order, a price change, a new card, a cancellation at the period's end, a webhook endpoint.
const order: JsonBody<'/api/v1/orders', 'post'> = { method: 'CARD', amount: 15000, orderName: '추가 저장공간 10GB' };
const price: JsonBody<'/api/v1/subscriptions/{id}/price-change', 'post'> = { amount: 12900 };
const newCard: JsonBody<'/api/v1/subscriptions/{id}/payment-method', 'post'> = {};
const cancel: JsonBody<'/api/v1/subscriptions/{id}/cancel', 'post'> = { atPeriodEnd: true };
const endpoint: JsonBody<'/api/v1/webhook-endpoints', 'post'> = { url: 'https://shop.example.com/hooks', eventTypes: ['payment.succeeded'] };

// An operator's refund, and the event a webhook receiver gets.
const refund: JsonBody<'/admin/payments/{id}/cancel', 'post'> = { amount: 4900, reason: 'customer asked for half back' };
declare const delivered: webhooks['payment.succeeded']['post']['requestBody']['content']['application/json'];
const eventType: 'payment.succeeded' = delivered.type;
const paid: number = delivered.data.object.amount;

export { registration, windowUrl, pending, mobile, trial, subscriptionId, status, next, card, kinds, cursor, order, price, newCard, cancel, endpoint, refund, eventType, paid };
`;

/** What must not compile: a misspelt field, and an amount as a string. */
const WRONG = `
import type { paths } from './api.ts';

type Body = paths['/api/v1/registrations']['post']['requestBody']['content']['application/json'];
export const misspelt: Body = { userId: 'u1', method: 'CARD', amount: 9900, orderName: 'Monthly plan', intervall: { unit: 'month', count: 1 } };
export const stringAmount: Body = { userId: 'u1', method: 'CARD', amount: '9900', orderName: 'Monthly plan' };
`;

function typeErrors(files: string[]): Map<string, string[]> {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    types: [],
  });
  const errors = new Map<string, string[]>();
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file ? path.basename(diagnostic.file.fileName) : '(program)';
    const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0;
    const list = errors.get(file) ?? [];
    list.push(`${file}:${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    errors.set(file, list);
  }
  return errors;
}

it('a client generated from the document compiles against the documented examples, and refuses a wrong field', async () => {
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, Record<string, unknown>> };
  const folder = mkdtempSync(path.join(tmpdir(), 'api-client-'));
  writeFileSync(path.join(folder, 'api.ts'), astToString(await openapiTS(document as never, { silent: true })));

  const bodies = documents().flatMap(sentBodies);
  const undocumented = bodies.filter((sent) => !document.paths[sent.path]?.[sent.method]);
  expect(undocumented, 'bodies sent to routes the document does not list').toEqual([]);
  // The walkthrough's registration and the operators' refunds, at least: the scan found the examples.
  expect(bodies.length).toBeGreaterThanOrEqual(5);
  const examples = [
    "import type { paths } from './api.ts';",
    "type JsonBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;",
    ...bodies.map(
      (sent, i) =>
        `// ${sent.where}: ${sent.method.toUpperCase()} ${sent.path}\nexport const body${i}: JsonBody<'${sent.path}', '${sent.method}'> = ${sent.body};`,
    ),
  ].join('\n');
  writeFileSync(path.join(folder, 'examples.ts'), examples);
  writeFileSync(path.join(folder, 'integration.ts'), INTEGRATION);
  writeFileSync(path.join(folder, 'wrong.ts'), WRONG);

  const errors = typeErrors(['examples.ts', 'integration.ts', 'wrong.ts'].map((name) => path.join(folder, name)));
  expect(errors.get('api.ts') ?? [], 'the generated types themselves').toEqual([]);
  expect(errors.get('examples.ts') ?? [], examples).toEqual([]);
  expect(errors.get('integration.ts') ?? []).toEqual([]);
  const wrong = errors.get('wrong.ts') ?? [];
  expect(wrong.some((error) => error.includes('wrong.ts:5:') && error.includes('intervall'))).toBe(true);
  expect(wrong.some((error) => error.includes('wrong.ts:6:') && /string.*number/.test(error))).toBe(true);
  expect(errors.get('(program)') ?? []).toEqual([]);
});
