import { configDefaults, defineConfig } from 'vitest/config';

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
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
