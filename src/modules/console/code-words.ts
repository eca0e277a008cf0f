// How the console shows a code (a status, a cancel or attention reason, a payment's kind, a reconciliation line's
// status), in one place for every page: in English the code itself (PAST_DUE, SUCCEEDED: the API's, the exports' and
// the list filters' names, which operators, tests and programs read on the page), in any other language the catalog's
// word for it with the code kept beside it for the operator who compares with the API: "결제 완료 (SUCCEEDED)"; a code
// the catalog has no word for shows alone (an operator needs the code, never a generic word). The customer portal
// shows words only (i18n/messages.ts wordFor). Formatting only: no rule reads it.
import type { Catalog } from '../i18n/catalog.ko.ts';
import { CATALOGS, type Locale, type Speech } from '../i18n/messages.ts';

export type WordGroup = keyof Catalog['words'];

/** A code and its word as the page shows them; "" for no code. */
export function codeWithWord(locale: Locale, code: string | null | undefined, word: string): string {
  if (code === null || code === undefined || code === '') return '';
  if (locale === 'en' || word === code || word === '') return code;
  return `${word} (${code})`;
}

/** A code of one of the catalog's `words` groups as the console shows it (it.term in templates). */
export function termFor(locale: Locale, group: WordGroup, code: string | null | undefined): string {
  if (code === null || code === undefined) return '';
  return codeWithWord(locale, code, (CATALOGS[locale].words[group] as Record<string, string>)[code] ?? code);
}

/** termFor in a page's language. */
export const codeInWords = (speech: Pick<Speech, 'locale'>, group: WordGroup, code: string | null | undefined): string => termFor(speech.locale, group, code);
