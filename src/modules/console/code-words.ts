// How the console's record pages show a code (a status, a cancel or attention reason, a payment's kind, a
// reconciliation line's status), in one place: in English the code itself (PAST_DUE, SUCCEEDED: the API's and the
// list filters' names, which operators, tests and programs read on the page), in any other language the catalog's
// word for it with the code kept beside it for the operator who compares with the API: "결제 완료 (SUCCEEDED)".
// Formatting only: no rule reads it.
import type { Catalog } from '../i18n/catalog.ko.ts';
import type { Locale, Speech } from '../i18n/messages.ts';

export type WordGroup = keyof Catalog['words'];

/** A code and its word as the page shows them; "" for no code. */
export function codeWithWord(locale: Locale, code: string | null | undefined, word: string): string {
  if (code === null || code === undefined || code === '') return '';
  if (locale === 'en' || word === code || word === '') return code;
  return `${word} (${code})`;
}

/** A code of one of the catalog's `words` groups (i18n/messages.ts wordFor) as the page shows it. */
export function codeInWords(speech: Pick<Speech, 'locale' | 'word'>, group: WordGroup, code: string | null | undefined): string {
  return codeWithWord(speech.locale, code, speech.word(group, code));
}
