import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import { NOTIFICATION_TYPES, type NotificationType, TYPE_LETTERS } from '../src/nostr/notifications.js';
import { LmdbEventStore } from '../src/store/embedded/lmdb-event-store.js';
import type { EventStore } from '../src/store/event-store.js';
import { redisKeys } from '../src/store/redis/keys.js';
import { NOTIFICATION_COUNTS_SCRIPT, NOTIFICATIONS_PAGE_SCRIPT, ORDER_FUNCTIONS } from '../src/store/redis/lua-scripts.js';
import { notificationPlace } from '../src/store/notification-index.js';
import type { RedisClient } from '../src/store/redis/mget-by-slot.js';
import { checkRelations, rebuildRelations } from '../src/store/relation-check.js';
import { deletion } from './support/deletion-conformance.js';
import { pubkeyOf, signed } from './support/events.js';
import { createTestStore } from './support/test-store.js';

/**
 * A recipient of a thousand and more notifications, which Redis keeps in a page order split into
 * buckets of at most 128 (lua-scripts.ts ORDER_FUNCTIONS): written in a shuffled order, then most
 * taken away in another, then all. At each step every page, every count (with and without since)
 * and `relations check` agree with the notifications worked out from the events, on both stores;
 * on Redis the buckets hold each member once, none over 128, none empty, and nothing stays once the
 * last notification goes.
 */

const T = 1_700_000_000;
const V = 'bucketed-v';
const BUCKET = 128;

/** A seeded generator (mulberry32): the same shuffles on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const out = [...items];
  for (let index = out.length - 1; index > 0; index--) {
    const other = Math.floor(next() * (index + 1));
    [out[index], out[other]] = [out[other] as T, out[index] as T];
  }
  return out;
}

const target = signed(V, { created_at: T, content: 'the note everyone reacts to' });
// Created_at over 200 seconds: many share a second, so pages and buckets split seconds.
const at = (index: number) => T + 1 + ((index * 7919) % 200);
const notifying: { event: NostrEvent; author: string; type: NotificationType }[] = [
  ...Array.from({ length: 600 }, (_, index) => ({ author: `bk-m-${index}`, type: 'MENTION' as const, at: at(index), tags: [['p', pubkeyOf(V)]], kind: 1 })),
  ...Array.from({ length: 450 }, (_, index) => ({ author: `bk-r-${index}`, type: 'REACTION' as const, at: at(index + 600), tags: [['e', target.id]], kind: 7 })),
  ...Array.from({ length: 250 }, (_, index) => ({ author: `bk-f-${index}`, type: 'FOLLOW' as const, at: at(index + 1050), tags: [['p', pubkeyOf(V)]], kind: 3 })),
].map(({ author, type, at: createdAt, tags, kind }) => ({ author, type, event: signed(author, { kind, created_at: createdAt, tags, content: kind === 7 ? '+' : kind === 1 ? 'hello' : '' }) }));

interface Subject {
  store: EventStore;
  /** Redis only: its client and key prefix, to look at the buckets. */
  redis?: { client: RedisClient; prefix: string };
  cleanup(): Promise<void>;
}

