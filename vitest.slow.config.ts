import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { SLOW_TESTS } from './test/slow-tests.js';

// `npm run test:slow`: the suites test/slow-tests.ts names (processes, faults, deadlines, CPU), one
// file at a time. Same module resolution, CA and setup as vitest.config.ts.
process.env.NODE_EXTRA_CA_CERTS = resolve('test/fixtures/tls/ca.pem');

export default defineConfig({
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: SLOW_TESTS,
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    maxWorkers: 1,
  },
});
