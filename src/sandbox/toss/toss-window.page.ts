// The Toss sandbox's billing-authentication window: the card the customer would register, and Approve / Decline.
// Approve sends the browser to successUrl with customerKey and a single-use authKey; Decline to failUrl with
// code and message (toss.routes.ts).
import { escapeHtml, hiddenInputs, STYLE } from '../window.page.ts';

export interface TossWindowTerms {
  clientKey: string;
  customerKey: string;
  successUrl: string;
  failUrl: string;
}

export function renderTossWindowPage(terms: TossWindowTerms, action: string): string {
  const fields = { ...terms };
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Toss sandbox: card registration</title><style>${STYLE}</style></head><body>
<h1>Toss sandbox: register a card for automatic payments</h1>
<dl><dt>Customer</dt><dd>${escapeHtml(terms.customerKey)}</dd><dt>Card</dt><dd>Sandbox credit card (no card number is asked)</dd></dl>
<div class="actions">
<form method="post" action="${escapeHtml(action)}">${hiddenInputs(fields)}<input type="hidden" name="decision" value="approve"><button id="approve" type="submit">Approve</button></form>
<form method="post" action="${escapeHtml(action)}">${hiddenInputs(fields)}<input type="hidden" name="decision" value="decline"><button id="decline" type="submit">Decline</button></form>
</div><p class="note">This is the built-in Toss sandbox: no card is registered and no money moves.</p></body></html>`;
}

export function renderTossWindowError(message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Toss sandbox window error</title><style>${STYLE}</style></head>
<body><h1>The card registration window cannot open</h1><p>${escapeHtml(message)}</p></body></html>`;
}