const STORES: { name: string; open(): Promise<Subject> }[] = [
  {
    name: 'Redis',
    async open() {
      const opened = await createTestStore();
      return { store: opened.store, redis: { client: opened.client, prefix: opened.prefix }, cleanup: opened.cleanup };
    },
  },
  {
    name: 'embedded (LMDB)',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-buckets-'));
      const store = new LmdbEventStore(dir);
      return {
        store,
        cleanup: async () => {
          await store.close().catch(() => {});
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

/** The page order as the buckets hold it: every member, and each bucket's size. */
async function buckets({ client, prefix }: { client: RedisClient; prefix: string }) {
  const { order } = redisKeys(prefix).notifications(pubkeyOf(V));
  const directoryKey = order.replace(/nz:\{([^}]*)\}$/, 'nb:{$1}');
  const countsKey = order.replace(/nz:\{([^}]*)\}$/, 'nk:{$1}');
  const lows = await client.zrangeBuffer(directoryKey, '0', '-1');
  const keys = [order, ...lows.map((low) => `${order}:${String.fromCharCode(low[0] as number)}${low.subarray(8, 16).toString('hex')}`)];
  const sizes: number[] = [];
  const members: string[] = [];
  for (const [index, key] of keys.entries()) {
    const held = await client.zrangeBuffer(key, '0', '-1');
    sizes.push(held.length);
    // Each bucket from its low on (the first from anything).
    const low = lows[index - 1];
    if (low) expect(Buffer.compare(held[0] as Buffer, low)).toBeGreaterThanOrEqual(0);
    members.push(...held.map((member) => member.toString('hex')));
  }
  return { lows: lows.length, sizes, members, keys: [...keys.slice(1), directoryKey, countsKey], counts: await client.hgetall(countsKey), exists: await client.exists(order, directoryKey, countsKey) };
}

describe.each(STORES)('a recipient of many notifications, its page order in buckets ($name)', ({ open }) => {
  const context = {} as { subject: Subject };
  const next = seeded(128);

  beforeAll(async () => {
    context.subject = await open();
  });

  afterAll(async () => {
    await context.subject?.cleanup();
  });

  /** What every read must say of the notifications held. */
  async function agrees(held: typeof notifying): Promise<void> {
    const { store, redis } = context.subject;
    const expected = [...held].sort((a, b) => b.event.created_at - a.event.created_at || (a.event.id < b.event.id ? -1 : 1));
    for (const first of [1, 37, 128, 500]) {
      const read: string[] = [];
      let after: { createdAt: number; id: string } | null = null;
      for (;;) {
        const entries = await store.relations.notifications(pubkeyOf(V), NOTIFICATION_TYPES, after, first);
        read.push(...entries.map((entry) => `${entry.type} ${entry.id}`));
        if (entries.length < first) break;
        const last = entries[entries.length - 1] as { createdAt: number; id: string };
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(read).toEqual(expected.map(({ type, event }) => `${type} ${event.id}`));
    }
    // One type at a time, and two together, from a cursor in the middle.
    const middle = expected[Math.floor(expected.length / 2)];
    if (middle) {
      const cursor = { createdAt: middle.event.created_at, id: middle.event.id };
      const rest = expected.slice(Math.floor(expected.length / 2) + 1);
      for (const types of [['REACTION'], ['MENTION', 'FOLLOW']] as NotificationType[][]) {
        const entries = await store.relations.notifications(pubkeyOf(V), types, cursor, 60);
        expect(entries.map((entry) => entry.id)).toEqual(rest.filter(({ type }) => types.includes(type)).slice(0, 60).map(({ event }) => event.id));
      }
    }
    for (const since of [undefined, 0, T, T + 1, T + 37, T + 100, T + 101, T + 199, T + 200, T + 201]) {
      const counts = await store.relations.notificationCounts(pubkeyOf(V), since);
      const kept = held.filter(({ event }) => since === undefined || event.created_at >= since);
      expect([since, counts]).toEqual([
        since,
        expect.objectContaining({
          MENTION: kept.filter(({ type }) => type === 'MENTION').length,
          REACTION: kept.filter(({ type }) => type === 'REACTION').length,
          FOLLOW: kept.filter(({ type }) => type === 'FOLLOW').length,
          REPLY: 0,
        }),
      ]);
    }
    expect((await checkRelations(store)).notificationDifferences).toEqual([]);
    if (!redis) return;
    const laid = await buckets(redis);
    expect(laid.members).toHaveLength(held.length);
    expect(new Set(laid.members).size).toBe(held.length);
    expect(Math.max(0, ...laid.sizes)).toBeLessThanOrEqual(BUCKET);
    if (held.length === 0) {
      expect(laid.exists).toBe(0);
      return;
    }
    // No empty bucket; past 128 there is a directory, and its counts are the types' counts.
    expect(laid.sizes.every((size) => size > 0)).toBe(true);
    if (held.length > BUCKET) {
      expect(laid.lows).toBeGreaterThanOrEqual(Math.ceil(held.length / BUCKET) - 1);
    }
    if (held.length > 0) {
      // Sparse buckets joined: after most went, few keys are left (1,300 written: 15 buckets).
      expect(laid.lows).toBeLessThanOrEqual(Math.ceil(held.length / 32));
    }
    if (held.length > BUCKET) {
      for (const type of ['MENTION', 'REACTION', 'FOLLOW'] as const) {
        expect([type, Number(laid.counts[TYPE_LETTERS[type]] ?? 0)]).toEqual([type, held.filter((item) => item.type === type).length]);
      }
    }
  }

  it('written in a shuffled order, every page and count is whole; on Redis no bucket passes 128', async () => {
    const { store } = context.subject;
    const order = shuffled(notifying, next);
    // The note in the middle: reactions before it notify once it is here.
    const events = [...order.slice(0, 500).map(({ event }) => event), target, ...order.slice(500).map(({ event }) => event)];
    for (let start = 0; start < events.length; start += 97) await store.putEvents(events.slice(start, start + 97));
    await agrees(notifying);
  }, 120_000);

  it('most taken away in another order (deleted, follow lists replaced), then all: the buckets shrink and go', async () => {
    const { store } = context.subject;
    const order = shuffled(notifying, next);
    const gone = (items: typeof notifying) =>
      items.map(({ event, author, type }) =>
        type === 'FOLLOW' ? signed(author, { kind: 3, created_at: event.created_at + 1, tags: [['p', pubkeyOf('someone else')]] }) : deletion(author, { ids: [event.id], at: event.created_at + 1000 }),
      );
    const first = order.slice(0, 1100);
    for (let start = 0; start < first.length; start += 89) await store.putEvents(gone(first.slice(start, start + 89)));
    await agrees(order.slice(1100));
    await store.putEvents(gone(order.slice(1100)));
    await agrees([]);
  }, 120_000);
});

describe('a page order written before buckets (one sorted set past 512), on Redis', () => {
  it('is read and written as one set, and relations rebuild splits it', async () => {
    const opened = await createTestStore();
    try {
      const { store, client, prefix } = opened;
      const mentions = notifying.filter(({ type }) => type === 'MENTION');
      await store.putEvents(mentions.map(({ event }) => event));
      // Laid out as before buckets: every member in nz:{T}, no directory, no counts.
      const redis = { client, prefix };
      const before = await buckets(redis);
      const { order } = redisKeys(prefix).notifications(pubkeyOf(V));
      expect(before.keys.length).toBeGreaterThan(2);
      // One key at a time: on a cluster DEL of many keys needs them in one slot (they are: one tag).
      for (const key of before.keys) await client.del(key);
      await client.zadd(order, ...before.members.flatMap((member) => ['0', Buffer.from(member, 'hex')]));
      expect(await client.zcard(order)).toBe(600);
      const read = async () => (await store.relations.notifications(pubkeyOf(V), NOTIFICATION_TYPES, null, 1000)).map((entry) => entry.id);
      const expected = (held: typeof mentions) => [...held].sort((a, b) => b.event.created_at - a.event.created_at || (a.event.id < b.event.id ? -1 : 1)).map(({ event }) => event.id);
      expect(await read()).toEqual(expected(mentions));
      expect((await store.relations.notificationCounts(pubkeyOf(V), T + 100)).MENTION).toBe(mentions.filter(({ event }) => event.created_at >= T + 100).length);
      // One more and one fewer: still one set.
      const more = { author: 'bk-late', type: 'MENTION' as const, event: signed('bk-late', { created_at: T + 50, content: 'late', tags: [['p', pubkeyOf(V)]] }) };
      const [dropped] = mentions;
      await store.putEvents([more.event, deletion(dropped!.author, { ids: [dropped!.event.id], at: T + 5000 })]);
      const held = [...mentions.slice(1), more];
      expect(await read()).toEqual(expected(held));
      expect((await store.relations.notificationCounts(pubkeyOf(V))).MENTION).toBe(600);
      expect((await buckets(redis)).lows).toBe(0);
      // relations rebuild writes it again, in buckets.
      await rebuildRelations(store);
      const after = await buckets(redis);
      expect(after.lows).toBeGreaterThanOrEqual(Math.ceil(600 / BUCKET) - 1);
      expect(Math.max(...after.sizes)).toBeLessThanOrEqual(BUCKET);
      expect(await read()).toEqual(expected(held));
      expect((await checkRelations(store)).notificationDifferences).toEqual([]);
    } finally {
      await opened.cleanup();
    }
  }, 120_000);
});

describe('bucket names that collide (ids chosen to share the 8 bytes a bucket is named by), on Redis', () => {
  it('a split never lands on a bucket in use: every member is kept once, and the counts hold', async () => {
    const opened = await createTestStore();
    try {
      const { client, prefix } = opened;
      // The order functions alone, on members as the store writes them (a type letter and a place).
      client.defineCommand('orderTest', { numberOfKeys: 1, lua: `${ORDER_FUNCTIONS}\nreturn orderAdd(KEYS[1], ARGV[1])` });
      client.defineCommand('orderPageTest', { numberOfKeys: 1, lua: NOTIFICATIONS_PAGE_SCRIPT });
      client.defineCommand('orderCountsTest', { numberOfKeys: 1, lua: NOTIFICATION_COUNTS_SCRIPT });
      const commands = client as unknown as {
        orderTest(order: string, member: Buffer): Promise<number>;
        orderPageTestBuffer(order: string, limit: string, min: Buffer, max: Buffer): Promise<Buffer[]>;
        orderCountsTest(order: string, letter: string, bound: string): Promise<number[]>;
      };
      const { order } = redisKeys(prefix).notifications(pubkeyOf(V));
      const member = (id: string) => Buffer.concat([Buffer.from('M'), notificationPlace({ createdAt: T, id: id.padEnd(64, '0') })]);
      const shared = '5050505050505050';
      const hex2 = (n: number) => n.toString(16).padStart(2, '0');
      // The first split makes A a low; the bucket from A then fills, and its split would make B
      // (the same 8 bytes as A) a low named as A's bucket (a review's reproduction).
      const members = [
        ...Array.from({ length: 64 }, (_, n) => member(`10${hex2(n)}`)),
        member(`${shared}00`),
        ...Array.from({ length: 63 }, (_, n) => member(`${shared}01${hex2(n)}`)),
        member(`${shared}80`),
        ...Array.from({ length: 64 }, (_, n) => member(`60${hex2(n)}`)),
      ];
      for (const each of members) expect(await commands.orderTest(order, each)).toBe(1);
      const page = await commands.orderPageTestBuffer(order, '1000', Buffer.from('[M'), Buffer.from('(M\xff', 'latin1'));
      const expected = members.map((each) => each.toString('hex')).sort();
      expect(page.map((each) => each.toString('hex'))).toEqual(expected);
      expect(await commands.orderCountsTest(order, 'M', '')).toEqual([members.length]);
      const laid = await buckets({ client, prefix });
      expect(laid.members.sort()).toEqual(expected);
      expect(new Set(laid.keys).size).toBe(laid.keys.length);
    } finally {
      await opened.cleanup();
    }
  });
});
