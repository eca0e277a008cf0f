// The console's language through its routes (no browser: test/e2e/console-pages.test.ts switches in Chromium):
// CONSOLE_LOCALE for the sign-in page and every session that chose nothing, the sign-in link's `?lang=` carried into
// the session, POST /console/locale keeping an operator's choice in their session (on the server: another process on
// the same table sees it), its CSRF token and where it answers back to, and every page of the console's frame in
// Korean with none of the English navigation, heading or button words left.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { termFor } from '../../../src/modules/console/code-words.ts';
import { refusalInWords } from '../../../src/modules/console/money.ts';
import { speech } from '../../../src/modules/i18n/messages.ts';
import { apiHeaders, buildTestApp, startTestApp, TEST_ADMIN_TOKEN } from '../../helpers/app.ts';
import { adminHeaders, subscribe } from '../../helpers/billing.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
/** CONSOLE_LOCALE=ko, listening (the sandbox gateway is reached over HTTP). */
let korean: App;
/** CONSOLE_LOCALE unset (English), on the same database and session keys. */
let english: App;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app: korean } = await startTestApp(database.url, { env: { CONSOLE_LOCALE: 'ko' } }));
  english = await buildTestApp(database.url);
});
afterAll(async () => {
  await english?.close();
  await korean?.close();
  await database?.drop();
});

const cookiesOf = (response: { headers: Record<string, unknown> }) =>
  ([] as string[])
    .concat((response.headers['set-cookie'] as string | string[] | undefined) ?? [])
    .map((line) => line.split(';')[0])
    .join('; ');

const langOf = (html: string) => /<html lang="([^"]+)">/.exec(html)?.[1];
const h1Of = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];
const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

/** Signs in as a browser would, from the sign-in page at `loginUrl` (its form, with its hidden fields). */
async function signIn(app: App, loginUrl = '/console/login', token = TEST_ADMIN_TOKEN) {
  const form = await app.inject({ method: 'GET', url: loginUrl });
  const csrfCookie = cookiesOf(form);
  const lang = field(form.body, 'lang');
  const response = await app.inject({
    method: 'POST',
    url: '/console/login',
    headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: field(form.body, '_csrf')!, token, ...(lang ? { lang } : {}) }).toString(),
  });
  return { response, cookie: [csrfCookie, cookiesOf(response)].filter(Boolean).join('; ') };
}

const get = (app: App, cookie: string, url: string) => app.inject({ method: 'GET', url, headers: { cookie } });

/** The language switch of a signed-in page, posted as its form would be (`_csrf` and `back` from the page). */
async function switchTo(app: App, cookie: string, page: string, locale: string, override: Record<string, string> = {}) {
  const html = (await get(app, cookie, page)).body;
  const form = html.slice(html.indexOf('action="/console/locale"'));
  return app.inject({
    method: 'POST',
    url: '/console/locale',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: field(form, '_csrf')!, back: field(form, 'back')!, locale, ...override }).toString(),
  });
}

describe('codes and refusals in words', () => {
  it('a code is itself in English (the API’s word), its catalog word with the code beside it in Korean, and itself alone when the catalog has none', () => {
    expect(termFor('en', 'paymentStatus', 'UNKNOWN')).toBe('UNKNOWN');
    expect(termFor('ko', 'paymentStatus', 'UNKNOWN')).toBe('결과 확인 중 (UNKNOWN)');
    expect(termFor('ko', 'reconciliationStatus', 'MISMATCHED')).toBe('불일치 (MISMATCHED)');
    expect(termFor('ko', 'attentionReason', 'A_CODE_NOT_IN_THE_CATALOG')).toBe('A_CODE_NOT_IN_THE_CATALOG');
    expect(termFor('ko', 'attentionReason', null)).toBe('');
  });

  it('a refusal naming an amount is written from the catalog with the amount in the page’s money; others are the service’s message', () => {
    const tooMuch = { code: 'AMOUNT_EXCEEDS_REMAINING', message: 'amount exceeds the remaining 20000', details: { remaining: 20_000 } };
    expect(refusalInWords(tooMuch, speech('en'))).toBe('At most 20,000 KRW can be refunded');
    expect(refusalInWords(tooMuch, speech('ko'))).toBe('최대 20,000원까지 환불할 수 있습니다');
    expect(refusalInWords({ code: 'NOT_DUE', message: 'Nothing is due' }, speech('ko'))).toBe('Nothing is due');
  });
});

