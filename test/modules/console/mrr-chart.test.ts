// The Reports page's SVG chart (src/modules/console/mrr-chart.ts): a pure function of the MRR report's months.
import { describe, expect, it } from 'vitest';
import { niceStep, renderMrrChart, scaleOf } from '../../../src/modules/console/mrr-chart.ts';
import { speech } from '../../../src/modules/i18n/messages.ts';
import type { MrrMonth } from '../../../src/modules/reports/mrr-report.ts';

function month(label: string, figures: Partial<MrrMonth> = {}): MrrMonth {
  return {
    month: label,
    startingMrr: 0,
    new: 0,
    expansion: 0,
    reactivation: 0,
    contraction: 0,
    churn: 0,
    endingMrr: 0,
    startingSubscriptions: 0,
    endingSubscriptions: 0,
    newSubscriptions: 0,
    churnedSubscriptions: 0,
    logoChurnRate: null,
    grossMrrChurnRate: null,
    netMrrChurnRate: null,
    ...figures,
  };
}

interface Bar {
  month: string;
  movement: string;
  amount: number;
  y: number;
  height: number;
  title: string;
}

function barsOf(svg: string): Bar[] {
  const pattern =
    /<rect class="bar" data-month="([^"]+)" data-movement="([^"]+)" data-amount="(\d+)" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)" fill="[^"]+"><title>([^<]*)<\/title><\/rect>/g;
  return [...svg.matchAll(pattern)].map(([, m, movement, amount, y, height, title]) => ({
    month: m as string,
    movement: movement as string,
    amount: Number(amount),
    y: Number(y),
    height: Number(height),
    title: title as string,
  }));
}

/** The y of the zero line (the darker grid line). */
function zeroLine(svg: string): number {
  const match = /<line [^>]*y1="([^"]+)"[^>]*stroke="#212121"/.exec(svg);
  if (!match) throw new Error('no zero line');
  return Number(match[1]);
}

describe('niceStep and scaleOf', () => {
  it('takes 1, 2, 2.5 or 5 times a power of ten, covering the span in at most the steps asked', () => {
    expect(niceStep(100_000, 5)).toBe(20_000);
    expect(niceStep(120_000, 5)).toBe(25_000);
    expect(niceStep(9_900, 5)).toBe(2_000);
    expect(niceStep(3, 5)).toBe(1);
    expect(niceStep(0, 5)).toBe(1);
  });

  it('bounds the scale by the tallest stacks above and below zero, in whole steps', () => {
    const scale = scaleOf([month('2026-01', { new: 30_000, expansion: 5_000 }), month('2026-02', { churn: 12_000, contraction: 3_000 })]);
    expect(scale).toEqual({ step: 10_000, max: 40_000, min: -20_000 });
    expect(scaleOf([month('2026-01')])).toEqual({ step: 1, max: 1, min: 0 });
  });
});

describe('renderMrrChart', () => {
  const months = [
    month('2026-01', { new: 30_000, expansion: 5_000, churn: 10_000 }),
    month('2026-02', { reactivation: 9_900, contraction: 2_500 }),
    month('2026-03'),
  ];

  it('is an image named by its title and description, and says the table has the same figures', () => {
    const svg = renderMrrChart(months);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" [^>]*role="img"/);
    expect(svg).toContain('aria-labelledby="mrr-chart-title mrr-chart-desc"');
    expect(svg).toContain('<title id="mrr-chart-title">MRR movements by month, 2026-01 to 2026-03 (KRW)</title>');
    expect(svg).toMatch(/<desc id="mrr-chart-desc">[^<]*table &quot;MRR movements&quot;/);
    expect(svg).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
  });

  it('draws one segment per non-zero movement, gains above the zero line and losses below, heights proportional to amounts', () => {
    const svg = renderMrrChart(months);
    const bars = barsOf(svg);
    expect(bars.map((b) => `${b.month} ${b.movement} ${b.amount}`)).toEqual([
      '2026-01 new 30000',
      '2026-01 expansion 5000',
      '2026-01 churn 10000',
      '2026-02 reactivation 9900',
      '2026-02 contraction 2500',
    ]);
    const zero = zeroLine(svg);
    const [jNew, jExpansion, jChurn, fReactivation, fContraction] = bars as [Bar, Bar, Bar, Bar, Bar];
    // Gains stack upwards from the zero line, losses downwards.
    expect(jNew.y + jNew.height).toBeCloseTo(zero, 0);
    expect(jExpansion.y + jExpansion.height).toBeCloseTo(jNew.y, 0);
    expect(jChurn.y).toBeCloseTo(zero, 0);
    expect(fContraction.y).toBeCloseTo(zero, 0);
    expect(fReactivation.y + fReactivation.height).toBeCloseTo(zero, 0);
    // One scale for every segment.
    const perWon = jNew.height / 30_000;
    for (const bar of bars) expect(bar.height / bar.amount).toBeCloseTo(perWon, 4);
    expect(jChurn.title).toBe('2026-01 Churn: −10,000 KRW');
    expect(fReactivation.title).toBe('2026-02 Reactivation: +9,900 KRW');
  });

  it('labels every month, the empty ones included, and escapes what it prints', () => {
    const svg = renderMrrChart([month('2026-03'), month('<b>&"')]);
    expect(barsOf(svg)).toEqual([]);
    expect(svg).toContain('>2026-03</text>');
    expect(svg).toContain('>&lt;b&gt;&amp;&quot;</text>');
    expect(svg).not.toContain('<b>');
  });

  it('speaks the page’s language: title, description, legend and each bar’s amount in Korean (won as 9,900원), the same drawing', () => {
    const svg = renderMrrChart(months, speech('ko'));
    expect(svg).toContain('<title id="mrr-chart-title">월별 MRR 변동, 2026-01 ~ 2026-03 (KRW)</title>');
    expect(svg).toMatch(/<desc id="mrr-chart-desc">[^<]*표 “MRR 변동”/);
    const bars = barsOf(svg);
    expect(bars.map((b) => b.title)).toEqual([
      '2026-01 신규: +30,000원',
      '2026-01 증액: +5,000원',
      '2026-01 이탈: −10,000원',
      '2026-02 재개: +9,900원',
      '2026-02 감액: −2,500원',
    ]);
    expect(bars.map(({ title: _, ...bar }) => bar)).toEqual(barsOf(renderMrrChart(months)).map(({ title: _, ...bar }) => bar));
    for (const legend of ['신규', '증액', '재개', '감액 (−)', '이탈 (−)']) expect(svg).toContain(`>${legend}</text>`);
    expect(svg).not.toMatch(/MRR movements|New|Churn|KRW</);
  });
});
