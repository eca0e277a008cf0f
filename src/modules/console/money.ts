// How the console writes an amount of money, in one place (docs/operating.md "Operator console"): whole won with
// thousands separators and the currency after it, "12,900 KRW", on every page, in every table, timeline, hint,
// search result, chart title and refusal. Formatting only: no rule reads these strings.

import { formatWonIn, formatWonNumber } from '../i18n/messages.ts';

export { formatWonNumber };

/** Won with thousands separators: "12,900 KRW"; "" for no amount (the one formatter is i18n/messages.ts). */
export const formatWon = (amount: number | null | undefined): string => formatWonIn('en', amount);

/**
 * A refusal's message as the console shows it. The service's messages are the API's (the JSON `message`, unchanged);
 * a refusal that names an amount carries it as a number in `details` (AMOUNT_EXCEEDS_REMAINING: `remaining`), and
 * the console writes that sentence itself, with the amount formatted: "At most 29,000 KRW can be refunded". Any other
 * message is shown as it is.
 */
export function refusalInWords(error: { code?: string; message: string; details?: Record<string, unknown> }): string {
  const remaining = error.details?.remaining;
  if (error.code === 'AMOUNT_EXCEEDS_REMAINING' && typeof remaining === 'number') return `At most ${formatWon(remaining)} can be refunded`;
  return error.message;
}
