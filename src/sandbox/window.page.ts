// The sandbox's hosted window: the terms the customer is asked to approve, and Approve / Decline buttons. Its
// escaping, style and hidden fields serve the Toss sandbox's window too (toss/toss-window.page.ts).
import type { WindowTerms } from './sandbox.state.ts';

export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#666}
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{font-size:1rem;padding:.6rem 1.4rem;border-radius:.4rem;border:1px solid #888;cursor:pointer}
#approve{background:#1a7f37;color:#fff;border-color:#1a7f37}.note{color:#666;font-size:.85rem;margin-top:2rem}`;

export function hiddenInputs(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
}

export function renderWindowPage(terms: WindowTerms, params: Record<string, string>, action: string): string {
  const rows: Array<[string, string]> = [
    ['Merchant', terms.merchantId],
    ['Item', terms.orderName],
    ['Amount', `${terms.amount.toLocaleString('en-US')} KRW`],
    ['Method', terms.method === 'CARD' ? 'Card' : 'Phone (carrier billing)'],
    ['Order', terms.orderId],
  ];
  if (terms.issueKeyOnly) rows.push(['Charged now', 'nothing (card check of 100 KRW, cancelled at once)']);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sandbox payment window</title><style>${STYLE}</style></head><body>
<h1>Sandbox payment window</h1>
<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>
<div class="actions">
<form method="post" action="${escapeHtml(action)}">${hiddenInputs(params)}<input type="hidden" name="decision" value="approve"><button id="approve" type="submit">Approve</button></form>
<form method="post" action="${escapeHtml(action)}">${hiddenInputs(params)}<input type="hidden" name="decision" value="decline"><button id="decline" type="submit">Decline</button></form>
</div><p class="note">This is the built-in sandbox gateway: no real money moves.</p></body></html>`;
}

/** Sends the browser on with a form POST (the gateway may deliver the result either way). */
export function renderAutoPost(target: string, fields: Record<string, string>): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Redirecting…</title></head>
<body onload="document.forms[0].submit()"><form method="post" action="${escapeHtml(target)}">${hiddenInputs(fields)}
<noscript><button type="submit">Continue</button></noscript></form></body></html>`;
}

export function renderWindowError(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Sandbox window error</title><style>${STYLE}</style></head>
<body><h1>The payment window cannot open</h1><p>${escapeHtml(message)}</p></body></html>`;
}

/** A result page's address: `target` with the window's fields added to its query (what it had is kept). */
export function withQuery(target: string, fields: Record<string, string>): string {
  const url = new URL(target);
  for (const [key, value] of Object.entries(fields)) url.searchParams.set(key, value);
  return url.toString();
}
