// The console's lists, Reconciliation and Reports pages in a real browser (headless Chromium from Debian's `chromium`
// package, driven by playwright-core, as test/e2e/browser.test.ts): a list filtered and paged, a settlement file made
// by the sandbox's own export uploaded and its summary shown, the reports' chart and a table whose numbers are
// GET /admin/reports/mrr's, the exports answering CSV with a BOM. Every page is checked with axe-core (injected from
// node_modules) and every request the pages make is recorded: none may leave the service's origin. In Korean too: the
// language switch on a page, kept in the session from page to page, and the sign-in page's link to Korean.
// Without Chromium these tests are skipped with a note; .ci/run sets REQUIRE_BROWSER_TESTS=1, which turns a missing
// Chromium into a failure, so CI always runs them.
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { formatKst } from '../../src/modules/console/korea-time.ts';
import type { MrrMonth } from '../../src/modules/reports/mrr-report.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { adminHeaders, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { adminGet, sandboxSettlementFile } from '../helpers/settlement.ts';
import { browserTests, expectAccessible, expectFitsWindow, signInToConsole } from '../helpers/browser.ts';

const OPERATOR = 'bora';
const kst = (local: string) => new Date(`${local}+09:00`);

let app: App;
let baseUrl: string;
let browser: Browser;
/** Every URL any console page asked for, across the file: checked against the service's origin at the end. */
const requested: string[] = [];

interface Sub {
  id: string;
  status: string;
  method: string;
  createdAt: string;
}
interface Pay {
  id: string;
  status: string;
  createdAt: string;
  subscriptionId?: string;
}

const adminPost = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': randomUUID() }, payload });

/**
 * Five subscriptions over five months of the simulated clock (2026-07 to 2026-11, Korea time): monthly charges, one
 * paused in September, one canceled in October, so the MRR report moves in several ways and the lists have pages.
 */
async function seedHistory() {
  await setClock(app, kst('2026-07-03T10:00:00'));
  const ids: string[] = [];
  for (const [i, amount] of [9900, 12900, 29000, 4900, 15000].entries()) ids.push(await subscribe(app, { userId: `pages-user-${i}`, amount }));
  for (const month of ['08', '09', '10', '11']) {
    await setClock(app, kst(`2026-${month}-03T12:00:00`));
    await runPass(app);
    if (month === '09') expect((await adminPost(`/admin/subscriptions/${ids[1]}/pause`, { reason: 'customer asked' })).statusCode).toBe(200);
    if (month === '10') expect((await adminPost(`/admin/subscriptions/${ids[2]}/cancel`, { reason: 'customer left' })).statusCode).toBe(200);
  }
  await setClock(app, kst('2026-11-20T09:00:00'));
}

browserTests('console pages browser tests', { env: { CLOCK: 'simulated', ADMIN_TOKENS: `${OPERATOR}:${TEST_ADMIN_TOKEN}` } }, async (run) => {
  ({ app, baseUrl, browser } = run);
  await seedHistory();
});

const signedIn = (viewport?: { width: number; height: number }) => signInToConsole(browser, baseUrl, { viewport, requested });

/** axe-core in the page: no serious or critical violation. */
/** The page names its time zone once (the layout's "Times in KST (Asia/Seoul)"), nowhere else. */
async function expectZoneNamedOnce(page: Page) {
  // Identifiers are left out: they are shown in <code> and carried in links' and forms' attributes, never a time, and a
  // random one may hold the letters "KST" (the sandbox's transaction ids draw 17 characters from an alphabet of 32: on
  // a page of them, about one run in a hundred). So only the page's text outside <code> is read.
  const text = (await page.content()).replace(/<code>[^<]*<\/code>/g, '<code></code>').replace(/<[^>]*>/g, ' ');
  expect(text.match(/KST|Asia\/Seoul/g)).toEqual(['KST', 'Asia/Seoul']);
}

