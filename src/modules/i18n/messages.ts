// How a page says things in the reader's language (docs/console.md "Operator console"): the catalogs
// (catalog.ko.ts, catalog.en.ts), a translator for one language, and the one place money and Korea dates are
// written for people. Formatting only: no rule reads these strings. The API's own messages stay English and
// unchanged; pages write their sentences from the catalog.
import { KOREA_ZONE } from '../../lib/calendar.ts';
import { type Catalog, ko } from './catalog.ko.ts';
import { en } from './catalog.en.ts';

export const LOCALES = ['ko', 'en'] as const;
export type Locale = (typeof LOCALES)[number];
export const CATALOGS: Record<Locale, Catalog> = { ko, en };

export const isLocale = (value: unknown): value is Locale => value === 'ko' || value === 'en';

/** Every key of a catalog, dot-separated: 'portal.overview.heading'. */
type Keys<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${Prefix}${K}` : Keys<T[K], `${Prefix}${K}.`>;
}[keyof T & string];
export type MessageKey = Keys<Catalog>;
export type Params = Record<string, string | number>;

/** The string at a key, or undefined when the key names a section or nothing. */
export function lookup(catalog: Catalog, key: string): string | undefined {
  let node: unknown = catalog;
  for (const part of key.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'string' ? node : undefined;
}

/** Fills `{name}` placeholders; a placeholder without a value is an error (a test then fails, never a page with braces). */
export function fill(text: string, params: Params = {}): string {
  return text.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`message placeholder {${name}} has no value`);
    return String(value);
  });
}

export type Translate = (key: MessageKey, params?: Params) => string;

export function translator(locale: Locale): Translate {
  const catalog = CATALOGS[locale];
  return (key, params) => {
    const text = lookup(catalog, key);
    if (text === undefined) throw new Error(`no message ${key} in ${locale}`);
    return fill(text, params);
  };
}

/**
 * A code in words (a status, a cancel or attention reason, an interval unit), from the catalog's `words` section;
 * a code the catalog does not know yet shows the group's UNSPECIFIED word where it has one, never the raw code to a
 * customer (a test lists every code the service writes).
 */
export function wordFor(locale: Locale, group: keyof Catalog['words'], code: string | null | undefined): string {
  if (code === null || code === undefined) return '';
  const words = CATALOGS[locale].words[group] as Record<string, string>;
  return words[code] ?? words.UNSPECIFIED ?? code;
}

// Amounts are whole won; a fraction, were one ever passed, would show rather than be rounded away.
const grouped = new Intl.NumberFormat('en-US');

/** Won with thousands separators and no unit, "12,900": for columns and axes headed with the unit. */
export const formatWonNumber = (amount: number): string => grouped.format(amount);

/** Won for people: "9,900원" in Korean, "9,900 KRW" in English; "" for no amount. */
export function formatWonIn(locale: Locale, amount: number | null | undefined): string {
  if (amount === null || amount === undefined) return '';
  return locale === 'ko' ? `${formatWonNumber(amount)}원` : `${formatWonNumber(amount)} KRW`;
}

const parts = new Intl.DateTimeFormat('en-US', {
  timeZone: KOREA_ZONE,
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  hourCycle: 'h23',
});

type KoreaParts = Readonly<Record<'year' | 'month' | 'day' | 'hour' | 'minute', number>>;

/**
 * formatToParts is the costly step of a page's dates (a page shows the same instants on every visit): its answer for
 * an instant never changes, so it is kept by the instant's milliseconds, up to KOREA_PARTS_KEPT of them (then started
 * over). Formatting only: nothing here is money state.
 */
const KOREA_PARTS_KEPT = 10_000;
const koreaPartsOf = new Map<number, KoreaParts>();

function koreaParts(value: Date | string): KoreaParts | undefined {
  const ms = (value instanceof Date ? value : new Date(value)).getTime();
  if (Number.isNaN(ms)) return undefined;
  let found = koreaPartsOf.get(ms);
  if (!found) {
    const out: Record<string, number> = {};
    for (const p of parts.formatToParts(ms)) if (p.type !== 'literal') out[p.type] = Number(p.value);
    found = out as KoreaParts;
    if (koreaPartsOf.size >= KOREA_PARTS_KEPT) koreaPartsOf.clear();
    koreaPartsOf.set(ms, found);
  }
  return found;
}

const dateOf = (locale: Locale, p: KoreaParts) => (locale === 'ko' ? `${p.year}년 ${p.month}월 ${p.day}일` : `${p.year}-${two(p.month)}-${two(p.day)}`);

const two = (n: number) => String(n).padStart(2, '0');

/** The Korea calendar day of an instant: "2027년 3월 28일" in Korean, "2027-03-28" in English; "" for none. */
export function formatKoreaDate(locale: Locale, value: Date | string | null | undefined): string {
  const p = value === null || value === undefined ? undefined : koreaParts(value);
  return p ? dateOf(locale, p) : '';
}

/** An instant in Korea time with the zone named: "2027년 3월 28일 14:05 KST" / "2027-03-28 14:05 KST"; "" for none. */
export function formatKoreaDateTime(locale: Locale, value: Date | string | null | undefined): string {
  const p = value === null || value === undefined ? undefined : koreaParts(value);
  return p ? `${dateOf(locale, p)} ${two(p.hour)}:${two(p.minute)} KST` : '';
}

/** What a page template receives to speak one language: `t`, the language, and the formatters bound to it. */
export interface Speech {
  locale: Locale;
  t: Translate;
  word: (group: keyof Catalog['words'], code: string | null | undefined) => string;
  money: (amount: number | null | undefined) => string;
  date: (value: Date | string | null | undefined) => string;
  dateTime: (value: Date | string | null | undefined) => string;
}

export function speech(locale: Locale): Speech {
  return {
    locale,
    t: translator(locale),
    word: (group, code) => wordFor(locale, group, code),
    money: (amount) => formatWonIn(locale, amount),
    date: (value) => formatKoreaDate(locale, value),
    dateTime: (value) => formatKoreaDateTime(locale, value),
  };
}
