// How the console writes an amount of money, in one place (docs/console.md "Operator console"): whole won with
// thousands separators and the currency, "12,900 KRW" in English and "12,900원" in Korean (i18n/messages.ts
// formatWonIn; a page's it.won speaks the page's language), on every page, in every table, timeline, hint, search
// result, chart title and refusal. Formatting only: no rule reads these strings.

import { formatWonIn, formatWonNumber, type Speech } from '../i18n/messages.ts';

export { formatWonNumber };

/** Won in English: "12,900 KRW"; "" for no amount (the one formatter is i18n/messages.ts). */
export const formatWon = (amount: number | null | undefined): string => formatWonIn('en', amount);

/**
 * A refusal's message as the console shows it. The service's messages are the API's (the JSON `message`, unchanged,
 * English); a refusal that names an amount carries it as a number in `details` (AMOUNT_EXCEEDS_REMAINING:
 * `remaining`), and the console writes that sentence itself from the catalog, in the page's language, with the
 * amount formatted: "At most 29,000 KRW can be refunded" / "최대 29,000원까지 환불할 수 있습니다". Any other message is
 * shown as it is.
 */
export function refusalInWords(error: { code?: string; message: string; details?: Record<string, unknown> }, says: Speech): string {
  const remaining = error.details?.remaining;
  if (error.code === 'AMOUNT_EXCEEDS_REMAINING' && typeof remaining === 'number') {
    return says.t('console.frame.error.refundAtMost', { amount: says.money(remaining) });
  }
  return error.message;
}
