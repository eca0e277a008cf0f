// The Reports page's chart of MRR movements by month (docs/console.md "Operator console"; docs/reconciliation.md "Revenue reports"), drawn on the
// server as SVG: no client-side chart library and no script, so it reads with JavaScript off and under a CSP without
// inline script. A diverging stacked bar per month: what adds MRR (new, expansion, reactivation) above the zero line,
// what takes it away (contraction, churn) below. The figures come straight from the MRR report (mrr-report.ts), the
// same the table beside it shows; the SVG is an image with a <title> and a <desc> (role="img"), each bar segment has its
// own <title> naming the month, the movement and the amount. Its words are the catalog's (`console.frame.reports`), in
// the page's language; the axis is won without the unit (the title says KRW).
import { type Speech, speech } from '../i18n/messages.ts';
import type { MrrMonth } from '../reports/mrr-report.ts';
import { formatWonNumber } from './money.ts';

type Movement = 'new' | 'expansion' | 'reactivation' | 'contraction' | 'churn';

/** The movements in stacking order (from the zero line outwards), with their fill; their names are the table's columns. */
export const MOVEMENTS: ReadonlyArray<{ key: Movement; sign: 1 | -1; fill: string }> = [
  { key: 'new', sign: 1, fill: '#1b5e20' },
  { key: 'expansion', sign: 1, fill: '#43a047' },
  { key: 'reactivation', sign: 1, fill: '#0277bd' },
  { key: 'contraction', sign: -1, fill: '#ef6c00' },
  { key: 'churn', sign: -1, fill: '#b71c1c' },
];

const WIDTH = 760;
const HEIGHT = 340;
const PLOT = { left: 88, right: 16, top: 40, bottom: 48 };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
/** Coordinates to a tenth of a pixel: enough for a crisp drawing, and stable text for the tests. */
const px = (value: number) => String(Math.round(value * 10) / 10);

/** The smallest "nice" step (1, 2, 2.5 or 5 × 10^n) that covers `span` in at most `count` steps. */
export function niceStep(span: number, count: number): number {
  if (span <= 0) return 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  for (const factor of [1, 2, 2.5, 5, 10]) if (factor * magnitude >= raw) return Math.max(1, factor * magnitude);
  return 10 * magnitude;
}

/** The scale's bounds (multiples of the step, zero included) for the tallest stacks above and below zero. */
export function scaleOf(months: readonly MrrMonth[]) {
  const up = Math.max(0, ...months.map((m) => m.new + m.expansion + m.reactivation));
  const down = Math.max(0, ...months.map((m) => m.contraction + m.churn));
  const step = niceStep(up + down, 5);
  const max = Math.ceil(up / step) * step;
  const min = down === 0 ? 0 : -Math.ceil(down / step) * step;
  // An empty chart still has one step above zero, so the axis is drawn and labelled.
  return { step, max: max === 0 && min === 0 ? step : max, min };
}

/**
 * The chart as an SVG element in the language of `says` (English by default), `id` prefixing its title and
 * description ids (one chart per page today).
 */
export function renderMrrChart(months: readonly MrrMonth[], says: Speech = speech('en'), id = 'mrr-chart'): string {
  const { t } = says;
  const label = (movement: Movement) => t(`console.frame.reports.col.${movement}`);
  const first = months[0]?.month;
  const last = months[months.length - 1]?.month;
  const range = first === last ? (first ?? t('console.frame.reports.chart.noMonth')) : t('console.frame.reports.chart.range', { from: first!, to: last! });
  const title = t('console.frame.reports.chart.title', { range });
  const desc = t('console.frame.reports.chart.desc');
  const { step, max, min } = scaleOf(months);
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const y = (value: number) => PLOT.top + ((max - value) / (max - min)) * plotHeight;
  const slot = plotWidth / Math.max(1, months.length);
  const barWidth = Math.min(40, slot * 0.6);

  const parts: string[] = [];
  for (let tick = min; tick <= max; tick += step) {
    const at = px(y(tick));
    parts.push(
      `<line x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${at}" y2="${at}" stroke="${tick === 0 ? '#212121' : '#d0d0d0'}" stroke-width="${tick === 0 ? 1.5 : 1}"/>`,
      `<text x="${PLOT.left - 6}" y="${at}" dy="0.32em" text-anchor="end" font-size="11" fill="#212121">${escapeXml(formatWonNumber(tick))}</text>`,
    );
  }
  months.forEach((month, index) => {
    const x = PLOT.left + slot * index + (slot - barWidth) / 2;
    const stacked = { 1: 0, [-1]: 0 } as Record<1 | -1, number>;
    for (const movement of MOVEMENTS) {
      const amount = month[movement.key];
      if (amount <= 0) continue;
      const from = stacked[movement.sign];
      const to = from + movement.sign * amount;
      stacked[movement.sign] = to;
      const top = y(Math.max(from, to));
      const height = y(Math.min(from, to)) - top;
      parts.push(
        `<rect class="bar" data-month="${escapeXml(month.month)}" data-movement="${movement.key}" data-amount="${amount}" x="${px(x)}" y="${px(top)}" ` +
          `width="${px(barWidth)}" height="${px(height)}" fill="${movement.fill}"><title>${escapeXml(`${month.month} ${label(movement.key)}: ${movement.sign < 0 ? '−' : '+'}${says.money(amount)}`)}</title></rect>`,
      );
    }
    parts.push(
      `<text x="${px(x + barWidth / 2)}" y="${HEIGHT - PLOT.bottom + 18}" text-anchor="middle" font-size="11" fill="#212121">${escapeXml(month.month)}</text>`,
    );
  });
  MOVEMENTS.forEach((movement, index) => {
    const x = PLOT.left + index * 120;
    parts.push(
      `<rect x="${x}" y="12" width="12" height="12" fill="${movement.fill}"/>`,
      `<text x="${x + 16}" y="22" font-size="12" fill="#212121">${escapeXml(label(movement.key))}${movement.sign < 0 ? ' (−)' : ''}</text>`,
    );
  });

  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" ` +
    `aria-labelledby="${id}-title ${id}-desc" id="${id}"><title id="${id}-title">${escapeXml(title)}</title><desc id="${id}-desc">${escapeXml(desc)}</desc>` +
    `${parts.join('')}</svg>`
  );
}
