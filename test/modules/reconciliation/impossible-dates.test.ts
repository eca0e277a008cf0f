// A day that is not on the calendar (2026-02-30) in a reconciliation query or an import's coverage is the caller's
// error, a 400 naming it, never a 500 from the database; and an import's coverage can never hold one.
import { describe, expect, it } from 'vitest';
import { adminHeaders } from '../../helpers/billing.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { importCsv, importMultipart } from '../../helpers/settlement.ts';

const running = useRunningApp({ CLOCK: 'simulated' });

const FILE = 'transactionId,orderId,type,amount,tradedAt\n';

describe('days that are not on the calendar', () => {
  it('are refused with 400 by the reconciliation list and summary', async () => {
    for (const url of ['/admin/reconciliation/summary?from=2026-02-30&to=2026-03-01', '/admin/reconciliation?from=2026-02-01&to=2026-13-01']) {
      const response = await running.app.inject({ method: 'GET', url, headers: adminHeaders });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('are refused with 400 as an import’s coverage, raw or multipart, and nothing is stored', async () => {
    const raw = await importCsv(running.app, FILE, 'from=2026-02-01&to=2026-02-30', { 'idempotency-key': 'raw-day' });
    expect(raw.statusCode, raw.body).toBe(400);
    expect(raw.json().code).toBe('VALIDATION_ERROR');
    const multipart = await importMultipart(
      running.app,
      [
        { name: 'from', value: '2026-02-31' },
        { name: 'to', value: '2026-03-01' },
        { name: 'file', value: FILE, filename: 'empty.csv' },
      ],
      { 'idempotency-key': 'multipart-day' },
    );
    expect(multipart.statusCode, multipart.body).toBe(400);
    expect(multipart.json().message).toContain('2026-02-31');
    expect(await running.app.db.settlementImport.count()).toBe(0);
  });
});
