// Settlement files for the reconciliation tests: the sandbox gateway's own export of its ledger (UTF-8 or CP949,
// Korean headers), and the admin routes that import and read them.
import type { App } from '../../src/app.ts';
import { adminHeaders } from './billing.ts';

export async function sandboxSettlementFile(app: App, options: { encoding?: 'utf-8' | 'cp949'; delimiter?: 'comma' | 'tab' } = {}): Promise<Buffer> {
  const response = await app.inject({
    method: 'GET',
    url: `/sandbox/_control/settlement.csv?encoding=${options.encoding ?? 'utf-8'}&delimiter=${options.delimiter ?? 'comma'}`,
  });
  if (response.statusCode !== 200) throw new Error(`settlement export answered ${response.statusCode}: ${response.body}`);
  return response.rawPayload;
}

export function importCsv(app: App, bytes: Buffer | string, query = '', headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: `/admin/settlement-imports${query ? `?${query}` : ''}`,
    headers: { ...adminHeaders, 'content-type': 'text/csv', ...headers },
    payload: bytes,
  });
}

/** A multipart/form-data body with the file as field `file` and the other fields, in the order given. */
export function importMultipart(app: App, parts: Array<{ name: string; value: string | Buffer; filename?: string }>, headers: Record<string, string> = {}) {
  const boundary = `----settlement${Math.random().toString(36).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename ? 'Content-Type: text/csv\r\n' : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return app.inject({
    method: 'POST',
    url: '/admin/settlement-imports',
    headers: { ...adminHeaders, 'content-type': `multipart/form-data; boundary=${boundary}`, ...headers },
    payload: Buffer.concat(chunks),
  });
}

export async function adminGet<T = Record<string, unknown>>(app: App, url: string): Promise<T> {
  const response = await app.inject({ method: 'GET', url, headers: adminHeaders });
  if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body}`);
  return response.json() as T;
}
