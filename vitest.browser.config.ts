import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the suites that drive a real Chromium (test/browser/*.browser.ts), kept
// out of `npm test`, which needs no browser. Same module resolution as vitest.config.ts.
process.env.NODE_EXTRA_CA_CERTS = resolve('test/fixtures/tls/ca.pem');

export default defineConfig({
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/browser/**/*.browser.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
