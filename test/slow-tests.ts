/**
 * `npm run test:slow`: the suites that start processes of their own (the CLI, private Redis
 * servers, tmpfs mounts), fault Redis, LMDB and relays, wait for real deadlines, or measure CPU.
 * They take most of the suite's time by their nature, so `npm test` leaves them out to stay under
 * five minutes on a 2-core machine, and `.ci/run` runs them as a step of their own, one file at a
 * time (the CPU calibration and the deadline tests must not share the cores with another file).
 */
export const SLOW_TESTS = [
  'test/faults/**/*.test.ts',
  'test/cli-serve.test.ts',
  'test/cli-stats.test.ts',
  'test/deletions-fetch-on-miss.test.ts',
  'test/deletions-import.test.ts',
  'test/dev-relay.test.ts',
  'test/docker-compose.test.ts',
  'test/import.test.ts',
  'test/logger.test.ts',
  'test/offline-log.test.ts',
  'test/query-cost-calibration.test.ts',
  'test/readme-examples.test.ts',
  'test/redis-command-count.test.ts',
  'test/redis-outage.test.ts',
  'test/relation-fill.test.ts',
  'test/relation-review-findings.test.ts',
  'test/relations-command.test.ts',
  'test/store-outage-log.test.ts',
  'test/sync.test.ts',
  'test/writer-deadline.test.ts',
  // Wall-clock bounds of tens of milliseconds, server-wide Redis command counts, or a process of
  // their own (found by review: flaky beside another file on the other core).
  'test/answer-cache.test.ts',
  'test/hot-cache.test.ts',
  'test/metrics.test.ts',
  'test/outbox.test.ts',
  'test/relay-fill.test.ts',
  'test/relay-pool.test.ts',
];
