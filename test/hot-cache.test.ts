import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { Redis } from 'ioredis';
import fc from 'fast-check';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { metrics, registry } from '../src/metrics/metrics.js';
import { connectHotCache } from '../src/store/redis/connect.js';
import { HEALTH_CHECK_MS, HotCache, trackingRedirectsTo } from '../src/store/redis/hot-cache.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { createTestStore, type TestStore, testClusterNodes } from './support/test-store.js';
import { sleep, timeUntil, until } from './support/polling.js';
import { getJson } from './support/test-server.js';
import { type CachedInstance, cachedInstance } from './support/hot-cache-instance.js';

const T = 1_700_000_000;
/** A /user-profile answer's profile content. */
const contentOf = (answer: { body: unknown }) => (answer.body as { profile?: { content: string } }).profile?.content;


/** A TCP proxy in front of Redis whose faults the test controls. */
interface Proxy {
  url: string;
  /** Server → client bytes are dropped (a half-open path: nothing closes, nothing arrives). */
  blackhole: boolean;
  /** Called with each client → server chunk; return 'kill' to drop the connection before forwarding it. */
  onClientData?: (chunk: Buffer) => 'kill' | 'forward';
  connections: number;
  close(): Promise<void>;
}

async function startProxy(redisUrl: string): Promise<Proxy> {
  const target = new URL(redisUrl);
  const sockets = new Set<net.Socket>();
  const proxy: Proxy = {
    url: '',
    blackhole: false,
    connections: 0,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((client) => {
    proxy.connections++;
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => {
      if (proxy.onClientData?.(chunk) === 'kill') return kill();
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!proxy.blackhole) client.write(chunk);
    });
    client.on('error', kill);
    upstream.on('error', kill);
    client.on('close', kill);
    upstream.on('close', kill);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return proxy;
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
    // Read from Redis, then made again from the cache and kept (answer-cache.ts: the second time).
    for (let n = 0; n < 2; n++) expect(contentOf(await getJson(url))).toBe('{"name":"one"}');
    const admin = (await writer.connectAdmin()) as Redis;
    try {
      const commands = async () => Number(/\r\ncmdstat_mget:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
      const before = await commands();
      const { hits, answers } = instance.cache.stats;
      for (let n = 0; n < 5; n++) expect(contentOf(await getJson(url))).toBe('{"name":"one"}');
      // Each served as the answer kept the first time (answer-cache.ts): not even a read of the cache.
      expect(instance.cache.stats.answers - answers).toBe(5);
      expect(instance.cache.stats.hits - hits).toBe(0);
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
    expect(scraped).toContain(`nostr_lookup_hot_cache_answers_served_total ${instance.cache.stats.answers}\n`);
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
      const stale = await instance.cache.get([key], {}, async (send) => {
        const answer = await send();
        await admin.set(key, 'new');
        await sleep(30);
        return answer;
      });
      expect(stale.map(String)).toEqual(['old']);
      const direct = <T>(send: () => Promise<T>) => send();
      expect((await instance.cache.get([key], {}, direct)).map(String)).toEqual(['new']);
      expect((await instance.cache.get([key], {}, direct)).map(String)).toEqual(['new']);
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

  describe('after review (helper): faults at the edges of the connections', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    });
    const direct = <T>(send: () => Promise<T>) => send();

    async function writerStore(): Promise<{ writer: TestStore; admin: Redis }> {
      const writer = await createTestStore();
      const admin = (await writer.connectAdmin()) as Redis;
      cleanups.push(async () => {
        admin.disconnect();
        await writer.cleanup();
      });
      return { writer, admin };
    }

    /** A cache whose reader reaches Redis at `readerUrl` and subscriber at `subscriberUrl` (a proxy, for faults). */
    function cacheOn(readerUrl: string, subscriberUrl: string, maxBytes: number): HotCache {
      const { reader } = connectHotCache({ url: readerUrl, timeoutMs: 2000 });
      const { subscriber, reader: unused } = connectHotCache({ url: subscriberUrl, timeoutMs: 2000 });
      unused.disconnect();
      const cache = new HotCache({ reader, subscriber }, maxBytes);
      cleanups.push(() => cache.close());
      return cache;
    }

    it('an invalidation path that goes silent (no close, nothing arrives) turns the cache off within two checks, and it comes back on a fresh connection', async () => {
      const { writer, admin } = await writerStore();
      const proxy = await startProxy(inject('redisUrl'));
      cleanups.push(() => proxy.close());
      const cache = cacheOn(inject('redisUrl'), proxy.url, 1 << 20);
      await until(() => cache.active);
      const key = `${writer.prefix}silent`;
      await admin.set(key, 'old');
      expect((await cache.get([key], {}, direct)).map(String)).toEqual(['old']);
      proxy.blackhole = true;
      await admin.set(key, 'new');
      await until(() => !cache.active, 2 * HEALTH_CHECK_MS + 500);
      expect((await cache.get([key], {}, direct)).map(String)).toEqual(['new']);
      proxy.blackhole = false;
      await until(() => cache.active, 5000);
      await admin.set(key, 'newer');
      expect(await timeUntil(async () => String((await cache.get([key], {}, direct))[0]), (value) => value === 'newer')).toBeLessThan(50);
    });

    it('a healthy path passes its checks: still on, on the same connection, two checks later; TRACKINGINFO read in any shape never throws', async () => {
      const { writer } = await writerStore();
      const cache = cacheOn(writer.url, writer.url, 1 << 20);
      await until(() => cache.active);
      const id = cache.invalidationClientId;
      await sleep(2 * HEALTH_CHECK_MS + 300);
      expect(cache.active).toBe(true);
      expect(cache.invalidationClientId).toBe(id);
      expect(trackingRedirectsTo(new Map<string, unknown>([['flags', ['on']], ['redirect', 7], ['prefixes', []]]), 7)).toBe(true);
      expect(trackingRedirectsTo(['flags', ['on', 'broken_redirect'], 'redirect', 7], 7)).toBe(false);
      expect(trackingRedirectsTo(['flags', ['off'], 'redirect', -1], undefined)).toBe(false);
      // Objects whose toString is not a function, or with no prototype at all, once made String() throw (a CI seed found it).
      expect(trackingRedirectsTo([{ toString: false }, {}], undefined)).toBe(false);
      expect(trackingRedirectsTo(['flags', [Object.create(null)], 'redirect', { valueOf: false, toString: false }], 7)).toBe(false);
      const hostile = fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true });
      fc.assert(fc.property(hostile, fc.option(fc.integer()), (info, id) => typeof trackingRedirectsTo(info, id ?? undefined) === 'boolean'), { numRuns: 2000 });
    });

    it('the subscriber dropped while its SUBSCRIBE is in flight: the cache comes back by itself, redirected to the live connection', async () => {
      const { writer, admin } = await writerStore();
      const proxy = await startProxy(inject('redisUrl'));
      cleanups.push(() => proxy.close());
      let dropped = false;
      proxy.onClientData = (chunk) => {
        if (!dropped && chunk.toString().toLowerCase().includes('subscribe')) {
          dropped = true;
          return 'kill';
        }
        return 'forward';
      };
      const cache = cacheOn(inject('redisUrl'), proxy.url, 1 << 20);
      await until(() => cache.active, 5000);
      expect(dropped).toBe(true);
      const key = `${writer.prefix}resubscribed`;
      await admin.set(key, 'old');
      expect((await cache.get([key], {}, direct)).map(String)).toEqual(['old']);
      await admin.set(key, 'new');
      expect(await timeUntil(async () => String((await cache.get([key], {}, direct))[0]), (value) => value === 'new')).toBeLessThan(50);
    });

    it('a kept value is a copy: it does not hold alive the socket read it came in (HOT_CACHE_MB bounds the memory)', async () => {
      const { writer, admin } = await writerStore();
      const maxBytes = 64 * 1024;
      const cache = cacheOn(inject('redisUrl'), inject('redisUrl'), maxBytes);
      await until(() => cache.active);
      const big = 'x'.repeat(100_000);
      for (let n = 0; n < 100; n++) {
        await admin.mset(`${writer.prefix}small:${n}`, 's'.repeat(100), `${writer.prefix}big:${n}`, big);
        await cache.get([`${writer.prefix}small:${n}`, `${writer.prefix}big:${n}`], {}, direct);
      }
      const entries = (cache as unknown as { slots: Map<string, { value: Buffer | null }> }).slots;
      const retained = new Set<ArrayBufferLike>();
      let retainedBytes = 0;
      for (const [, entry] of entries.entries()) {
        const buffer = entry.value?.buffer;
        if (buffer && !retained.has(buffer)) {
          retained.add(buffer);
          retainedBytes += buffer.byteLength;
        }
      }
      expect(cache.size).toBeLessThanOrEqual(maxBytes);
      // Node pools small copies in 8 KiB slabs: at most one slab per entry's worth of bytes.
      expect(retainedBytes).toBeLessThanOrEqual(2 * maxBytes);
    });

    it('ids that do not exist are not kept: asking for many never pushes out what others read', async () => {
      const { writer, admin } = await writerStore();
      const cache = cacheOn(inject('redisUrl'), inject('redisUrl'), 256 * 1024);
      await until(() => cache.active);
      const hot = `${writer.prefix}e:hot`;
      await admin.set(hot, 'h'.repeat(400));
      await cache.get([hot], {}, direct);
      for (let n = 0; n < 20; n++) {
        const ids = Array.from({ length: 500 }, () => `${writer.prefix}e:${randomUUID()}${randomUUID()}`);
        await cache.get(ids, {}, direct);
      }
      const hits = cache.stats.hits;
      expect((await cache.get([hot], {}, direct)).map(String)).toEqual(['h'.repeat(400)]);
      expect(cache.stats.hits).toBe(hits + 1);
      // An absent mark beside a present profile is kept (most profiles have none in force); beside an absent one, not.
      const profileKey = `${writer.prefix}r:0:present`;
      await admin.set(profileKey, '{}');
      const absent = [`${writer.prefix}m:a`, `${writer.prefix}r:0:absent`, `${writer.prefix}m:b`];
      await cache.get([profileKey, absent[0] as string, absent[1] as string, absent[2] as string], { keepAbsentWith: [undefined, 0, undefined, 2] }, direct);
      const before = cache.stats.hits;
      await cache.get([profileKey, absent[0] as string], {}, direct);
      expect(cache.stats.hits).toBe(before + 1);
      await cache.get([absent[1] as string, absent[2] as string], {}, direct);
      expect(cache.stats.hits).toBe(before + 1);
    });
  });
});
