import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { serializeEvent } from '../src/nostr/event.js';
import { CorruptDataError } from '../src/store/event-store.js';
import { FollowWrites } from '../src/store/follow-index.js';
import { groupBySlot } from '../src/store/redis/mget-by-slot.js';
import { FOLLOW_BUCKET_SIZE, type RedisRelationIndex } from '../src/store/redis/redis-relation-index.js';
import type { Held } from '../src/store/event-store.js';
import { DELETED } from '../src/store/tombstones.js';
import { readMember } from '../src/store/redis/author-list.js';
import { redisKeys } from '../src/store/redis/keys.js';
import { rebuildRelations } from '../src/store/relation-check.js';
import { deletion, vanish } from './support/deletion-conformance.js';
import { describeEventStoreConformance } from './support/event-store-conformance.js';
import { profile, pubkeyOf, signed } from './support/events.js';
import { createTestStore } from './support/test-store.js';

describeEventStoreConformance('Redis', (options) => createTestStore(undefined, options));

const T = 1_700_000_000;

/** What a read says: the event id, 'deleted', or null. */
const said = (held: Held) => (held === DELETED ? 'deleted' : (held?.event?.id ?? null));

/** An author's list (keys.ts `author`): its notes and what a request to vanish reads. */
const authorList = (prefix: string, pubkey: string) => redisKeys(prefix).author(pubkey).list;

/**
 * The follower layout's tests run at a bucket size of 96 (the size before b6bd54e, FOLLOW_BUCKET_SIZE
 * is 384 now): the same moves, folds and crowded buckets at a quarter of the followers. One test
 * below checks the default's thresholds.
 */
const SMALL_BUCKETS = { followBucketSize: 96 };