/** The first cell's link targets of the list's table, in order. */
async function rowLinks(page: Page): Promise<string[]> {
  return page.locator('table tbody tr td:first-child a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
}

/** A link of the page fetched with the page's own session (its cookies), as a click would. */
async function fetchLink(context: BrowserContext, page: Page, name: string) {
  const href = await page.getByRole('link', { name, exact: true }).getAttribute('href');
  expect(href).toBeTruthy();
  const response = await context.request.get(new URL(href!, baseUrl).toString());
  return { href: href!, status: response.status(), type: response.headers()['content-type'], text: (await response.body()).toString('utf8') };
}

function csvLines(text: string): string[] {
  expect(text.charCodeAt(0)).toBe(0xfeff);
  return text.slice(1).split('\r\n').filter(Boolean);
}

describe('Subscriptions and Payments lists', () => {
  it('filter by the admin filters, page with a next link that keeps them, link each row to its page, and show Korea time', async () => {
    const { context, page } = await signedIn();
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Subscriptions', exact: true }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Subscriptions');
      await expectZoneNamedOnce(page);
      const everything = await adminGet<{ items: Sub[] }>(app, '/admin/subscriptions?limit=100');
      expect(everything.items).toHaveLength(5);
      // All five, newest first, each linking to its Subscription page.
      expect(await rowLinks(page)).toEqual(everything.items.map((s) => `/console/subscriptions/${s.id}`));
      await expectAccessible(page);

      // A filter (status ACTIVE) and two rows per page: the first page, then the next one with the same filter.
      await page.getByLabel('Status').selectOption('ACTIVE');
      await page.getByLabel('Rows per page').fill('2');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=ACTIVE/);
      const active = everything.items.filter((s) => s.status === 'ACTIVE');
      expect(active).toHaveLength(3);
      expect(await rowLinks(page)).toEqual(active.slice(0, 2).map((s) => `/console/subscriptions/${s.id}`));
      await page.getByRole('link', { name: 'Next page' }).click();
      await page.waitForURL(/cursor=/);
      expect(new URL(page.url()).searchParams.get('status')).toBe('ACTIVE');
      expect(await rowLinks(page)).toEqual(active.slice(2).map((s) => `/console/subscriptions/${s.id}`));
      expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
      // The status select still shows the filter on the next page.
      await expect(page.getByLabel('Status').inputValue()).resolves.toBe('ACTIVE');

      // The whole filtered list as CSV: BOM, the JSON field names, UTC times, every ACTIVE one (not one page).
      const csv = await fetchLink(context, page, 'Export CSV');
      expect(csv.status).toBe(200);
      expect(csv.type).toBe('text/csv; charset=utf-8');
      const [header, ...rows] = csvLines(csv.text);
      expect(header!.split(',').slice(0, 4)).toEqual(['id', 'userId', 'method', 'status']);
      expect(header).toContain('billingKey.cardNumber');
      expect(header).toContain('billingKey.gateway');
      expect(rows.map((r) => r.split(',')[0])).toEqual(active.map((s) => s.id));
      const createdAt = header!.split(',').indexOf('createdAt');
      expect(rows.map((r) => r.split(',')[createdAt])).toEqual(active.map((s) => s.createdAt));
      expect(csv.text).not.toContain(TEST_ADMIN_TOKEN);

      // A row's link opens its Subscription page.
      await page.getByRole('link', { name: `Subscription ${active[2]!.id}` }).click();
      await page.waitForURL(`${baseUrl}/console/subscriptions/${active[2]!.id}`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/^Subscription/);
    } finally {
      await context.close();
    }
  });

  it('payments: a status filter and a next page, rows linking to the Payment and Subscription pages, times in Korea time', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/payments`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Payments');
      await expectZoneNamedOnce(page);
      await expectAccessible(page);
      const succeeded = (await adminGet<{ items: Pay[] }>(app, '/admin/payments?status=SUCCEEDED&limit=100')).items;
      expect(succeeded.length).toBeGreaterThan(10);

      await page.getByLabel('Status').selectOption('SUCCEEDED');
      await page.getByLabel('Rows per page').fill('10');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=SUCCEEDED/);
      expect(await rowLinks(page)).toEqual(succeeded.slice(0, 10).map((p) => `/console/payments/${p.id}`));
      // Created, in Korea time, as the layout names it (KST once, in the header).
      const firstCreated = page.locator('table tbody tr').first().locator('td').last();
      await expect(firstCreated.textContent()).resolves.toBe(formatKst(succeeded[0]!.createdAt));
      await expect(firstCreated.locator('time').getAttribute('datetime')).resolves.toBe(succeeded[0]!.createdAt);
      await expect(
        page
          .getByRole('link', { name: `Subscription ${succeeded[0]!.subscriptionId}` })
          .first()
          .getAttribute('href'),
      ).resolves.toBe(`/console/subscriptions/${succeeded[0]!.subscriptionId}`);

      await page.getByRole('link', { name: 'Next page' }).click();
      await page.waitForURL(/cursor=/);
      expect(await rowLinks(page)).toEqual(succeeded.slice(10, 20).map((p) => `/console/payments/${p.id}`));

      const csv = await fetchLink(context, page, 'Export CSV');
      expect(csv.type).toBe('text/csv; charset=utf-8');
      const [header, ...rows] = csvLines(csv.text);
      expect(header!.split(',')).toContain('transactionId');
      expect(rows).toHaveLength(succeeded.length);
      expect(rows.every((r) => r.includes(',SUCCEEDED,'))).toBe(true);
      const gateway = header!.split(',').indexOf('gateway');
      expect(new Set(rows.map((r) => r.split(',')[gateway]))).toEqual(new Set(['DANAL']));

      // The gateway filter, a plain form like the others: every payment here is Danal's, none Toss's.
      await page.getByLabel('Gateway', { exact: true }).selectOption('TOSS');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/gateway=TOSS/);
      await expect(page.getByText('No payment matches these filters.').count()).resolves.toBe(1);
      await expect(page.getByLabel('Gateway', { exact: true }).inputValue()).resolves.toBe('TOSS');
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });

  it('a filter the admin route refuses is refused here too, in words', async () => {
    const { context, page } = await signedIn();
    try {
      const response = await page.goto(`${baseUrl}/console/payments?status=LOST`);
      expect(response?.status()).toBe(400);
      await expect(page.getByRole('alert').textContent()).resolves.toContain('status');
    } finally {
      await context.close();
    }
  });
});

describe('Reconciliation', () => {
  it('uploads the sandbox’s settlement export as the operator, shows its summary and lines, and exports them as CSV', async () => {
    const { context, page } = await signedIn();
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Reconciliation', exact: true }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Reconciliation');
      await expectZoneNamedOnce(page);
      await expectAccessible(page);

      const file = await sandboxSettlementFile(app, { encoding: 'cp949' });
      await page.getByLabel('Settlement file', { exact: true }).setInputFiles({ name: 'statement.csv', mimeType: 'text/csv', buffer: file });
      await page.getByRole('button', { name: 'Import', exact: true }).click();
      await page.waitForURL(/\/console\/reconciliation\?import=/);

      const importId = new URL(page.url()).searchParams.get('import')!;
      const stored = await adminGet<{ filename: string; rows: number; encoding: string; summary: Record<string, number> }>(
        app,
        `/admin/settlement-imports/${importId}`,
      );
      expect(stored).toMatchObject({ filename: 'statement.csv', encoding: 'CP949' });
      expect(stored.rows).toBeGreaterThan(10);
      expect(stored.summary.matched).toBe(stored.rows);
      const summary = page.getByRole('region', { name: 'Import statement.csv' });
      for (const [label, value] of [
        ['Encoding', 'CP949'],
        ['Matched', String(stored.summary.matched)],
        ['Mismatched', '0'],
        ['Unmatched', '0'],
        ['Missing', '0'],
      ]) {
        await expect(summary.locator(`dt:text-is("${label}") + dd`).textContent()).resolves.toBe(value);
      }
      // The operator is named on the import's audit entry.
      const audit = await adminGet<{ items: Array<{ actor: string; action: string }> }>(app, `/admin/audit?entityType=settlement_import&entityId=${importId}`);
      expect(audit.items).toEqual([expect.objectContaining({ actor: `admin:${OPERATOR}`, action: 'settlement_import.create' })]);

      // Lines of the file's coverage, matched, two per page.
      await page.getByLabel('Status').selectOption('MATCHED');
      await page.getByLabel('Rows per page').fill('2');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=MATCHED/);
      expect(await page.locator('table caption:text-is("Reconciliation lines, newest trade first") ~ tbody tr').count()).toBe(2);
      await page.getByRole('link', { name: 'Next page' }).click();
      await page.waitForURL(/cursor=/);
      expect(new URL(page.url()).searchParams.get('import')).toBe(importId);
      await expectAccessible(page);

      const csv = await fetchLink(context, page, 'Export CSV');
      expect(csv.type).toBe('text/csv; charset=utf-8');
      const [header, ...rows] = csvLines(csv.text);
      expect(header!.split(',').slice(0, 3)).toEqual(['id', 'source', 'status']);
      expect(rows).toHaveLength(stored.rows);
    } finally {
      await context.close();
    }
  });

  it('a file with an invalid row is refused with its line, and nothing is stored', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/reconciliation`);
      const before = (await adminGet<{ items: unknown[] }>(app, '/admin/settlement-imports')).items.length;
      const bad = Buffer.from('거래번호,주문번호,거래구분,금액,거래일시\ntx-1,order-1,승인,not-a-number,20261101120000\n', 'utf8');
      await page.getByLabel('Settlement file', { exact: true }).setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: bad });
      await page.getByRole('button', { name: 'Import', exact: true }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Line 2/);
      expect((await adminGet<{ items: unknown[] }>(app, '/admin/settlement-imports')).items.length).toBe(before);
      await expectAccessible(page);
    } finally {
      await context.close();
    }
  });
});

