import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { metrics, registry } from '../src/metrics/metrics.js';
import { connectInvalidations, connectRedis, waitUntilReady } from '../src/store/redis/connect.js';
import { HotCache } from '../src/store/redis/hot-cache.js';
import { RedisEventStore } from '../src/store/redis/redis-event-store.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { createTestStore, type TestStore, testClusterNodes } from './support/test-store.js';
import { getJson, startTestServer, type TestServer } from './support/test-server.js';

const T = 1_700_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` every millisecond until `done` holds; the time it took, or Infinity after `limitMs`. */
async function timeUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, limitMs = 2000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (done(await read())) return performance.now() - started;
    await sleep(1);
  }
  return Infinity;
}

/** A /user-profile answer's profile content. */
const contentOf = (answer: { body: unknown }) => (answer.body as { profile?: { content: string } }).profile?.content;

async function until(condition: () => boolean, limitMs = 3000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) throw new Error('condition not met in time');
    await sleep(5);
  }
}

interface CachedInstance {
  store: RedisEventStore;
  cache: HotCache;
  server: TestServer;
}

/** A second instance of the service on the writer's Redis and prefix, with a hot cache, served over HTTP. */
async function cachedInstance(url: string, prefix: string, maxBytes = 4 * 2 ** 20): Promise<CachedInstance> {
  const client = connectRedis({ url, timeoutMs: 2000 });
  client.on('error', () => {});
  await waitUntilReady(client, 5000);
  const reader = connectRedis({ url, timeoutMs: 2000 });
  const subscriber = connectInvalidations({ url, timeoutMs: 2000 });
  for (const connection of [reader, subscriber]) connection.on('error', () => {});
  const cache = new HotCache(reader, subscriber, maxBytes);
  const store = new RedisEventStore(client, prefix, { timeoutMs: 2000, hotCache: cache });
  await until(() => cache.active);
  return { store, cache, server: await startTestServer(store) };
}

// The cache is for a single Redis (a cluster run leaves it off: README).
describe.skipIf(testClusterNodes() !== undefined)('hot cache (HOT_CACHE_MB), kept true by Redis CLIENT TRACKING', () => {
  const opened: { writer: TestStore; instance: CachedInstance }[] = [];
  afterEach(async () => {
    for (const { writer, instance } of opened.splice(0)) {
      await instance.server.close();
      await instance.store.close();
      await writer.cleanup();
    }
  });

  async function setUp(): Promise<{ writer: TestStore; instance: CachedInstance }> {
    const writer = await createTestStore();
    const instance = await cachedInstance(writer.url, writer.prefix);
    opened.push({ writer, instance });
    return { writer, instance };
  }

  it('a cached profile costs no Redis command; replaced through another writer, every instance sees it within 50 ms', async () => {
    const { writer, instance } = await setUp();
    const pubkey = pubkeyOf('hot ann');
    await writer.store.putEvents([profile('hot ann', { name: 'one' }, T)]);
    const url = `${instance.server.url}/user-profile?pubkey=${pubkey}`;
    expect(contentOf(await getJson(url))).toBe('{"name":"one"}');
    const admin = (await writer.connectAdmin()) as Redis;
    try {
      const commands = async () => Number(/\r\ncmdstat_mget:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
      const before = await commands();
      const hits = instance.cache.stats.hits;
      for (let n = 0; n < 5; n++) expect(contentOf(await getJson(url))).toBe('{"name":"one"}');
      expect(instance.cache.stats.hits - hits).toBe(5);
      expect(await commands()).toBe(before);
    } finally {
      admin.disconnect();
    }
    await writer.store.putEvents([profile('hot ann', { name: 'two' }, T + 1)]);
    const took = await timeUntil(() => getJson(url), (answer) => contentOf(answer) === '{"name":"two"}');
    expect(took).toBeLessThan(50);
    // What /metrics says of it.
    metrics.followHotCache(instance.cache);
    const scraped = await registry.metrics();
    expect(scraped).toContain(`nostr_lookup_hot_cache_reads_total{result="hit"} ${instance.cache.stats.hits}\n`);
    expect(scraped).toMatch(/nostr_lookup_hot_cache_invalidations_total\{kind="key"\} [1-9]/);
    expect(scraped).toContain(`nostr_lookup_hot_cache_bytes ${instance.cache.size}\n`);
    metrics.followHotCache(undefined);
  });

  it('an event deleted (NIP-09) or vanished (NIP-62) through another writer: 404 within 50 ms', async () => {
    const { writer, instance } = await setUp();
    const note = signed('hot bo', { created_at: T, content: 'soon gone' });
    const other = signed('hot cy', { created_at: T, content: 'also gone' });
    await writer.store.putEvents([note, other, profile('hot bo', { name: 'bo' }), profile('hot cy', { name: 'cy' })]);
    for (const event of [note, other]) expect((await getJson(`${instance.server.url}/event?id=${event.id}`)).status).toBe(200);
    expect((await getJson(`${instance.server.url}/event?id=${note.id}`)).status).toBe(200);
    await writer.store.putEvents([deletion('hot bo', { ids: [note.id] })]);
    expect(await timeUntil(() => getJson(`${instance.server.url}/event?id=${note.id}`), (answer) => answer.status === 404)).toBeLessThan(50);
    await writer.store.putEvents([vanish('hot cy', T + 10)]);
    expect(await timeUntil(() => getJson(`${instance.server.url}/event?id=${other.id}`), (answer) => answer.status === 404)).toBeLessThan(50);
    expect((await getJson(`${instance.server.url}/user-profile?pubkey=${pubkeyOf('hot cy')}`)).status).toBe(404);
  });

  it('a lost invalidation connection empties the cache and stops using it until it is back; nothing written meanwhile is missed', async () => {
    const { writer, instance } = await setUp();
    const pubkey = pubkeyOf('hot di');
    await writer.store.putEvents([profile('hot di', { name: 'one' }, T)]);
    const read = async () => ((await instance.store.getProfiles([pubkey]))[0] as { json: { toString(): string } } | null)?.json.toString() ?? '';
    expect(await read()).toContain('one');
    expect(instance.cache.size).toBeGreaterThan(0);
    const admin = (await writer.connectAdmin()) as Redis;
    try {
      await admin.client('KILL', 'ID', String(instance.cache.invalidationClientId));
      await until(() => !instance.cache.active);
      expect(instance.cache.size).toBe(0);
      // Off: every read goes to Redis, so a write is seen at once.
      await writer.store.putEvents([profile('hot di', { name: 'two' }, T + 1)]);
      const hits = instance.cache.stats.hits;
      expect(await read()).toContain('two');
      expect(instance.cache.stats.hits).toBe(hits);
      // Back by itself (ioredis reconnects), tracking on again: used again, and still true.
      await until(() => instance.cache.active);
      expect(await read()).toContain('two');
      expect(await read()).toContain('two');
      expect(instance.cache.stats.hits).toBe(hits + 1);
      await writer.store.putEvents([profile('hot di', { name: 'three' }, T + 2)]);
      expect(await timeUntil(read, (text) => text.includes('three'))).toBeLessThan(50);
    } finally {
      admin.disconnect();
    }
  });

  it('an answer that raced an invalidation of its key is not kept', async () => {
    const { writer, instance } = await setUp();
    const key = `${writer.prefix}race`;
    const admin = (await writer.connectAdmin()) as Redis;
    try {
      await admin.set(key, 'old');
      // The read answers 'old'; the key is written before the answer is handed back, and its
      // invalidation arrives meanwhile: the stale answer is returned (it was true when read) but not kept.
      const stale = await instance.cache.get([key], undefined, async (send) => {
        const answer = await send();
        await admin.set(key, 'new');
        await sleep(30);
        return answer;
      });
      expect(stale.map(String)).toEqual(['old']);
      const direct = <T>(send: () => Promise<T>) => send();
      expect((await instance.cache.get([key], undefined, direct)).map(String)).toEqual(['new']);
      expect((await instance.cache.get([key], undefined, direct)).map(String)).toEqual(['new']);
    } finally {
      admin.disconnect();
    }
  });

  it('a mark is kept no longer than its TTL; the cache holds at most its size', async () => {
    const { writer, instance } = await setUp();
    const pubkey = pubkeyOf('hot ed');
    await writer.store.marks.set([`profile:${pubkey}`], 1);
    expect((await instance.store.getProfilesWithMarks([pubkey]))[0]?.marked).toBe(true);
    expect((await instance.store.getProfilesWithMarks([pubkey]))[0]?.marked).toBe(true);
    await sleep(1100);
    expect((await instance.store.getProfilesWithMarks([pubkey]))[0]?.marked).toBe(false);

    const small = await cachedInstance(writer.url, writer.prefix, 64 * 1024);
    try {
      const notes = Array.from({ length: 200 }, (_, n) => signed('hot fay', { created_at: T + n, content: 'x'.repeat(1000) }));
      await writer.store.putEvents(notes);
      for (const note of notes) await small.store.getEvents([note.id]);
      expect(small.cache.size).toBeLessThanOrEqual(64 * 1024);
      expect(small.cache.size).toBeGreaterThan(32 * 1024);
    } finally {
      await small.server.close();
      await small.store.close();
    }
  });
});
