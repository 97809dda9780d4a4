import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedWindows, LocalWindowStore, MAX_WINDOWS, type SynchronousWindowStore } from '../src/http/fixed-windows.js';
import { leasedWindowStore } from '../src/http/leased-window-store.js';
import { createTestStore, type TestStore } from './support/test-store.js';

/**
 * The fixed windows both rate-limit stores keep (src/http/fixed-windows.ts), and what the plugin
 * reads from either store when many checks of one key are made in one turn.
 */

let redis: TestStore;
beforeAll(async () => {
  redis = await createTestStore();
});
afterAll(async () => {
  await redis.cleanup();
});

const STORES = [
  { name: 'in process', store: () => LocalWindowStore },
  { name: 'leased from Redis', store: () => leasedWindowStore(redis.client, `${redis.prefix}fw-test:${Date.now()}:`) },
];

describe.each(STORES)('the $name store, through the plugin', ({ store }) => {
  it('checks of one key made in one turn each get their own count: the burst of every key allowed, the rest refused', async () => {
    const app = Fastify();
    await app.register(rateLimit, { global: false, store: store() });
    await app.ready();
    try {
      const check = app.createRateLimit({ max: 3, timeWindow: 60_000, keyGenerator: (request: FastifyRequest) => request.ip });
      const request = (ip: string) => ({ ip, routeOptions: {} }) as unknown as FastifyRequest;
      // 40 keys, 8 checks each, all started before any is answered.
      const keys = Array.from({ length: 40 }, (_, n) => `client-${n}`);
      const results = await Promise.all(keys.map((key) => Promise.all(Array.from({ length: 8 }, () => check(request(key))))));
      for (const [k, ofKey] of results.entries()) {
        // No allow list: every result is a count (isAllowed false, as the plugin says it).
        const counted = ofKey.map((result) => (result.isAllowed ? expect.unreachable() : result));
        expect(counted.map((result) => result.isExceeded), keys[k]).toEqual([false, false, false, true, true, true, true, true]);
        for (const refused of counted.slice(3)) {
          expect(refused.ttlInSeconds).toBeGreaterThanOrEqual(1);
          expect(refused.ttlInSeconds).toBeLessThanOrEqual(60);
        }
      }
    } finally {
      await app.close();
    }
  });
});

describe('FixedWindows', () => {
  const windows = () => new FixedWindows((endsAt) => ({ endsAt, count: 0 }));

  it('a window lasts timeWindow from its first request; the first request after it starts the next', () => {
    const kept = windows();
    const first = kept.at('a', 1000, 500);
    expect(first.endsAt).toBe(1500);
    first.count = 7;
    expect(kept.at('a', 1499, 500)).toBe(first);
    const next = kept.at('a', 1500, 500);
    expect(next).not.toBe(first);
    expect(next).toEqual({ endsAt: 2000, count: 0 });
  });

  it('keeps at most MAX_WINDOWS, dropping the oldest first (a flood of new clients is bounded)', () => {
    const kept = windows();
    kept.at('oldest', 0, 60_000).count = 5;
    kept.at('renewed', 0, 10).count = 5;
    for (let n = 0; n < MAX_WINDOWS - 2; n++) kept.at(`flood-${n}`, 20, 60_000).count = 2;
    // Full. 'renewed' ended: its next window is the newest, and nothing is dropped for it.
    expect(kept.at('renewed', 30, 60_000).count).toBe(0);
    kept.at('renewed', 30, 60_000).count = 1;
    expect(kept.at('oldest', 30, 60_000).count).toBe(5);
    // One more client: the oldest window goes, the rest are kept.
    kept.at('one-more', 30, 60_000);
    expect(kept.at('flood-0', 30, 60_000).count).toBe(2);
    expect(kept.at('renewed', 30, 60_000).count).toBe(1);
    expect(kept.at('oldest', 30, 60_000).count).toBe(0);
  });
});

describe('LocalWindowStore', () => {
  it('counts requests per key in the window, and starts again once it ends', async () => {
    const store = new LocalWindowStore();
    const incr = (key: string, windowMs: number) =>
      new Promise<{ current: number; ttl: number }>((resolve, reject) => {
        store.incr(key, (error, result) => (error ? reject(error) : resolve(result as { current: number; ttl: number })), windowMs);
      });
    expect((await incr('a', 200)).current).toBe(1);
    expect((await incr('a', 200)).current).toBe(2);
    expect((await incr('b', 200)).current).toBe(1);
    const third = await incr('a', 200);
    expect(third.current).toBe(3);
    expect(third.ttl).toBeGreaterThan(0);
    expect(third.ttl).toBeLessThanOrEqual(200);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await incr('a', 200)).current).toBe(1);
    // The store of a route limit counts apart.
    expect((await new Promise<number>((resolve) => store.child().incr('b', (_e, result) => resolve(result?.current ?? 0), 200, 1)))).toBe(1);
  });
});

describe.each(STORES)('the $name store, asked at once (takeNow, the fast lane)', ({ store }) => {
  it('takes what can be let through now, and otherwise changes nothing: the plugin then counts as ever', async () => {
    const Store = store() as unknown as new () => SynchronousWindowStore;
    const windows = new Store();
    // The plugin passes the limit as a fourth argument (the leased store reads it).
    const incr = (key: string) =>
      new Promise<number>((resolve, reject) =>
        (windows.incr as (...args: unknown[]) => void)(key, (error: Error | null, result?: { current: number }) => (error ? reject(error) : resolve(result?.current ?? -1)), 60_000, 16),
      );
    if ((Store as unknown) === LocalWindowStore) {
      // In process: always known at once, up to the limit.
      expect(Array.from({ length: 18 }, () => windows.takeNow('a', 60_000, 16))).toEqual([...Array.from({ length: 16 }, () => true), false, false]);
      // The refusals were not counted: the plugin's next check is the 17th.
      expect(await incr('a')).toBe(17);
    } else {
      // Leased: nothing in hand before the first lease (a block of 2: an eighth of 16).
      expect(windows.takeNow('a', 60_000, 16)).toBe(false);
      expect(await incr('a')).toBe(1);
      expect(windows.takeNow('a', 60_000, 16)).toBe(true);
      expect(windows.takeNow('a', 60_000, 16)).toBe(false);
      // Counted once each: the lane's take and the plugin's checks share the blocks, and the 17th is refused.
      const counts: number[] = [];
      for (let n = 0; n < 15; n++) counts.push(await incr('a'));
      expect(counts.slice(0, 14)).toEqual(Array.from({ length: 14 }, (_, index) => index + 3));
      expect(counts[14]).toBeGreaterThan(16);
      expect(windows.takeNow('a', 60_000, 16)).toBe(false);
    }
  });
});
