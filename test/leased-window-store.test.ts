import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leasedWindowStore } from '../src/http/leased-window-store.js';
import { createTestStore, type TestStore } from './support/test-store.js';

/**
 * The rate-limit store that leases blocks of a shared Redis counter (src/http/leased-window-store.ts),
 * on a real Redis: never more than the limit through, across instances; one round trip per block.
 */

let redis: TestStore;
beforeAll(async () => {
  redis = await createTestStore();
});
afterAll(async () => {
  await redis.cleanup();
});

/** A store as one instance holds it, counting its Redis round trips. */
function instance(namespace: string) {
  const Store = leasedWindowStore(redis.client, namespace);
  const store = new Store({});
  const client = redis.client as unknown as { rateLimitLease: (...args: unknown[]) => Promise<unknown> };
  return {
    take(key: string, windowMs: number, max: number): Promise<{ current: number; ttl: number }> {
      return new Promise((resolve, reject) => {
        store.incr(key, (error, result) => (error ? reject(error) : resolve(result as { current: number; ttl: number })), windowMs, max);
      });
    },
    client,
  };
}

let run = 0;
const namespace = () => `${redis.prefix}rl-test:${run++}:`;

describe('leasedWindowStore', () => {
  it('lets at most the limit through, for any number of instances, limits and concurrent requests (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 120 }), async (max, instances, requests) => {
        const shared = namespace();
        const stores = Array.from({ length: instances }, () => instance(shared));
        const results = await Promise.all(Array.from({ length: requests }, (_, n) => (stores[n % instances] as ReturnType<typeof instance>).take('client', 60_000, max)));
        const allowed = results.filter((result) => result.current <= max).length;
        expect(allowed).toBeLessThanOrEqual(max);
        // Leased and unused allowance is lost: at most one block per instance.
        const block = Math.ceil(max / 8);
        expect(allowed).toBeGreaterThanOrEqual(Math.min(requests, max - instances * block));
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 40), seed: Number(process.env.FUZZ_SEED ?? 42) },
    );
  });

  it('one instance alone is exact: the limit, then refusals', async () => {
    const store = instance(namespace());
    const results = [];
    for (let n = 0; n < 12; n++) results.push((await store.take('client', 60_000, 10)).current <= 10);
    expect(results).toEqual([...Array(10).fill(true), false, false]);
  });

  it('costs one Redis round trip per block, and none once the fleet is known to be over the limit', async () => {
    const shared = namespace();
    const store = instance(shared);
    const original = store.client.rateLimitLease;
    let calls = 0;
    store.client.rateLimitLease = (...args: unknown[]) => {
      calls += 1;
      return original.apply(store.client, args);
    };
    try {
      // A limit of 800: blocks of 100; 250 requests, one at a time → 3 leases.
      for (let n = 0; n < 250; n++) await store.take('busy', 60_000, 800);
      expect(calls).toBe(3);
      // Past a small limit (blocks of 1): once refused, further requests do not ask Redis.
      for (let n = 0; n < 3; n++) await store.take('flood', 60_000, 2);
      const afterRefusal = calls;
      for (let n = 0; n < 50; n++) expect((await store.take('flood', 60_000, 2)).current).toBeGreaterThan(2);
      expect(calls).toBe(afterRefusal);
    } finally {
      store.client.rateLimitLease = original;
    }
  });

  it('a new window starts when the old one ends (the Redis key expires with it)', async () => {
    const store = instance(namespace());
    expect((await store.take('windowed', 300, 1)).current).toBe(1);
    expect((await store.take('windowed', 300, 1)).current).toBeGreaterThan(1);
    await new Promise((resolve) => setTimeout(resolve, 350));
    const next = await store.take('windowed', 300, 1);
    expect(next.current).toBe(1);
    expect(next.ttl).toBeGreaterThan(0);
    expect(next.ttl).toBeLessThanOrEqual(300);
  });
});