describe('Reconciliation upload form', () => {
  it('a double submit imports once and answers like the first; the same form with another file, or without the page’s CSRF token, imports nothing', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${baseUrl}/console/reconciliation`);
      const field = (name: string) => page.locator(`form[action="/console/reconciliation/imports"] input[name="${name}"]`).getAttribute('value');
      const form = { _csrf: (await field('_csrf'))!, idempotencyKey: (await field('idempotencyKey'))! };
      const file = (transactionId: string) => ({
        name: `${transactionId}.csv`,
        mimeType: 'text/csv',
        buffer: Buffer.from(`거래번호,주문번호,거래구분,금액,거래일시\n${transactionId},order-${transactionId},승인,1000,20261101120000\n`, 'utf8'),
      });
      const submit = (transactionId: string) =>
        context.request.post(`${baseUrl}/console/reconciliation/imports`, { multipart: { ...form, file: file(transactionId) }, maxRedirects: 0 });
      const before = (await adminGet<{ items: unknown[] }>(app, '/admin/settlement-imports?limit=100')).items.length;
      const first = await submit('TX-DOUBLE-1');
      const second = await submit('TX-DOUBLE-1');
      expect(first.status()).toBe(303);
      expect(second.status()).toBe(303);
      expect(second.headers().location).toBe(first.headers().location);
      expect((await adminGet<{ items: unknown[] }>(app, '/admin/settlement-imports?limit=100')).items.length).toBe(before + 1);
      // The key belongs to the first file: another file under it is refused, and nothing is imported.
      const other = await submit('TX-DOUBLE-2');
      expect(other.status()).toBe(409);
      expect(await other.text()).toContain('IDEMPOTENCY_KEY_REUSED');
      expect((await adminGet<{ items: unknown[] }>(app, '/admin/settlement-imports?limit=100')).items.length).toBe(before + 1);
      // Without the page's CSRF token nothing is imported.
      const forged = await context.request.post(`${baseUrl}/console/reconciliation/imports`, {
        multipart: { _csrf: 'forged', idempotencyKey: randomUUID(), file: file('TX-FORGED') },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(403);
      expect((await adminGet<{ items: unknown[] }>(app, '/admin/settlement-imports?limit=100')).items.length).toBe(before + 1);
    } finally {
      await context.close();
    }
  });
});

describe('Reports', () => {
  it('shows MRR movements as a chart and a table equal to GET /admin/reports/mrr for the last 12 months, with revenue and recovery', async () => {
    const { context, page } = await signedIn();
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Reports', exact: true }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Reports');
      await expectZoneNamedOnce(page);
      // The simulated clock is in 2026-11: the twelve months to it.
      const expected = await adminGet<{ months: MrrMonth[] }>(app, '/admin/reports/mrr?from=2025-12&to=2026-11');
      expect(expected.months.some((m) => m.churn > 0) && expected.months.some((m) => m.new > 0)).toBe(true);

      const chart = page.getByRole('img', { name: 'MRR movements by month, 2025-12 to 2026-11 (KRW)' });
      await expect(chart.count()).resolves.toBe(1);
      const bars = await chart
        .locator('rect.bar')
        .evaluateAll((rects) => rects.map((r) => `${r.getAttribute('data-month')} ${r.getAttribute('data-movement')} ${r.getAttribute('data-amount')}`));
      const moved = expected.months.flatMap((m) =>
        (['new', 'expansion', 'reactivation', 'contraction', 'churn'] as const).filter((k) => m[k] > 0).map((k) => `${m.month} ${k} ${m[k]}`),
      );
      expect(bars).toEqual(moved);

      const table = page.getByRole('table', { name: 'MRR movements' });
      const shown = await table.locator('tbody tr').evaluateAll((rows) =>
        rows.map((row) => ({
          month: row.getAttribute('data-month'),
          ...Object.fromEntries([...row.querySelectorAll('[data-field]')].map((cell) => [cell.getAttribute('data-field'), cell.textContent ?? ''])),
        })),
      );
      const number = (text: string) => Number(text.replace(/,/g, ''));
      const rate = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(2)}%`);
      expect(shown).toEqual(
        expected.months.map((m) => ({
          month: m.month,
          ...Object.fromEntries(
            Object.entries(m)
              .filter(([k]) => k !== 'month')
              .map(([k, v]) => [k, k.endsWith('Rate') ? rate(v as number | null) : String(number(String(v)).toLocaleString('en-US'))]),
          ),
        })),
      );
      await expect(
        page
          .getByRole('table', { name: /^Revenue by month/ })
          .locator('tbody tr')
          .count(),
      ).resolves.toBe(12);
      await expect(
        page
          .getByRole('table', { name: /^Declined recurring cycles/ })
          .locator('tbody tr')
          .count(),
      ).resolves.toBe(12);
      await expectAccessible(page);

      // Each export is the report route's own CSV, BOM included.
      for (const [name, report] of [
        ['Export MRR movements (CSV)', 'mrr'],
        ['Export revenue (CSV)', 'revenue'],
        ['Export recovery (CSV)', 'recovery'],
      ]) {
        const csv = await fetchLink(context, page, name!);
        expect(csv.type).toBe('text/csv; charset=utf-8');
        expect(csv.text.charCodeAt(0)).toBe(0xfeff);
        const range = report === 'revenue' ? 'from=2025-12-01&to=2026-11-30&granularity=month' : 'from=2025-12&to=2026-11';
        const admin = await app.inject({ method: 'GET', url: `/admin/reports/${report}?${range}`, headers: { ...adminHeaders, accept: 'text/csv' } });
        expect(csv.text).toBe(admin.body);
      }

      // Other months through the form.
      await page.getByLabel('From month').fill('2026-08');
      await page.getByLabel('To month').fill('2026-10');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/from=2026-08/);
      await expect(table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-month')))).resolves.toEqual([
        '2026-08',
        '2026-09',
        '2026-10',
      ]);
    } finally {
      await context.close();
    }
  });
});

