import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The end-to-end tests mostly wait on child processes: two files at a time keep both cores busy.
    maxWorkers: 2,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
