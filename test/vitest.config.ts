import { configDefaults, defineConfig } from 'vitest/config';
import { TEST_SAFETY_NET_MS } from './setup/safety-nets.ts';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // Fixtures are suites of their own, run by tests in child processes (test/exit-code.test.ts).
    exclude: [...configDefaults.exclude, 'test/fixtures/**'],
    globalSetup: ['test/setup/global-setup.ts'],
    pool: 'forks',
    // Each test file gets its own database cloned from a migrated template (test/helpers/database.ts).
    fileParallelism: true,
    maxWorkers: 2,
    // Safety nets only (test/setup/safety-nets.ts): no test passes by finishing within a time.
    testTimeout: TEST_SAFETY_NET_MS,
    hookTimeout: TEST_SAFETY_NET_MS,
    teardownTimeout: TEST_SAFETY_NET_MS,
  },
});