describe('the sign-in page', () => {
  it('with CONSOLE_LOCALE=ko is Korean, links to itself in English, and a sign-in from either starts the session in its language', async () => {
    const page = await korean.inject({ method: 'GET', url: '/console/login?next=%2Fconsole%2Fpayments' });
    expect(langOf(page.body)).toBe('ko');
    expect(page.body).toContain('<label for="token">관리자 토큰</label>');
    expect(page.body).toContain('<button type="submit">로그인</button>');
    expect(page.body).not.toMatch(/Admin token|Sign in/);
    // Its switch is a link (no session to keep a choice in), keeping where sign-in goes next.
    expect(page.body).toContain('href="/console/login?lang=en&amp;next=%2Fconsole%2Fpayments" lang="en" hreflang="en">English</a>');

    const inEnglish = await korean.inject({ method: 'GET', url: '/console/login?lang=en' });
    expect(langOf(inEnglish.body)).toBe('en');
    expect(inEnglish.body).toContain('<label for="token">Admin token</label>');
    expect(inEnglish.body).toContain('href="/console/login?lang=ko" lang="ko" hreflang="ko">한국어</a>');

    const fromEnglish = await signIn(korean, '/console/login?lang=en');
    expect(fromEnglish.response.statusCode).toBe(303);
    const home = await get(korean, fromEnglish.cookie, '/console');
    expect([langOf(home.body), h1Of(home.body)]).toEqual(['en', 'Needs attention']);

    const plain = await signIn(korean);
    const homeKo = await get(korean, plain.cookie, '/console');
    expect([langOf(homeKo.body), h1Of(homeKo.body)]).toEqual(['ko', '확인 필요']);
  });

  it('a wrong token is refused in the page’s language', async () => {
    const ko = await signIn(korean, '/console/login', 'not_the_admin_token_0123456789');
    expect(ko.response.statusCode).toBe(401);
    expect(ko.response.body).toContain('<p class="error" role="alert">관리자 토큰이 올바르지 않습니다.</p>');
    const en = await signIn(korean, '/console/login?lang=en', 'not_the_admin_token_0123456789');
    expect(en.response.body).toContain('That admin token is not valid.');
    expect(langOf(en.response.body)).toBe('en');
  });

  it('with CONSOLE_LOCALE unset is English, and ?lang=ko shows it in Korean', async () => {
    const page = await english.inject({ method: 'GET', url: '/console/login' });
    expect(langOf(page.body)).toBe('en');
    expect(h1Of(page.body)).toBe('Sign in');
    const inKorean = await english.inject({ method: 'GET', url: '/console/login?lang=ko' });
    expect([langOf(inKorean.body), h1Of(inKorean.body)]).toEqual(['ko', '로그인']);
    expect((await english.inject({ method: 'GET', url: '/console/login?lang=fr' })).statusCode).toBe(400);
  });
});

