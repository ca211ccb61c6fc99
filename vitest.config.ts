import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-file.ts'],
    include: ['test/**/*.test.ts', 'clients/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The global teardown runs the invariant check (a CLI process) on the run's database first.
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
