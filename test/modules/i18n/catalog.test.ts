// The catalogs say the same things in both languages: a key, or a `{placeholder}` in a message, that exists in one
// language and not the other fails here (src/modules/i18n/catalog.ko.ts says why).
import { describe, expect, it } from 'vitest';
import { CATALOGS, LOCALES, fill, formatKoreaDate, formatKoreaDateTime, formatWonIn, translator, wordFor } from '../../../src/modules/i18n/messages.ts';

function flatten(node: unknown, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (typeof value === 'string') out.set(`${prefix}${key}`, value);
    else for (const [k, v] of flatten(value, `${prefix}${key}.`)) out.set(k, v);
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('message catalogs', () => {
  const flat = Object.fromEntries(LOCALES.map((locale) => [locale, flatten(CATALOGS[locale])])) as Record<string, Map<string, string>>;

  it('have the same keys in every language', () => {
    const [first, ...others] = LOCALES;
    for (const other of others) {
      const missingThere = [...flat[first]!.keys()].filter((k) => !flat[other]!.has(k));
      const missingHere = [...flat[other]!.keys()].filter((k) => !flat[first]!.has(k));
      expect({ [`only in ${first}`]: missingThere, [`only in ${other}`]: missingHere }).toEqual({ [`only in ${first}`]: [], [`only in ${other}`]: [] });
    }
  });

  it('use the same placeholders in every language, and no message is empty', () => {
    const differing: string[] = [];
    const empty: string[] = [];
    for (const [key, ko] of flat.ko!) {
      const en = flat.en!.get(key) ?? '';
      if (placeholders(ko).join() !== placeholders(en).join()) differing.push(key);
      if (ko.trim() === '' || en.trim() === '') empty.push(key);
    }
    expect({ differing, empty }).toEqual({ differing: [], empty: [] });
  });

  it('a key that is not a message, or a placeholder without a value, is an error, not a page with braces', () => {
    const t = translator('ko');
    expect(() => t('common' as never)).toThrow(/no message common in ko/);
    expect(() => t('words.interval.month')).toThrow(/placeholder \{count\}/);
    expect(t('words.interval.month', { count: 3 })).toBe('3개월마다');
    expect(fill('{a} and {a}', { a: 1 })).toBe('1 and 1');
  });
});

describe('money and Korea dates for people', () => {
  it('writes won as 9,900원 in Korean and 9,900 KRW in English', () => {
    expect(formatWonIn('ko', 9900)).toBe('9,900원');
    expect(formatWonIn('en', 1234567)).toBe('1,234,567 KRW');
    expect(formatWonIn('ko', 0)).toBe('0원');
    expect(formatWonIn('ko', null)).toBe('');
  });

  it('writes the Korea calendar day, also across the UTC day boundary', () => {
    // 2027-03-27T15:30Z is 00:30 on 28 March in Korea (UTC+9).
    expect(formatKoreaDate('ko', '2027-03-27T15:30:00Z')).toBe('2027년 3월 28일');
    expect(formatKoreaDate('en', '2027-03-27T15:30:00Z')).toBe('2027-03-28');
    expect(formatKoreaDateTime('ko', '2027-03-27T15:30:00Z')).toBe('2027년 3월 28일 00:30 KST');
    expect(formatKoreaDateTime('en', new Date('2027-12-31T14:59:00Z'))).toBe('2027-12-31 23:59 KST');
    expect(formatKoreaDate('en', 'not a date')).toBe('');
  });

  it('shows codes in words, and an unknown code as its group’s generic word', () => {
    expect(wordFor('ko', 'subscriptionStatus', 'PAST_DUE')).toBe('결제 실패(재시도 예정)');
    expect(wordFor('en', 'cancelReason', 'SOMETHING_NEW')).toBe('Cancelled');
    expect(wordFor('ko', 'attentionReason', null)).toBe('');
  });
});