describe('Redis specifics', () => {
  it("an author's list: one key for notes, zap-less kinds and addresses; a kind's range holds its events only, up to kind 65535; rebuild keeps the addresses a request to vanish bars", async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const author = pubkeyOf('lister');
      const note = signed('lister', { created_at: T });
      const last = signed('lister', { kind: 65535, created_at: T + 1 });
      const article = signed('lister', { kind: 30023, created_at: T + 2, tags: [['d', 'essay']] });
      const follows = signed('lister', { kind: 3, created_at: T + 3 });
      const relays = signed('lister', { kind: 10002, created_at: T + 4, tags: [['r', 'wss://relay.example.com']] });
      await store.putEvents([note, last, article, follows, relays, profile('lister', { name: 'lister' }, T + 5)]);
      const members = (await client.zrangeBuffer(authorList(prefix, author), '0', '-1')).map((member) => readMember(member, author));
      // One key: the three events in kind order, then the addresses in text order (every version of one shares its member).
      expect(members).toEqual([
        { kind: 1, position: { createdAt: T, id: note.id, bytes: serializeEvent(note).length } },
        { kind: 30023, position: { createdAt: T + 2, id: article.id, bytes: serializeEvent(article).length } },
        { kind: 65535, position: { createdAt: T + 1, id: last.id, bytes: serializeEvent(last).length } },
        { address: `0:${author}` },
        { address: `10002:${author}` },
        { address: `3:${author}` },
        { address: `30023:${author}:essay` },
      ]);
      expect(await client.exists(`${prefix}a:${author}`)).toBe(0);
      // Kind 65535's range stops before the addresses.
      expect(await store.relations.notes(author, [65535], null, 10)).toEqual([{ createdAt: T + 1, id: last.id, bytes: serializeEvent(last).length }]);
      // A rebuild replays the events and keeps the addresses, which only the event store writes.
      await rebuildRelations(store);
      expect((await client.zrangeBuffer(authorList(prefix, author), '0', '-1')).map((member) => readMember(member, author))).toEqual(members);
      expect(await store.putEvents([vanish('lister', T + 10)])).toEqual(['applied']);
      expect((await store.getEvents([note.id, last.id, article.id, follows.id, relays.id])).map(said)).toEqual(['deleted', 'deleted', 'deleted', 'deleted', 'deleted']);
      expect((await store.getReplaceable(10002, [author])).map(said)).toEqual(['deleted']);
      expect(await store.relations.notes(author, [1, 30023, 65535], null, 10)).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('a writer that stopped after storing an event, before listing it: the retried put (duplicate) lists it, so a request to vanish finds it (review F1)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const note = signed('stopper', { created_at: T, content: 'written, then the writer stopped' });
      const receipt = signed('stopper', { kind: 9735, created_at: T + 1 });
      // What nostrPutRegular leaves before the relations are written (a process killed, a timeout).
      await client.set(`${prefix}e:${note.id}`, serializeEvent(note));
      // The same through the code: the list's script fails once (a stand-in for any error), the batch is retried.
      await client.set(authorList(prefix, pubkeyOf('stopper')), 'not a sorted set');
      await expect(store.putEvents([receipt])).rejects.toThrow();
      await client.del(authorList(prefix, pubkeyOf('stopper')));
      expect(await store.putEvents([note, receipt])).toEqual(['duplicate', 'duplicate']);
      expect(await store.putEvents([vanish('stopper', T + 10)])).toEqual(['applied']);
      expect((await store.getEvents([note.id, receipt.id])).map(said)).toEqual(['deleted', 'deleted']);
      // A duplicate of a deleted event is not listed again.
      const gone = signed('stopper 2', { created_at: T });
      await store.putEvents([gone, deletion('stopper 2', { ids: [gone.id] })]);
      expect(await store.putEvents([gone])).toEqual(['deleted']);
      expect((await client.zrangeBuffer(authorList(prefix, pubkeyOf('stopper 2')), '0', '-1')).map((member) => readMember(member, pubkeyOf('stopper 2')))).toEqual([
        { kind: 5, position: expect.objectContaining({ createdAt: T + 100 }) },
      ]);
    } finally {
      await cleanup();
    }
  });

  it('relations rebuild keeps the authors\' lists readable throughout (a request to vanish during it finds every event), prunes what is not servable, and sweeps every kept time of a request to vanish again (review F2, F5)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const note = signed('rebuilt', { created_at: T });
      const receipt = signed('rebuilt', { kind: 9735, created_at: T + 1 });
      const ephemeral = signed('rebuilt', { kind: 20001, created_at: T + 2 });
      await store.putEvents([note, receipt, ephemeral]);
      // The rebuild's first step; its replay has not reached this author yet.
      await store.relations.clear();
      expect(await store.putEvents([vanish('rebuilt', T + 10)])).toEqual(['applied']);
      expect((await store.getEvents([note.id, receipt.id, ephemeral.id])).map(said)).toEqual(['deleted', 'deleted', 'deleted']);

      // A member whose event is gone (a writer stopped between its tombstone and its relations) is pruned.
      const kept = signed('pruned', { created_at: T });
      const stale = signed('pruned', { created_at: T + 1 });
      await store.putEvents([kept, stale]);
      await client.set(`${prefix}e:${stale.id}`, `x${stale.pubkey}`);
      // An instance of an earlier version applied a request to vanish reading `a:` only: the time is
      // kept, the events listed here were not swept.
      const missed = signed('upgraded', { created_at: T });
      const article = signed('upgraded', { kind: 30023, created_at: T + 1, tags: [['d', 'essay']] });
      await store.putEvents([missed, article]);
      await client.set(`${prefix}v:${pubkeyOf('upgraded')}`, String(T + 10));
      await rebuildRelations(store);
      expect(await store.relations.notes(pubkeyOf('pruned'), [1], null, 10)).toEqual([{ createdAt: T, id: kept.id, bytes: serializeEvent(kept).length }]);
      expect((await store.getEvents([kept.id, missed.id, article.id])).map(said)).toEqual([kept.id, 'deleted', 'deleted']);
      expect(await store.relations.notes(pubkeyOf('upgraded'), [1, 30023], null, 10)).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it("a ledger entry of the earlier format (the id's first 12 bytes) still counts its relation once: a replay moves it to the whole id, a deletion takes it away", async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const target = signed('ledger-author', { created_at: T });
      const quote = signed('ledger-quoter', { created_at: T + 1, content: 'quoting', tags: [['q', target.id]] });
      await store.putEvents([target, quote]);
      const [tally] = redisKeys(prefix).relations(target.id);
      const entry = Buffer.concat([Buffer.from('i'), Buffer.from(quote.id, 'hex')]);
      const legacy = Buffer.from(quote.id.slice(0, 24), 'hex');
      const size = await client.hget(tally, entry);
      expect(Number(size)).toBeGreaterThan(100);
      expect((await store.relations.relatedIds(target.id, 10)).events).toEqual([{ id: quote.id, bytes: Number(size) }]);
      // As the earlier format kept it.
      await client.hdel(tally, entry);
      await client.hset(tally, legacy, '1');
      await store.putEvents([quote]);
      expect((await store.relations.stats([target.id]))[0]?.quotes).toBe(1);
      expect([await client.hget(tally, entry), await client.hexists(tally, legacy)]).toEqual([size, 0]);
      await client.hdel(tally, entry);
      await client.hset(tally, legacy, '1');
      await store.putEvents([deletion('ledger-quoter', { ids: [quote.id] })]);
      expect((await store.relations.stats([target.id]))[0]?.quotes).toBe(0);
      expect([await client.hget(tally, entry), await client.hexists(tally, legacy)]).toEqual(['-', 0]);
      expect((await store.relations.relatedIds(target.id, 10)).events).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('relatedIds reads past removed entries within the scan it is given: a ledger of 20,000 tombstones is not read whole', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const target = signed('tomb-author', { created_at: T });
      const quote = signed('tomb-quoter', { created_at: T + 1, content: 'quoting', tags: [['q', target.id]] });
      await store.putEvents([target, quote]);
      const [tally] = redisKeys(prefix).relations(target.id);
      for (let start = 0; start < 20_000; start += 1000) {
        const fields = Array.from({ length: 1000 }, (_, n) => [Buffer.concat([Buffer.from('i'), Buffer.alloc(28), Buffer.from((start + n).toString(16).padStart(8, '0'), 'hex')]), '-']).flat();
        await client.hset(tally, ...fields);
      }
      // What each HSCAN page (500 asked) hands over is taken from the scan, and no page is asked
      // for once it is spent: some sixteen pages, not the forty a whole read takes.
      const scan = { entries: 8000 };
      const cut = await store.relations.relatedIds(target.id, 2000, scan);
      expect(cut.complete).toBe(false);
      expect(scan.entries).toBeLessThanOrEqual(0);
      expect(scan.entries).toBeGreaterThan(-1000);
      // A small ledger takes what it holds, not a page's worth.
      const small = { entries: 8000 };
      await store.relations.relatedIds(quote.id, 2000, small);
      expect(small.entries).toBe(8000);
      // Given room, the one live entry is found.
      expect(await store.relations.relatedIds(target.id, 2000)).toEqual({ events: [{ id: quote.id, bytes: expect.any(Number) }], complete: true });
    } finally {
      await cleanup();
    }
  });

  it('a request to vanish also reads the author index of a store written before the author\'s list (`a:<pubkey>`)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const author = pubkeyOf('elder');
      const old = signed('elder', { created_at: T });
      const newer = signed('elder', { created_at: T + 20 });
      const follows = signed('elder', { kind: 3, created_at: T + 1 });
      await store.putEvents([old, newer, follows]);
      // As an earlier version kept them: ids scored by created_at, addresses scored -1, no list.
      await client.del(authorList(prefix, author));
      await client.zadd(`${prefix}a:${author}`, T, old.id, T + 20, newer.id, -1, '@3');
      expect(await store.putEvents([vanish('elder', T + 10)])).toEqual(['applied']);
      expect((await store.getEvents([old.id, newer.id, follows.id])).map(said)).toEqual(['deleted', newer.id, 'deleted']);
      expect(await client.zrange(`${prefix}a:${author}`, '0', '-1')).toEqual(['@3', newer.id]);
    } finally {
      await cleanup();
    }
  });

  it('followers are a log of 33-byte records (one string, its count in its header) until 96, then 16 bucket logs by the first hex digit, and one log again when most are gone; pages in pubkey order', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const star = pubkeyOf('star');
      const tag = Buffer.from(star, 'hex').toString('base64url');
      const log = `${prefix}fl:{${tag}}`;
      const lists = Array.from({ length: 120 }, (_, index) => signed(`fan ${index}`, { kind: 3, tags: [['p', star]] }));
      await store.putEvents(lists.slice(0, 96));
      // Few: one log, a header and a record (+1, the follower) per follow, no depth.
      expect(await client.exists(`${prefix}fn:{${tag}}`)).toBe(0);
      expect(await client.type(log)).toBe('string');
      const held = (await client.getBuffer(log)) as Buffer;
      expect(held.length).toBe(33 + 96 * 33);
      expect(held[0]).toBe(0);
      expect(held.toString('latin1', 1, 33).trim()).toBe('96 0');
      const records = Array.from({ length: 96 }, (_, index) => held.subarray(33 + 33 * index, 66 + 33 * index));
      expect(records.every((record) => record[0] === 1)).toBe(true);
      expect(records.map((record) => record.toString('hex', 1)).sort()).toEqual(lists.slice(0, 96).map((list) => list.pubkey).sort());
      await store.putEvents(lists.slice(96));
      // Many: 16 bucket logs by the first hex digit, the depth and count kept beside them.
      expect(await client.get(`${prefix}fn:{${tag}}`)).toBe('1 120');
      expect(await client.exists(log)).toBe(0);
      // (Named, not listed with KEYS: on a cluster KEYS asks one node.)
      const named = [...'0123456789abcdef'].map((digit) => `${prefix}fs:{${tag}}:${digit}`);
      const buckets = (await Promise.all(named.map(async (key) => ((await client.exists(key)) ? key : undefined)))).filter((key) => key !== undefined);
      expect(buckets.length).toBeGreaterThan(8);
      let members = 0;
      let bytes = 0;
      for (const key of buckets) {
        const bucket = (await client.getBuffer(key)) as Buffer;
        const digit = key.at(-1) as string;
        for (let at = 33; at < bucket.length; at += 33) expect(bucket.toString('hex', at + 1, at + 2)[0]).toBe(digit);
        members += (bucket.length - 33) / 33;
        bytes += Number(await client.memory('USAGE', key));
      }
      expect(members).toBe(120);
      expect(bytes / members).toBeLessThan(80);
      const sorted = lists.map((list) => list.pubkey).sort();
      expect(await store.relations.followers(star, null, 200)).toEqual(sorted);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(120);
      // Most of them gone (their lists replaced): below a quarter of the room of depth 0, one log again, folded.
      await store.putEvents(lists.slice(0, 100).map((list, index) => signed(`fan ${index}`, { kind: 3, created_at: list.created_at + 1, tags: [] })));
      expect(await client.exists(`${prefix}fn:{${tag}}`)).toBe(0);
      expect(await client.strlen(log)).toBe(33 + 20 * 33);
      expect((await Promise.all(named.map((key) => client.exists(key)))).every((exists) => exists === 0)).toBe(true);
      expect(await store.relations.followers(star, null, 200)).toEqual(lists.slice(100).map((list) => list.pubkey).sort());
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(20);
      // All gone: no key left.
      await store.putEvents(lists.slice(100).map((list, index) => signed(`fan ${100 + index}`, { kind: 3, created_at: list.created_at + 1, tags: [] })));
      expect(await client.exists(log)).toBe(0);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(0);
      expect(await store.relations.followers(star, null, 200)).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('at the default bucket size (FOLLOW_BUCKET_SIZE, 384): one log through 384 followers, 16 buckets at 385, a bucket a sorted set only past 1,536 once folded (four times as many)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      expect(FOLLOW_BUCKET_SIZE).toBe(384);
      const relations = store.relations as unknown as RedisRelationIndex;
      const star = pubkeyOf('default star');
      const tag = Buffer.from(star, 'hex').toString('base64url');
      const follow = async (fans: string[]) => {
        const writes = new FollowWrites();
        for (const fan of fans) writes.follow(star, fan, 1);
        await relations.flushFollows(writes);
      };
      const random = Array.from({ length: 385 }, (_, index) => pubkeyOf(`default fan ${index}`));
      await follow(random.slice(0, 384));
      expect(await client.exists(`${prefix}fn:{${tag}}`)).toBe(0);
      expect(await client.strlen(`${prefix}fl:{${tag}}`)).toBe(33 + 384 * 33);
      await follow(random.slice(384));
      expect(await client.get(`${prefix}fn:{${tag}}`)).toBe('1 385');
      expect(await client.exists(`${prefix}fl:{${tag}}`)).toBe(0);
      // Ground to share the first hex digit 0: a log through 1,536 of them, a sorted set past it
      // once folded (a log folds when it holds twice what it held after its last fold).
      const ground = Array.from({ length: 2100 }, (_, index) => `0${pubkeyOf(`default ground ${index}`).slice(1)}`);
      const inBucket = new Set([...random.filter((fan) => fan.startsWith('0')), ...ground.slice(0, 1000)]).size;
      await follow(ground.slice(0, 1000));
      expect(inBucket).toBeLessThanOrEqual(1536);
      expect(await client.type(`${prefix}fs:{${tag}}:0`)).toBe('string');
      await follow(ground.slice(1000));
      expect(await client.get(`${prefix}fn:{${tag}}`)).toBe(`1 ${385 + 2100}`);
      expect(await client.type(`${prefix}fs:{${tag}}:0`)).toBe('zset');
      const all = [...random, ...ground].sort();
      expect(await store.relations.followers(star, null, 5000)).toEqual(all);
      expect(await store.relations.followers(star, all[700] as string, 10)).toEqual(all.slice(701, 711));
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(all.length);
    } finally {
      await cleanup();
    }
  });

  it('moving to more buckets from logs that only gained followers copies their records (a fresh import), from logs owed a removal adds them up: the same pages, counts and crowded bucket either way', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      for (const owed of [false, true]) {
        const star = pubkeyOf(`moved star ${String(owed)}`);
        const tag = Buffer.from(star, 'hex').toString('base64url');
        const fans = (name: string, count: number, first = '') => Array.from({ length: count }, (_, index) => `${first}${pubkeyOf(`${name} ${String(owed)} ${index}`).slice(first.length)}`);
        const follow = async (pubkeys: string[], delta: number) => {
          const writes = new FollowWrites();
          for (const fan of pubkeys) writes.follow(star, fan, delta);
          await relations.flushFollows(writes);
        };
        // 1,000 (300 of them sharing their first two hex digits, ab): 16 buckets; 300 more of ab
        // (bucket a's log grows past 384 records unfolded: it only gained); then 300 more, past
        // 1,536: 256 buckets, ab's 600 a sorted set.
        const first = [...fans('moved fan', 700), ...fans('moved ab', 300, 'ab')];
        await follow(first, 1);
        expect(await client.get(`${prefix}fn:{${tag}}`)).toBe('1 1000');
        let expected = [...first];
        if (owed) {
          // A removal in bucket a (not of ab): that log says so, and the move adds up every follower.
          const gone = first.find((fan) => fan.startsWith('a') && !fan.startsWith('ab')) as string;
          await follow([gone], -1);
          expected = expected.filter((fan) => fan !== gone);
        }
        const second = fans('moved ab more', 300, 'ab');
        await follow(second, 1);
        expect(await client.type(`${prefix}fs:{${tag}}:a`)).toBe('string');
        expect((await client.strlen(`${prefix}fs:{${tag}}:a`)) - 33).toBeGreaterThan(33 * 384);
        const third = fans('moved late', 300);
        await follow(third, 1);
        expected.push(...second, ...third);
        expect(await client.get(`${prefix}fn:{${tag}}`)).toBe(`2 ${expected.length}`);
        expect(await client.exists(`${prefix}fs:{${tag}}:a`)).toBe(0);
        expect(await client.type(`${prefix}fs:{${tag}}:ab`)).toBe('zset');
        const sorted = [...expected].sort();
        expect(await store.relations.followers(star, null, 5000)).toEqual(sorted);
        const paged: string[] = [];
        for (let after: string | null = null, pages = 0; pages < 1000; pages++) {
          const page: string[] = await store.relations.followers(star, after, 97);
          paged.push(...page);
          if (page.length < 97) break;
          after = page.at(-1) as string;
        }
        expect(paged).toEqual(sorted);
        expect((await store.relations.followCounts([star]))[0]?.followers).toBe(expected.length);
        // Every other bucket a log of its own prefix's followers, each once, +1.
        for (const digits of ['00', '3f', 'a0', 'ff']) {
          const bucket = (await client.getBuffer(`${prefix}fs:{${tag}}:${digits}`)) ?? Buffer.alloc(33);
          const held = Array.from({ length: (bucket.length - 33) / 33 }, (_, index) => bucket.subarray(33 + 33 * index, 66 + 33 * index));
          expect(held.every((record) => record[0] === 1)).toBe(true);
          expect(held.map((record) => record.toString('hex', 1)).sort()).toEqual(sorted.filter((fan) => fan.startsWith(digits)));
        }
      }
    } finally {
      await cleanup();
    }
  });

  it('a log is folded once it holds twice what it held after its last fold (at least 192 records): follows and unfollows over and over keep it small, at depth 0 and in buckets', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      for (const [name, steady] of [['few', 20], ['many', 200]] as const) {
        const star = pubkeyOf(`churned ${name}`);
        const tag = Buffer.from(star, 'hex').toString('base64url');
        const fans = Array.from({ length: steady }, (_, index) => pubkeyOf(`steady ${name} ${index}`));
        const writes = new FollowWrites();
        for (const fan of fans) writes.follow(star, fan, 1);
        await relations.flushFollows(writes);
        // One fickle follower follows and unfollows 500 times, in batches of one change.
        const fickle = pubkeyOf(`fickle ${name}`);
        for (let round = 0; round < 500; round++) {
          const change = new FollowWrites();
          change.follow(star, fickle, round % 2 === 0 ? 1 : -1);
          await relations.flushFollows(change);
        }
        const depth = await client.get(`${prefix}fn:{${tag}}`);
        const keys = depth === null ? [`${prefix}fl:{${tag}}`] : [...'0123456789abcdef'].map((digit) => `${prefix}fs:{${tag}}:${digit}`);
        let records = 0;
        let largest = 0;
        for (const key of keys) {
          const length = await client.strlen(key);
          if (length === 0) continue;
          records += (length - 33) / 33;
          largest = Math.max(largest, (length - 33) / 33);
        }
        expect(largest, name).toBeLessThanOrEqual(2 * 96 + 1);
        expect(records, name).toBeLessThan(steady + 2 * 96);
        expect((await store.relations.followCounts([star]))[0]?.followers, name).toBe(steady);
        expect(await store.relations.followers(star, null, 1000), name).toEqual([...fans].sort());
      }
    } finally {
      await cleanup();
    }
  });

  it('a bucket log of additions only is not folded (a fold would drop nothing), its mark moved on instead; a removal is noted in its header and folds it at the next look; a header of an earlier version (two figures) folds as before', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      const flush = async (changes: [string, string, number][]) => {
        const writes = new FollowWrites();
        for (const [star, fan, delta] of changes) writes.follow(star, fan, delta);
        await relations.flushFollows(writes);
      };
      // Every fan in bucket 0 at depth 1 (pubkeys starting with 0).
      const fans = (name: string, count: number) => Array.from({ length: count }, (_, index) => `0${pubkeyOf(`${name} ${index}`).slice(1)}`);
      const bucketOf = (star: string) => `${prefix}fs:{${Buffer.from(star, 'hex').toString('base64url')}}:0`;
      const headerOf = async (star: string) => ((await client.getrangeBuffer(bucketOf(star), 1, 32)) as Buffer).toString('latin1').trim();
      const recordsOf = async (star: string) => ((await client.strlen(bucketOf(star))) - 33) / 33;
      const settle = async (star: string, twice: string, extra: string[]) => {
        // Straight to depth 1 (past 96): a bucket's first records are not a fold.
        await flush(fans(`${star} first`, 100).map((fan) => [star, fan, 1]));
        expect(await headerOf(star)).toBe('0 0 0');
        await flush([[star, twice, 1]]);
        return flush([[star, twice, 1], ...extra.map((fan): [string, string, number] => [star, fan, 1])]);
      };

      // Additions only, one of them twice (a resend applied twice): 201 records past the look at 200, none dropped.
      const added = pubkeyOf('added star');
      await settle(added, `0${pubkeyOf('twice').slice(1)}`, fans('added more', 99));
      expect(await headerOf(added)).toBe('0 201 0');
      expect(await recordsOf(added)).toBe(201);
      expect((await store.relations.followCounts([added]))[0]?.followers).toBe(201);
      expect(await store.relations.followers(added, null, 1000)).toHaveLength(200);

      // A removal: noted at once, and the next look folds (the follower who came and went is dropped).
      const removed = pubkeyOf('removed star');
      const fickle = `0${pubkeyOf('fickle').slice(1)}`;
      await flush(fans(`${removed} first`, 100).map((fan) => [removed, fan, 1]));
      await flush([[removed, fickle, 1]]);
      await flush([[removed, fickle, -1]]);
      expect(await headerOf(removed)).toBe('0 0 1');
      await flush(fans('removed more', 99).map((fan) => [removed, fan, 1]));
      expect(await headerOf(removed)).toBe('0 199 0');
      expect(await recordsOf(removed)).toBe(199);
      expect(await store.relations.followers(removed, null, 1000)).toEqual([...fans(`${removed} first`, 100), ...fans('removed more', 99)].sort());

      // A header of an earlier version says nothing of removals: folded at the look, the twice-counted follower one record.
      const older = pubkeyOf('older star');
      const twice = `0${pubkeyOf('older twice').slice(1)}`;
      await flush(fans(`${older} first`, 100).map((fan) => [older, fan, 1]));
      await client.setrange(bucketOf(older), 1, '0 100'.padEnd(32));
      await flush([[older, twice, 1]]);
      await flush([[older, twice, 1], ...fans('older more', 99).map((fan): [string, string, number] => [older, fan, 1])]);
      expect(await headerOf(older)).toBe('0 200 0');
      expect(await recordsOf(older)).toBe(200);
      expect((await store.relations.followCounts([older]))[0]?.followers).toBe(201);
    } finally {
      await cleanup();
    }
  });

  it('a crowded bucket (followers ground to share a first hex digit) is a sorted set past 384 of them: a page reads a range of it, not all of it; odd nets beside it; back to logs as they go', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      const star = pubkeyOf('crowded star');
      const tag = Buffer.from(star, 'hex').toString('base64url');
      // 600 followers whose pubkeys start with 0, as if ground, and 40 others: depth 1, bucket 0 crowded.
      const ground = Array.from({ length: 600 }, (_, index) => `0${pubkeyOf(`ground ${index}`).slice(1)}`);
      const others = Array.from({ length: 40 }, (_, index) => `f${pubkeyOf(`other ${index}`).slice(1)}`);
      for (let start = 0; start < ground.length; start += 50) {
        const writes = new FollowWrites();
        const round = start / 50;
        for (const fan of [...ground.slice(start, start + 50), ...others.slice(4 * round, 4 * round + 4)]) writes.follow(star, fan, 1);
        await relations.flushFollows(writes);
      }
      const all = [...ground, ...others].sort();
      expect(await client.get(`${prefix}fn:{${tag}}`)).toBe(`1 ${all.length}`);
      const crowded = `${prefix}fs:{${tag}}:0`;
      expect(await client.type(crowded)).toBe('zset');
      expect(await client.zcard(crowded)).toBe(600);
      expect(await client.type(`${prefix}fs:{${tag}}:f`)).toBe('string');
      // A page of 10 inside it: a range of 10, not 600 (what the script answers is the page).
      const raw = await client.nostrFollowersPageBuffer(`${prefix}fl:{${tag}}`, `${prefix}fn:{${tag}}`, `${prefix}fs:{${tag}}:`, Buffer.from(all[100] as string, 'hex'), '10');
      expect(raw.map((member) => member.toString('hex'))).toEqual(all.slice(101, 111));
      expect(await store.relations.followers(star, all[595] as string, 10)).toEqual(all.slice(596, 606));
      // Odd nets: one ground follower counted twice, one owed a removal (its net -1 in the hash beside).
      const odd = new FollowWrites();
      odd.follow(star, ground[0] as string, 1);
      const stranger = `0${pubkeyOf('owed').slice(1)}`;
      odd.follow(star, stranger, -1);
      await relations.flushFollows(odd);
      expect(await client.hlen(`${crowded}x`)).toBe(2);
      expect(await client.hget(`${crowded}x`, Buffer.from(ground[0] as string, 'hex'))).toBe('2');
      expect(await client.hget(`${crowded}x`, Buffer.from(stranger, 'hex'))).toBe('-1');
      expect(await store.relations.followers(star, null, 1000)).toEqual(all);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(all.length + 1 - 1);
      // The rest comes: both settle, the hash empties.
      const rest = new FollowWrites();
      rest.follow(star, ground[0] as string, -1);
      rest.follow(star, stranger, 1);
      await relations.flushFollows(rest);
      expect(await client.exists(`${crowded}x`)).toBe(0);
      expect(await store.relations.followers(star, null, 1000)).toEqual(all);
      // Most go (under a quarter of depth 0's room): one log again, exact.
      const going = new FollowWrites();
      for (const fan of [...ground, ...others.slice(0, 30)]) going.follow(star, fan, -1);
      await relations.flushFollows(going);
      expect(await client.exists(`${prefix}fn:{${tag}}`)).toBe(0);
      expect(await client.exists(crowded)).toBe(0);
      expect(await store.relations.followers(star, null, 1000)).toEqual(others.slice(30).sort());
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(10);
    } finally {
      await cleanup();
    }
  });

  it('a crowded bucket emptied while its hash owes a follower a removal: the removal is kept (a log), not lost with the set; nothing is left once all go (found by a model check)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      const flush = async (changes: [string, number][]) => {
        const writes = new FollowWrites();
        for (const [fan, delta] of changes) writes.follow(star, fan, delta);
        await relations.flushFollows(writes);
      };
      const star = pubkeyOf('emptied star');
      const tag = Buffer.from(star, 'hex').toString('base64url');
      const ground = Array.from({ length: 450 }, (_, index) => `0${pubkeyOf(`emptied ground ${index}`).slice(1)}`);
      const others = Array.from({ length: 100 }, (_, index) => `f${pubkeyOf(`emptied other ${index}`).slice(1)}`);
      const stranger = `0${pubkeyOf('emptied stranger').slice(1)}`;
      await flush([...ground, ...others].map((fan) => [fan, 1]));
      const bucket = `${prefix}fs:{${tag}}:0`;
      expect(await client.type(bucket)).toBe('zset');
      await flush([[stranger, -1]]);
      expect(await client.hget(`${bucket}x`, Buffer.from(stranger, 'hex'))).toBe('-1');
      // Every member of the set goes: the stranger's -1 stays, as the bucket's log.
      await flush(ground.map((fan) => [fan, -1]));
      expect(await client.exists(`${bucket}x`)).toBe(0);
      expect(await client.type(bucket)).toBe('string');
      // Its addition comes: it nets 0, and does not follow.
      await flush([[stranger, 1]]);
      expect(await store.relations.followers(star, null, 1000)).toEqual([...others].sort());
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(100);
      // All go: nothing is left.
      await flush(others.map((fan) => [fan, -1]));
      expect(await store.relations.followers(star, null, 1000)).toEqual([]);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(0);
      expect(await client.keys(`${prefix}f?:{${tag}}*`)).toEqual([]);
    } finally {
      await cleanup();
    }
  });

  it('nothing is left behind: a first batch that adds and takes away the same follower, or all of 2,000 followers gone in one batch (two depths at once)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore(undefined, SMALL_BUCKETS);
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      const passing = pubkeyOf('passing star');
      const both = new FollowWrites();
      both.follow(passing, pubkeyOf('passing fan'), 1);
      both.follow(passing, pubkeyOf('passing fan'), -1);
      await relations.flushFollows(both);
      const passingTag = Buffer.from(passing, 'hex').toString('base64url');
      expect(await client.exists(`${prefix}fl:{${passingTag}}`, `${prefix}fn:{${passingTag}}`)).toBe(0);
      const star = pubkeyOf('drained star');
      const tag = Buffer.from(star, 'hex').toString('base64url');
      const fans = Array.from({ length: 2000 }, (_, index) => pubkeyOf(`drained fan ${index}`));
      const coming = new FollowWrites();
      for (const fan of fans) coming.follow(star, fan, 1);
      await relations.flushFollows(coming);
      expect(await client.get(`${prefix}fn:{${tag}}`)).toBe('2 2000');
      const going = new FollowWrites();
      for (const fan of fans) going.follow(star, fan, -1);
      await relations.flushFollows(going);
      expect(await client.exists(`${prefix}fn:{${tag}}`, `${prefix}fl:{${tag}}`)).toBe(0);
      const buckets = Array.from({ length: 256 }, (_, index) => `${prefix}fs:{${tag}}:${index.toString(16).padStart(2, '0')}`);
      expect((await Promise.all(buckets.map((key) => client.exists(key)))).every((exists) => exists === 0)).toBe(true);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('a few followers written over many batches take the bytes they hold (written whole, not appended: APPEND leaves as much again unused)', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const star = pubkeyOf('quiet star');
      const tag = Buffer.from(star, 'hex').toString('base64url');
      for (let index = 0; index < 12; index++) await store.putEvents([signed(`quiet fan ${index}`, { kind: 3, tags: [['p', star]] })]);
      const log = `${prefix}fl:{${tag}}`;
      expect(await client.strlen(log)).toBe(33 + 12 * 33);
      // As many bytes as the same value written once with SET under a key as long: no room left unused.
      const copy = `${prefix}fx:{${tag}}`;
      await client.set(copy, (await client.getBuffer(log)) as Buffer);
      expect(Number(await client.memory('USAGE', log))).toBe(Number(await client.memory('USAGE', copy)));
      expect(Number(await client.memory('USAGE', log)) / 12).toBeLessThan(80);
      await client.del(copy);
      expect((await store.relations.followCounts([star]))[0]?.followers).toBe(12);
    } finally {
      await cleanup();
    }
  });

  it('a batch\'s FOLLOW parts go many pubkeys to a FOLLOW_MANY call on one Redis (one FOLLOW call each on a cluster); one whose script fails fails the batch, the others applied and counted for search', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    const cluster = client instanceof Cluster;
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      const calls: number[] = [];
      const inner = relations as unknown as { client: { nostrFollowMany(keys: number, ...rest: unknown[]): Promise<unknown> } };
      const many = inner.client.nostrFollowMany.bind(inner.client);
      inner.client.nostrFollowMany = (keys: number, ...rest: unknown[]) => {
        calls.push(keys / 2);
        return many(keys, ...rest);
      };
      const stars = Array.from({ length: 300 }, (_, index) => pubkeyOf(`grouped star ${index}`));
      const broken = stars[100] as string;
      // A key of another type where the script reads a string: its script fails (WRONGTYPE).
      await client.hset(redisKeys(prefix).follows(broken).depth, 'not', 'a string');
      const writes = new FollowWrites();
      for (const star of stars) writes.follow(star, pubkeyOf('grouped fan'), 1);
      // The failed script's reason is kept (in FOLLOW_MANY's answer for that pubkey).
      await expect(relations.flushFollows(writes)).rejects.toThrow(cluster ? /^WRONGTYPE/ : /^FOLLOW failed for one of the pubkeys of a FOLLOW_MANY call: WRONGTYPE/);
      // 300 pubkeys of one record each: 256 to a call at most (none on a cluster: a script keeps to one slot).
      expect(calls).toEqual(cluster ? [] : [256, 44]);
      const others = stars.filter((star) => star !== broken);
      expect((await store.relations.followCounts(others)).map((counts) => counts.followers)).toEqual(others.map(() => 1));
      const counted = await client.hmgetBuffer(redisKeys(prefix).search.followers, Buffer.from(others[0] as string, 'hex'), Buffer.from(broken, 'hex'));
      expect(counted.map((value) => value?.toString() ?? null)).toEqual(['1', null]);
    } finally {
      await cleanup();
    }
  });

  it('followers pages stay whole and in order while a follower is counted twice or owed a removal (two writers interleaving, a failed part), at depth 0 and in buckets', async () => {
    const { store, cleanup } = await createTestStore();
    try {
      const relations = store.relations as unknown as RedisRelationIndex;
      for (const [name, normal] of [['few', 20], ['many', 150]] as const) {
        const star = pubkeyOf(`odd star ${name}`);
        const fans = Array.from({ length: normal }, (_, index) => pubkeyOf(`odd fan ${name} ${index}`));
        const twice = Array.from({ length: 5 }, (_, index) => pubkeyOf(`counted twice ${name} ${index}`));
        const owed = Array.from({ length: 5 }, (_, index) => pubkeyOf(`owed a removal ${name} ${index}`));
        const writes = new FollowWrites();
        for (const fan of fans) writes.follow(star, fan, 1);
        // A follower at 2 (a list added twice before its replacement's removal), one at -1 (a
        // removal ahead of its addition): the sorted sets hold scores other than 1 until the rest comes.
        for (const fan of twice) for (const delta of [1, 1]) writes.follow(star, fan, delta);
        for (const fan of owed) writes.follow(star, fan, -1);
        await relations.flushFollows(writes);
        const expected = [...fans, ...twice].sort();
        // The count is the sum of the changes (exact once the rest comes): 2 for each counted twice, -1 for each owed.
        expect((await store.relations.followCounts([star]))[0]?.followers, name).toBe(normal + 2 * twice.length - owed.length);
        for (const first of [1, 7, 100]) {
          const read: string[] = [];
          let after: string | null = null;
          for (let pages = 0; pages < 500; pages++) {
            const page = await store.relations.followers(star, after, first);
            read.push(...page);
            if (page.length < first) break;
            after = page.at(-1) as string;
          }
          expect(read, `${name}, pages of ${first}`).toEqual(expected);
        }
        // The rest comes (the replacement's removal of the one counted twice, the addition the
        // removal was ahead of): the count and the pages agree again.
        const rest = new FollowWrites();
        for (const fan of twice) rest.follow(star, fan, -1);
        for (const fan of owed) rest.follow(star, fan, 1);
        await relations.flushFollows(rest);
        expect((await store.relations.followCounts([star]))[0]?.followers, name).toBe(expected.length);
        expect(await store.relations.followers(star, null, 1000), name).toEqual(expected);
      }
    } finally {
      await cleanup();
    }
  });

  it('keeps a replaceable event once: in its slot, with a marker under its id', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const event = profile('ivy', { name: 'ivy' });
      await store.putEvents([event]);
      expect(await client.get(`${prefix}e:${event.id}`)).toBe(`@0:${event.pubkey}`);
      expect(JSON.parse((await client.get(`${prefix}r:0:${event.pubkey}`)) ?? '')).toEqual(event);
    } finally {
      await cleanup();
    }
  });

  it('removed means removed: a deleted note leaves x<author> under its id; a pending deletion expires, and an event that arrives over it keeps no expiry', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const note = signed('del-ann', { content: 'bytes that must go' });
      await store.putEvents([note, deletion('del-ann', { ids: [note.id] })]);
      expect(await client.get(`${prefix}e:${note.id}`)).toBe(`x${note.pubkey}`);
      expect(await client.ttl(`${prefix}e:${note.id}`)).toBe(-1);
      // Not in its author's list any more (a request to vanish has nothing to find): only the request is.
      const listed = await client.zrangeBuffer(authorList(prefix, note.pubkey), '0', '-1');
      expect(listed.map((member) => readMember(member, note.pubkey))).toEqual([{ kind: 5, position: { createdAt: T + 100, id: deletion('del-ann', { ids: [note.id] }).id, bytes: expect.any(Number) } }]);

      const later = signed('del-bo', { content: 'arrives after a stranger named it' });
      await store.putEvents([deletion('del-stranger', { ids: [later.id] })]);
      expect(await client.get(`${prefix}e:${later.id}`)).toBe(`p${pubkeyOf('del-stranger')}`);
      const ttl = await client.ttl(`${prefix}e:${later.id}`);
      expect(ttl).toBeGreaterThan(30 * 86_400 - 60);
      expect(ttl).toBeLessThanOrEqual(30 * 86_400);
      expect(await store.putEvents([later])).toEqual(['stored']);
      expect(await client.ttl(`${prefix}e:${later.id}`)).toBe(-1);
    } finally {
      await cleanup();
    }
  });

  it('a replaced version loses its marker', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const old = profile('jay', { v: 1 }, 1);
      const newer = profile('jay', { v: 2 }, 2);
      await store.putEvents([old]);
      await store.putEvents([newer]);
      expect(await client.exists(`${prefix}e:${old.id}`)).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('a stale marker (left by a writer that raced a newer version) reads as not found', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const old = profile('kim', { v: 1 }, 1);
      const newer = profile('kim', { v: 2 }, 2);
      await store.putEvents([newer]);
      await client.set(`${prefix}e:${old.id}`, `@0:${old.pubkey}`);
      expect(await store.getEvents([old.id, newer.id])).toMatchObject([null, { event: newer }]);
      // …and is removed when met (read repair): a crashed writer's marker does not stay.
      await expect.poll(() => client.exists(`${prefix}e:${old.id}`), { timeout: 1000 }).toBe(0);
      expect(await client.get(`${prefix}e:${newer.id}`)).toBe(`@0:${newer.pubkey}`);
    } finally {
      await cleanup();
    }
  });

  it('a writer whose marker lands after a newer version replaced its own leaves no dangling marker', async () => {
    const { store, client, prefix, cleanup, reopen, connectAdmin } = await createTestStore();
    const other = await reopen();
    const admin = await connectAdmin();
    try {
      const older = profile('race', { v: 1 }, 1_700_000_001);
      const newer = profile('race', { v: 2 }, 1_700_000_002);
      // Writer A's commands after its script are held back (in their order) until writer B is done:
      // the interleaving that left markers behind.
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      for (const name of ['set', 'del', 'getBuffer'] as const) {
        const original = (client[name] as (...args: unknown[]) => Promise<unknown>).bind(client);
        (client as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
          await gate;
          return original(...args);
        };
      }
      const writingA = store.putEvents([older]);
      await expect.poll(() => admin.get(`${prefix}r:0:${older.pubkey}`)).not.toBeNull();
      expect(await other.putEvents([newer])).toEqual(['replaced']);
      release();
      expect(await writingA).toEqual(['stored']);
      expect(await admin.exists(`${prefix}e:${older.id}`)).toBe(0);
      expect(await admin.get(`${prefix}e:${newer.id}`)).toBe(`@0:${newer.pubkey}`);
    } finally {
      admin.disconnect();
      await other.close();
      await cleanup();
    }
  });

  it('data it did not write is reported as corrupt, never served', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const note = signed('lee');
      await client.set(`${prefix}e:${note.id}`, '{"not":"an event"');
      await expect(store.getEvents([note.id])).rejects.toBeInstanceOf(CorruptDataError);
      const stranger = profile('mia', { name: 'mia' });
      await client.set(`${prefix}r:0:${pubkeyOf('lee')}`, JSON.stringify(stranger));
      await expect(store.getProfiles([pubkeyOf('lee')])).rejects.toBeInstanceOf(CorruptDataError);
    } finally {
      await cleanup();
    }
  });

  it('a value with our shape whose bytes are not UTF-8 is corrupt: the bytes are never written to a client', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const event = profile('nia', { name: 'nia ✨' });
      const bytes = Buffer.from(serializeEvent(event), 'utf8');
      const sparkle = bytes.indexOf(Buffer.from('✨'));
      bytes[sparkle] = 0xff; // no UTF-8 sequence starts with 0xFF
      await client.set(`${prefix}r:0:${event.pubkey}`, bytes);
      await expect(store.getProfiles([event.pubkey])).rejects.toThrow('corrupt data in event store: not UTF-8');
    } finally {
      await cleanup();
    }
  });

  it('a slot holding foreign text is overwritten by the next valid version', async () => {
    const { store, client, prefix, cleanup } = await createTestStore();
    try {
      const event = profile('ned', { name: 'ned' });
      await client.set(`${prefix}r:0:${event.pubkey}`, 'garbage');
      expect(await store.putEvents([event])).toEqual(['replaced']);
      expect((await store.getProfiles([event.pubkey]))[0]?.event).toEqual(event);
    } finally {
      await cleanup();
    }
  });

  it('groups keys by Redis Cluster hash slot, honouring hash tags', () => {
    const groups = groupBySlot(['{user1}:a', 'x', '{user1}:b', 'y']);
    expect([...groups.values()].find((positions) => positions.includes(0))).toEqual([0, 2]);
    expect([...groups.values()].flat().sort()).toEqual([0, 1, 2, 3]);
  });
});
