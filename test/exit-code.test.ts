// `npm test` must fail when a test fails: the test runner, with this suite's configuration and global setup (which
// starts the embedded PostgreSQL), run in a child process on a fixture holding one failing test.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from './helpers/process.ts';

function runVitest(dir: string): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env };
  // The fixture run starts its own embedded cluster, as a plain `npm test` does, whatever this run was given.
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  delete env.VITEST;
  delete env.VITEST_WORKER_ID;
  delete env.VITEST_POOL_ID;
  // Plain text to read, whatever this run's terminal was (CI sets CI=true, which turns colours on).
  delete env.FORCE_COLOR;
  env.NO_COLOR = '1';
  const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(process.execPath, [vitest, 'run', '--config', 'test/vitest.config.ts', '--dir', dir, '--reporter', 'default'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output: stripVTControlCharacters(output) }));
  });
}

it('a run with a failing test exits non-zero, after the embedded database was started and stopped', async () => {
  const { code, output } = await runVitest('test/fixtures/exit-code');
  expect(output).toContain('fails on purpose');
  expect(output).toMatch(/Tests\s+1 failed/);
  expect(code).toBe(1);
});
