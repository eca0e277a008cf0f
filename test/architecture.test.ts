// The layers of src/ (DESIGN.md §7, issue #12): no import cycles, and lower layers import nothing from higher ones.
// Checked by dependency-cruiser over the TypeScript sources, type-only imports included.
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.ts';

const forbidden: IForbiddenRuleType[] = [
  { name: 'no-cycles', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
  { name: 'lib-is-the-bottom', severity: 'error', from: { path: '^src/lib/' }, to: { path: '^src/(db|gateway|modules|plugins|sandbox|cli|app|server)' } },
  { name: 'db-below-the-domain', severity: 'error', from: { path: '^src/db/' }, to: { path: '^src/(gateway|modules|plugins|sandbox|cli|app|server)' } },
  { name: 'gateway-below-the-domain', severity: 'error', from: { path: '^src/gateway/' }, to: { path: '^src/(db|modules|plugins|sandbox|cli|app|server)' } },
  { name: 'modules-never-import-the-app', severity: 'error', from: { path: '^src/modules/' }, to: { path: '^src/(app|server)\\.ts$' } },
  { name: 'plugins-never-import-the-app', severity: 'error', from: { path: '^src/plugins/' }, to: { path: '^src/(app|server)\\.ts$' } },
];

describe('architecture', () => {
  it('src/ has no import cycle and no layer imports from one above it', async () => {
    const result = await cruise(['src'], {
      baseDir: ROOT,
      exclude: { path: '^src/generated/' },
      doNotFollow: { path: 'node_modules' },
      tsPreCompilationDeps: true,
      ruleSet: { forbidden },
      validate: true,
    });
    const output = result.output as ICruiseResult;
    const violations = output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
    expect(violations).toEqual([]);
    expect(output.summary.totalCruised).toBeGreaterThan(50);
  });
});
