// The deployment files and docs/operating.md "Environment variables" name every variable the service reads
// (src/config.ts's EnvSchema), so an operator who follows any of them can set everything, and nothing is silently
// dropped by docker compose.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvSchema } from '../src/config.ts';
import { ROOT } from './helpers/process.ts';

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const VARIABLES = Object.keys(EnvSchema.properties);

/** The `environment:` block of the app service in docker-compose.yml: variable → value. */
function composeAppEnvironment(): Map<string, string> {
  const lines = read('docker-compose.yml').split('\n');
  const app = lines.indexOf('  app:');
  const start = lines.findIndex((line, index) => index > app && line === '    environment:');
  const environment = new Map<string, string>();
  for (const line of lines.slice(start + 1)) {
    const match = /^ {6}([A-Z_]+): (.*)$/.exec(line);
    if (!match) break;
    environment.set(match[1]!, match[2]!);
  }
  return environment;
}

describe('how the service is run', () => {
  it('the Dockerfile runs node with the flags of npm start (which the benchmarks read)', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    const flags = /exec node ((?:--\S+ )*)src\/server\.ts$/.exec(start)?.[1]?.trim().split(' ') ?? [];
    expect(flags).toContain('--max-semi-space-size=8');
    expect(flags).toContain('--heap-growing-percent=50');
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(cmd!)).toEqual(['node', ...flags, 'src/server.ts']);
  });
});

describe('every variable of the service', () => {
  it.each(VARIABLES)('%s is in docs/operating.md, .env.example and docker-compose.yml', (name) => {
    const table = read('docs/operating.md')
      .split(/^## /m)
      .find((section) => section.startsWith('Environment variables\n'));
    expect(table).toMatch(new RegExp(`\\|[^|\\n]*\`${name}\``));
    expect(read('.env.example')).toMatch(new RegExp(`^${name}=`, 'm'));
    expect(composeAppEnvironment().has(name), 'docker-compose.yml').toBe(true);
  });

  it('docker compose has no default database password and waits at least the drain on stop', () => {
    const compose = read('docker-compose.yml');
    expect(compose).toMatch(/POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?/);
    expect(compose).not.toMatch(/POSTGRES_PASSWORD:-/);
    const grace = /stop_grace_period: (\d+)s/.exec(compose);
    // The default drain is PAYMENT_TIMEOUT_MS (30 s) + 5 s, then at most 10 s to close (src/server.ts).
    expect(Number(grace?.[1])).toBeGreaterThanOrEqual(45);
  });

  it('the README and docs/ link nothing outside the repository', () => {
    expect(read('README.md')).not.toMatch(/\.\.\/shared|\]\(\.\.\//);
    // docs/ may link one level up, into the repository (../bench/results/history.md), never two.
    for (const file of readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'))) {
      expect(read(`docs/${file}`), file).not.toMatch(/\.\.\/shared|\]\(\.\.\/\.\.\//);
    }
  });
});
