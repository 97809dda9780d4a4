import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCli, type ServingCli } from './support/cli.js';
import { profile } from './support/events.js';
import { type PrivateRedis, startPrivateRedis } from './support/redis-server.js';

// This file stops and restarts a redis-server of its own, under a real `serve`.
let redis: PrivateRedis;
let served: ServingCli;
const alice = profile('outage-log alice', { name: 'alice' });

beforeAll(async () => {
  redis = await startPrivateRedis();
  served = await serveCli({ REDIS_URL: redis.url, REDIS_CLUSTER_NODES: '', RELAYS: '', OFFLINE: 'true', REDIS_TIMEOUT_MS: '200' });
});
afterAll(async () => {
  served?.child.kill('SIGKILL');
  await redis?.stop();
});

interface Line {
  level: string;
  msg: string;
  code?: string;
  err?: { stack?: string };
  suppressed?: number;
}
const lines = (): Line[] =>
  served
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);

describe('a store outage in the log', () => {
  it('one line per code per second, no stack for a known store state, and a "since … / back after N s" pair', async () => {
    expect((await fetch(`${served.url}/readyz`)).status).toBe(200);
    await redis.stop();
    const started = Date.now();
    // About 3 s of an orchestrator's probes and of lookups, 20 of each a second.
    let requests = 0;
    while (Date.now() - started < 3000) {
      const answers = await Promise.all([
        fetch(`${served.url}/readyz`).then((response) => response.status),
        fetch(`${served.url}/user-profile?pubkey=${alice.pubkey}`).then((response) => response.status),
      ]);
      expect(answers).toEqual([503, 500]);
      requests += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(requests).toBeGreaterThan(20);
    redis = await startPrivateRedis({ port: redis.port });
    for (let attempt = 0; (await fetch(`${served.url}/readyz`)).status !== 200; attempt++) {
      if (attempt > 100) throw new Error('did not recover');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 400)); // request lines are written every 250 ms
    const logged = lines().filter((line) => line.msg !== 'request');
    const notReady = logged.filter((line) => line.msg.startsWith('store not ready'));
    const failed = logged.filter((line) => line.msg.startsWith('lookup failed'));
    // Over ~3 s: one a second per code, give or take the edges.
    expect(notReady.length).toBeGreaterThanOrEqual(1);
    expect(notReady.length).toBeLessThanOrEqual(5);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThanOrEqual(5);
    expect(failed.reduce((sum, line) => sum + 1 + (line.suppressed ?? 0), 0)).toBeLessThanOrEqual(requests);
    expect([...notReady, ...failed].every((line) => line.code === 'store_unavailable')).toBe(true);
    // No stack, not even an empty one (the "redis connection error" line had `"stack":""`), and not the Redis client's own wording.
    expect(served.stdout()).not.toContain('"stack"');
    expect(logged.filter((line) => line.msg === 'redis connection error').length).toBeGreaterThanOrEqual(1);
    expect(served.stdout()).not.toContain("Stream isn't writeable");
    expect(logged.filter((line) => line.msg.startsWith('store unavailable since '))).toHaveLength(1);
    const back = logged.filter((line) => /^store back after \d+(\.\d)? s$/.test(line.msg));
    expect(back).toHaveLength(1);
    expect(logged.indexOf(back[0] as Line)).toBeGreaterThan(logged.findIndex((line) => line.msg.startsWith('store unavailable since ')));
  });
});
