import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { SLOW_TESTS } from './test/slow-tests.js';

// The NIP-05 tests serve nostr.json over real HTTPS with a test certificate: Node reads its trusted
// CAs when a process starts, so it is set here, before the test workers (and the services they
// spawn) start, as an operator would set it.
process.env.NODE_EXTRA_CA_CERTS = resolve('test/fixtures/tls/ca.pem');

export default defineConfig({
  // graphql 16 ships CJS (index.js) and ESM (index.mjs); Node loads the CJS one for dependencies
  // such as Pothos, so our sources must get the same copy or graphql sees "another realm".
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: ['test/**/*.test.ts'],
    // Redis Cluster's own tests start clusters (redis-server and redis-cli): npm run test:cluster.
    // The suites that start processes, inject faults, wait for deadlines or measure CPU run apart,
    // one at a time (npm run test:slow, test/slow-tests.ts): `npm test` stays under five minutes.
    exclude: ['test/cluster/**', '**/node_modules/**', ...SLOW_TESTS],
    // Two files at once on two cores: what is left shares one Redis under a key prefix per file.
    maxWorkers: 2,
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test files share one Redis, each under its own key prefix; the files that count commands or
    // kill Redis start a private redis-server of their own.
    fileParallelism: true,
  },
});
