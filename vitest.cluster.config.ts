import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the store conformance suite, the HTTP contract suites, the commands
// (serve, import, sync as child processes), the shared rate-limit counters, the HTTP fuzz suite,
// the relationship index's GraphQL (zaps, follows, notes and search included), the screens (feed, notifications, thread; GraphQL and GET routes), the web of trust, commands and attacks, the followers' model check, and the cluster's own tests (failover,
// configuration) on a Redis Cluster: REDIS_CLUSTER_NODES if set, else
// a local 3-master, 3-replica cluster the global setup starts from redis-server. Same module
// resolution as vitest.config.ts.
process.env.NODE_EXTRA_CA_CERTS = resolve('test/fixtures/tls/ca.pem');
process.env.TEST_REDIS_CLUSTER = '1';

export default defineConfig({
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    include: [
      'test/cluster/**/*.test.ts',
      'test/redis-event-store.test.ts',
      'test/rest-event.test.ts',
      'test/rest-user-profile.test.ts',
      'test/graphql-api.test.ts',
      'test/deletions-http.test.ts',
      'test/conditional-requests.test.ts',
      'test/http-behaviour.test.ts',
      'test/import.test.ts',
      'test/deletions-import.test.ts',
      'test/sync.test.ts',
      'test/cli-serve.test.ts',
      'test/rate-limits.test.ts',
      'test/leased-window-store.test.ts',
      'test/fuzz/http-fuzz.test.ts',
      'test/graphql-relations.test.ts',
      'test/relations-command.test.ts',
      'test/relation-attack.test.ts',
      'test/graphql-zaps.test.ts',
      'test/graphql-follows.test.ts',
      'test/graphql-notes.test.ts',
      'test/graphql-search.test.ts',
      'test/redis-followers.test.ts',
      'test/graphql-notifications.test.ts',
      'test/notification-order-buckets.test.ts',
      'test/redis-notification-races.test.ts',
      'test/rest-notifications.test.ts',
      'test/graphql-feed.test.ts',
      'test/rest-feed.test.ts',
      'test/rest-thread.test.ts',
      'test/web-of-trust.test.ts',
      'test/relations-rebuild.test.ts',
      'test/note-search.test.ts',
      'test/rest-search.test.ts',
      'test/redis-note-index-batch.test.ts',
    ],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