describe('the console in Korean', () => {
  /** The page's language and heading, and whether any English word of the navigation, headings or buttons is left. */
  async function pageInKorean(page: Page) {
    const lang = await page.locator('html').getAttribute('lang');
    const heading = await page.getByRole('heading', { level: 1 }).textContent();
    const text = await page.evaluate<string>('document.body.innerText');
    const english = [
      'Needs attention',
      'Subscriptions',
      'Payments',
      'Reconciliation',
      'Reports',
      'Search',
      'Sign out',
      'Filter',
      'Show',
      'Next page',
      'Export',
    ];
    return { lang, heading, english: english.filter((word) => new RegExp(`\\b${word}\\b`).test(text)) };
  }

  it('switches on a page with a plain form, stays Korean on the next page (kept in the session), and switches back', async () => {
    const { context, page } = await signedIn({ width: 1280, height: 800 });
    try {
      await page.goto(`${baseUrl}/console/subscriptions?status=ACTIVE`);
      await Promise.all([page.waitForURL(/status=ACTIVE/), page.getByRole('button', { name: '한국어' }).click()]);
      await page.waitForLoadState();
      // The same page (its filter kept), now in Korean.
      expect(new URL(page.url()).search).toBe('?status=ACTIVE');
      await expect(pageInKorean(page)).resolves.toEqual({ lang: 'ko', heading: '구독', english: [] });
      expect(await page.getByRole('navigation', { name: '콘솔' }).getByRole('link', { name: '구독', exact: true }).getAttribute('aria-current')).toBe('page');
      await expect(page.getByLabel('상태').inputValue()).resolves.toBe('ACTIVE');
      // pages-user-0 pays 9,900 won a month.
      await expect(page.locator('td.num', { hasText: /^9,900원$/ }).count()).resolves.toBe(1);
      await expectZoneNamedOnce(page);
      await expectAccessible(page);

      // Another page, through the navigation: still Korean.
      await page.getByRole('navigation', { name: '콘솔' }).getByRole('link', { name: '결제', exact: true }).click();
      await page.waitForURL(`${baseUrl}/console/payments`);
      await expect(pageInKorean(page)).resolves.toEqual({ lang: 'ko', heading: '결제', english: [] });
      await expect(page.locator('td.num', { hasText: /^9,900원$/ }).count()).resolves.toBeGreaterThan(0);
      await expectAccessible(page);
      await expectFitsWindow(page);
      for (const [path, heading] of [
        ['/console', '확인 필요'],
        ['/console/reports', '보고서'],
        ['/console/search?q=pages-user-0', '검색'],
      ] as const) {
        await page.goto(`${baseUrl}${path}`);
        await expect(pageInKorean(page), path).resolves.toEqual({ lang: 'ko', heading, english: [] });
        await expectAccessible(page);
        await expectFitsWindow(page);
      }
      await page.goto(`${baseUrl}/console/reports`);
      await expect(page.getByRole('img', { name: '월별 MRR 변동, 2025-12 ~ 2026-11 (KRW)' }).count()).resolves.toBe(1);
      await page.goto(`${baseUrl}/console/search?q=pages-user-0`);

      // Back to English, on the page it was chosen on.
      await Promise.all([page.waitForURL(/\/console\/search\?q=pages-user-0$/), page.getByRole('button', { name: 'English' }).click()]);
      await page.waitForLoadState();
      await expect(page.locator('html').getAttribute('lang')).resolves.toBe('en');
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Search');
      await page.getByRole('navigation').getByRole('link', { name: 'Reports', exact: true }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Reports');
    } finally {
      await context.close();
    }
  });

  it('the sign-in page in Korean (its link from the English one) starts a Korean session', async () => {
    const context = await browser.newContext();
    context.on('request', (request) => requested.push(request.url()));
    const page = await context.newPage();
    try {
      await page.goto(`${baseUrl}/console/login?next=%2Fconsole%2Freports`);
      await page.getByRole('link', { name: '한국어' }).click();
      await page.waitForURL(/lang=ko/);
      await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ko');
      await expectAccessible(page);
      await page.getByLabel('관리자 토큰').fill(TEST_ADMIN_TOKEN);
      await page.getByRole('button', { name: '로그인' }).click();
      await page.waitForURL(`${baseUrl}/console/reports`);
      await expect(pageInKorean(page)).resolves.toEqual({ lang: 'ko', heading: '보고서', english: [] });
    } finally {
      await context.close();
    }
  });
});

describe('a 1280 px window', () => {
  // docs/console.md "Operator console": every page fits a 1280 px wide window; a wide table scrolls inside its own
  // box, the page itself never sideways. After the tests above, the pages carry their data: five subscriptions and
  // their payments, the imported settlement file with its lines, the reports' months.
  it('no console page is wider than the window', async () => {
    const { context, page } = await signedIn({ width: 1280, height: 800 });
    try {
      const payments = await adminGet<{ items: Pay[] }>(app, '/admin/payments?limit=100');
      const subscriptions = await adminGet<{ items: Sub[] }>(app, '/admin/subscriptions?limit=100');
      const imports = await adminGet<{ items: Array<{ id: string }> }>(app, '/admin/settlement-imports?limit=1');
      expect(payments.items.length).toBeGreaterThan(0);
      expect(imports.items).toHaveLength(1);
      const paths = [
        '/console',
        '/console/subscriptions',
        `/console/subscriptions/${subscriptions.items[0]!.id}`,
        '/console/payments',
        ...payments.items.slice(0, 3).map((p) => `/console/payments/${p.id}`),
        '/console/reconciliation',
        `/console/reconciliation?import=${imports.items[0]!.id}`,
        '/console/reports',
        '/console/search?q=pages-user',
      ];
      const tooWide: string[] = [];
      for (const path of paths) {
        const response = await page.goto(`${baseUrl}${path}`);
        expect(response?.status(), path).toBe(200);
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        if (width > 1280) tooWide.push(`${path}: ${width} px`);
      }
      expect(tooWide).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the pages make no request outside the service', () => {
  it('every request of every page went to the service’s origin', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => new URL(url).origin !== baseUrl)).toEqual([]);
  });
});
