// The default RETURN_URL: a small page that tells the customer the outcome in plain words.
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const MESSAGES: Record<string, [string, string]> = {
  success: ['All set', 'Your payment method is registered and your payment went through. You can close this page.'],
  INVALID_STATE: ['This link is no longer valid', 'Nothing was charged. Please start again from the merchant’s site.'],
  STATE_EXPIRED: ['This link has expired', 'Nothing was charged. Please start again from the merchant’s site.'],
  WINDOW_FAILED: ['The payment was not completed', 'You left the payment window or it was declined. Nothing was charged.'],
  GATEWAY_DECLINED: ['The payment was declined', 'Your card or phone carrier declined the payment. Nothing was charged.'],
  ORDER_MISMATCH: ['Something did not match', 'Nothing was charged. Please start again from the merchant’s site.'],
  AMOUNT_MISMATCH: ['Something did not match', 'Nothing was charged. Please start again from the merchant’s site.'],
  GATEWAY_UNAVAILABLE: ['Please try again', 'We could not reach the payment service. Nothing was charged; reload this page to try again.'],
  PAYMENT_OUTCOME_UNKNOWN: [
    'We are checking your payment',
    'We could not confirm the result with the payment service. We will check it; you will not be charged twice.',
  ],
  STATE_CONFLICT: ['Still working', 'Your payment is still being processed. Reload this page in a moment.'],
};

export function renderResultPage(query: Record<string, string | undefined>): string {
  const key = query.status === 'success' ? 'success' : (query.code ?? 'WINDOW_FAILED');
  const [title, text] = MESSAGES[key] ?? ['The payment was not completed', 'Nothing was charged.'];
  const reference = query.registrationId ?? query.orderId;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:30rem;margin:4rem auto;padding:0 1rem;color:#222}
.ref{color:#777;font-size:.85rem}</style></head><body><h1 id="outcome" data-status="${escapeHtml(query.status ?? 'failed')}">${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>${reference ? `<p class="ref">Reference: ${escapeHtml(reference)}</p>` : ''}</body></html>`;
}