describe('POST /console/locale', () => {
  it('keeps the choice in the session, on the server: every page after it speaks it, other sessions do not', async () => {
    const alice = await signIn(english);
    const bob = await signIn(english);
    const switched = await switchTo(english, alice.cookie, '/console/payments?status=SUCCEEDED', 'ko');
    expect(switched.statusCode).toBe(303);
    expect(switched.headers.location).toBe('/console/payments?status=SUCCEEDED');
    for (const url of ['/console/payments?status=SUCCEEDED', '/console/reports', '/console/search?q=x']) {
      expect(langOf((await get(english, alice.cookie, url)).body), url).toBe('ko');
    }
    expect(langOf((await get(english, bob.cookie, '/console')).body)).toBe('en');
    // A page no route has is the operator's too: their language, and the switch.
    const missing = await get(english, alice.cookie, '/console/no-such-page');
    expect([missing.statusCode, langOf(missing.body), h1Of(missing.body)]).toEqual([404, 'ko', '찾을 수 없습니다']);
    expect(missing.body).toContain('action="/console/locale"');
    // Another process on the same table (CONSOLE_LOCALE=ko) reads the same choices: the session holds them.
    await switchTo(english, bob.cookie, '/console', 'en');
    expect(langOf((await get(korean, alice.cookie, '/console')).body)).toBe('ko');
    expect(langOf((await get(korean, bob.cookie, '/console')).body)).toBe('en');
    // And back: a second switch to the same language changes nothing and answers the same.
    for (const attempt of [1, 2]) {
      const back = await switchTo(english, alice.cookie, '/console/reports', 'en');
      expect([back.statusCode, back.headers.location], `attempt ${attempt}`).toEqual([303, '/console/reports']);
    }
    expect(langOf((await get(english, alice.cookie, '/console/reports')).body)).toBe('en');
  });

  it('answers back to a console page only, needs the page’s CSRF token and a session, and knows two languages', async () => {
    const { cookie } = await signIn(english);
    for (const back of ['https://elsewhere.example/console', '//elsewhere.example/console', '/console/../admin/payments', '/admin']) {
      const response = await switchTo(english, cookie, '/console', 'en', { back });
      expect([response.statusCode, response.headers.location], back).toEqual([303, '/console']);
    }
    const forged = await switchTo(english, cookie, '/console', 'ko', { _csrf: 'forged' });
    expect(forged.statusCode).toBe(403);
    expect(langOf((await get(english, cookie, '/console')).body)).toBe('en');
    expect((await switchTo(english, cookie, '/console', 'fr')).statusCode).toBe(400);

    const anonymous = await english.inject({
      method: 'POST',
      url: '/console/locale',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'locale=ko&_csrf=x',
    });
    expect([anonymous.statusCode, anonymous.headers.location]).toEqual([303, '/console/login']);
  });
});

/** The English words of the console's navigation, headings, buttons and labels: none may remain on a Korean page. */
const ENGLISH = [
  'Needs attention',
  'Subscriptions',
  'Subscription',
  'Payments',
  'Payment',
  'Reconciliation',
  'Reports',
  'Search',
  'Sign in',
  'Sign out',
  'Signed in as',
  'Admin token',
  'Skip to content',
  'Times in',
  'Filter',
  'Show',
  'Status',
  'Amount',
  'Method',
  'Kind',
  'Created',
  'Interval',
  'Next page',
  'First page',
  'Export',
  'Rows per page',
  'Any',
  'Month',
  'Revenue',
  'Recovery',
  'Churn',
  'What',
  'Why',
  'Since',
  'Nothing',
  'Not found',
  'Not done',
  'Back',
  'Refund',
  'Disabled',
  'Settlement line',
  'Webhook endpoint',
];

/** What a reader sees or hears of a page: its text (tags removed, the <title> included) and its labels, placeholders and titles. */
function readable(html: string): string {
  const attributes = [...html.matchAll(/\s(?:aria-label|placeholder|title)="([^"]*)"/g)].map((m) => m[1]);
  return [html.replace(/<[^>]+>/g, ' '), ...attributes].join(' ');
}

