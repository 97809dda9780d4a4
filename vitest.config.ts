import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test files share one Redis, each under its own key prefix; the files that count commands or
    // kill Redis start a private redis-server of their own.
    fileParallelism: true,
  },
});
