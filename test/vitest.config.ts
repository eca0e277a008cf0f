import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { TEST_SAFETY_NET_MS } from './setup/safety-nets.ts';

// Node's on-disk compile cache for the workers (and every process they start) where `npm start` keeps it: the
// node_modules each test file imports are compiled once, not once per file. It holds compiled code only, checked
// against each source.
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('../node_modules/.cache/node-compile-cache', import.meta.url));

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