describe('the console’s frame in Korean', () => {
  it('every page says its words in Korean: navigation, headings, buttons, labels, statuses and money (9,900원)', async () => {
    await subscribe(korean, { userId: 'user-ko', amount: 9900 });
    // Needs attention gets rows: a settlement line no payment matches, and a disabled webhook endpoint.
    const file = '거래번호,주문번호,거래구분,거래금액,거래일시\r\nT-KO-UNMATCHED-1,O-KO-1,승인,30000,20270309100000\r\n';
    const imported = await korean.inject({
      method: 'POST',
      url: '/admin/settlement-imports',
      headers: { ...adminHeaders, 'content-type': 'text/csv', 'idempotency-key': 'ko-import' },
      payload: file,
    });
    expect(imported.statusCode).toBe(201);
    const endpoint = await korean.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { ...apiHeaders, 'idempotency-key': 'ko-endpoint' },
      payload: { url: 'https://hooks.example.test/ko' },
    });
    const endpointId = (endpoint.json() as { id: string }).id;
    const disabled = await korean.inject({
      method: 'PATCH',
      url: `/api/v1/webhook-endpoints/${endpointId}`,
      headers: apiHeaders,
      payload: { status: 'DISABLED' },
    });
    expect(disabled.statusCode).toBe(200);

    const { cookie } = await signIn(korean);
    const pages: Array<[string, number, string | undefined]> = [
      ['/console', 200, '확인 필요'],
      ['/console/subscriptions', 200, '구독'],
      ['/console/subscriptions?status=CANCELED', 200, '구독'],
      ['/console/payments', 200, '결제'],
      ['/console/payments?status=LOST', 400, '처리하지 못함'],
      ['/console/reports', 200, '보고서'],
      ['/console/search', 200, '검색'],
      ['/console/search?q=user-ko', 200, '검색'],
      ['/console/search?q=T-KO-UNMATCHED-1', 200, '검색'],
      ['/console/search?q=nothing-has-this', 200, '검색'],
      [`/console/search?q=${endpointId}`, 200, '검색'],
    ];
    const seen = new Map<string, string>();
    for (const [url, status, heading] of pages) {
      const response = await get(korean, cookie, url);
      expect(response.statusCode, url).toBe(status);
      expect(langOf(response.body), url).toBe('ko');
      expect(h1Of(response.body), url).toBe(heading);
      const text = readable(response.body);
      expect(
        ENGLISH.filter((word) => new RegExp(`\\b${word}\\b`).test(text)),
        url,
      ).toEqual([]);
      seen.set(url, text);
    }
    // A page no route has, and the sign-in page, outside the session: CONSOLE_LOCALE's language.
    for (const url of ['/console/no-such-page', '/console/login']) {
      const response = await korean.inject({ method: 'GET', url });
      expect(langOf(response.body), url).toBe('ko');
      expect(
        ENGLISH.filter((word) => new RegExp(`\\b${word}\\b`).test(readable(response.body))),
        url,
      ).toEqual([]);
    }

    const layout = seen.get('/console')!;
    for (const word of ['확인 필요', '구독', '결제', '정산 대사', '보고서', '로그아웃', 'English', '시간은 한국 표준시(KST, Asia/Seoul) 기준입니다']) {
      expect(layout, word).toContain(word);
    }
    // Codes in words: the unmatched settlement line and the endpoint the merchant disabled; money in won.
    expect(layout).toContain('대응 결제 없음');
    expect(layout).toContain('판매자가 중지');
    expect(layout).toContain('T-KO-UNMATCHED-1 · 30,000원');
    expect(seen.get('/console/subscriptions')).toMatch(/카드 \(CARD\)\s+다날 \(DANAL\)\s+이용 중 \(ACTIVE\)\s+9,900원\s+매월/);
    expect(seen.get('/console/payments')).toMatch(/첫 결제 \(INITIAL\)\s+카드 \(CARD\)\s+다날 \(DANAL\)\s+9,900원\s+결제 완료 \(SUCCEEDED\)/);
    expect(seen.get('/console/search?q=user-ko')).toContain('이용 중 (ACTIVE) · user-ko');
    expect(seen.get('/console/search?q=T-KO-UNMATCHED-1')).toContain('승인 (APPROVAL) · 30,000원');
    expect(seen.get('/console/reports')).toContain('월별 MRR 변동');
  });
});
