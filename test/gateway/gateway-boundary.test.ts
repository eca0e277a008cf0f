// The engine holds gateways through their interface (docs/architecture.md "The gateway client"): no file under
// src/modules imports a gateway's client, wire fields or adapter, only the interface (src/gateway/gateway.ts) and
// the registry (src/gateway/registry.ts). dependency-cruiser over the TypeScript sources, type-only imports included.
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';

const forbidden: IForbiddenRuleType[] = [
  {
    name: 'modules-see-only-the-gateway-interface',
    severity: 'error',
    from: { path: '^src/modules/' },
    to: { path: '^src/gateway/', pathNot: '^src/gateway/(gateway|registry)\\.ts$' },
  },
];

describe('the gateway boundary', () => {
  it('src/modules imports from src/gateway only the interface and the registry', async () => {
    const result = await cruise(['src/modules'], {
      baseDir: ROOT,
      exclude: { path: '^src/generated/' },
      doNotFollow: { path: 'node_modules' },
      tsPreCompilationDeps: true,
      ruleSet: { forbidden },
      validate: true,
    });
    const output = result.output as ICruiseResult;
    expect(output.summary.violations.map((v) => `${v.from} -> ${v.to}`)).toEqual([]);
    // The rule has something to hold: the modules do reach the interface.
    const targets = output.modules.filter((m) => m.source.startsWith('src/modules/')).flatMap((m) => m.dependencies.map((d) => d.resolved));
    expect(targets).toContain('src/gateway/gateway.ts');
  });
});
