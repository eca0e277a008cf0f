// An import is visible to operators: one log line with its counts, and the metrics of lines by status and of what
// the files resolved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { LogCapture, startTestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { sandboxFault } from '../../helpers/checkout.ts';
import { runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

let database: TestDatabase;
let app: App;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) }, logs }));
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

async function metric(sample: string): Promise<number | undefined> {
  const line = (await app.inject({ method: 'GET', url: '/metrics' })).body.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

describe('an import', () => {
  it('logs one line with its counts and moves the settlement metrics', async () => {
    await setClock(app, new Date('2027-03-10T00:00:00Z'));
    await subscribe(app, {});
    await subscribe(app, { userId: 'u2' });
    await setClock(app, new Date('2027-04-10T00:00:00Z'));
    await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true, count: 1 });
    expect(await runPass(app)).toMatchObject({ unknown: 1, succeeded: 1 });

    const response = await importCsv(app, await sandboxSettlementFile(app));
    expect(response.json()).toMatchObject({ rows: 4, summary: { matched: 4 }, resolved: { payments: 1 } });
    const lines = logs.lines.filter((l) => l.msg === 'settlement file imported');
    expect(lines).toEqual([
      expect.objectContaining({ importId: response.json().id, rows: 4, newLines: 4, duplicateLines: 0, matched: 4, mismatched: 0, unmatched: 0, missing: 0 }),
    ]);
    expect(await metric('billing_settlement_lines_total{status="MATCHED"}')).toBe(4);
    expect(await metric('billing_settlement_lines_total{status="UNMATCHED"}')).toBe(0);
    expect(await metric('billing_settlement_resolved_total')).toBe(1);
  });
});
