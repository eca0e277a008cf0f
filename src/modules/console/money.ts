// How the console writes an amount of money, in one place (docs/operating.md "Operator console"): whole won with
// thousands separators and the currency after it, "12,900 KRW", on every page, in every table, timeline, hint,
// search result, chart title and refusal. Formatting only: no rule reads these strings.

// As toLocaleString('en-US'): amounts are whole won; a fraction, were one ever passed, would show rather than be rounded away.
const grouped = new Intl.NumberFormat('en-US');

/** A number of won with thousands separators and no unit, "12,900": for table columns and axes headed "KRW". */
export function formatWonNumber(amount: number): string {
  return grouped.format(amount);
}

/** Won with thousands separators: "12,900 KRW"; "" for no amount. */
export function formatWon(amount: number | null | undefined): string {
  return amount === null || amount === undefined ? '' : `${formatWonNumber(amount)} KRW`;
}

/**
 * A refusal's message as the console shows it. The service's messages are the API's (the JSON `message`, unchanged);
 * the one that names an amount, AMOUNT_EXCEEDS_REMAINING's "At most 29000 can be refunded", is written here with
 * the amount formatted: "At most 29,000 KRW can be refunded". Any other message is shown as it is.
 */
export function refusalInWords(code: string | undefined, message: string): string {
  if (code !== 'AMOUNT_EXCEEDS_REMAINING') return message;
  return message.replace(/^At most (\d+) can be refunded/, (_all, remaining: string) => `At most ${formatWon(Number(remaining))} can be refunded`);
}
