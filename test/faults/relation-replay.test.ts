import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type NostrEvent, wireFormOf } from '../../src/nostr/event.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RelaySync } from '../../src/fill/relay-sync.js';
import { replaceableAddress } from '../../src/nostr/kinds.js';
import { redisKeys } from '../../src/store/redis/keys.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { BOTH_STORES, type OpenedStore } from '../support/both-stores.js';
import { pubkeyOf, signed } from '../support/events.js';
import { captureLogs } from '../support/logs.js';
import { type PrivateRedis, startPrivateRedis } from '../support/redis-server.js';
import { expectExact } from '../support/relation-conformance.js';
import { createTestStore, type TestStore } from '../support/test-store.js';
import { zapReceipt } from '../support/zaps.js';

// A write whose reply is lost, replayed, or sent twice must leave the relationship figures equal
// to their rebuild from the stored events (`relations check`): Redis may run a command whose
// caller gave up on it (a timeout, a connection lost), and the caller then writes the batch again.

const T = 1_700_000_000;

/**
 * The counts of events by kind are kept by the store's writes, not by the scripts these tests run
 * twice or whose replies they drop: a fault between an event's write and its relations leaves them
 * off until `relations rebuild` (docs/operations.md), except a deletion's: it counts when its
 * tombstone settles, once, on the replay too (the third test).
 */
const NO_KIND_COUNTS = { kinds: false };

/** A deletion request (NIP-09) of one event, signed as its author (`world` signs by name). */
const deletion = (pubkey: string, id: string) => signed(NAME_BY_PUBKEY.get(pubkey) as string, { kind: 5, created_at: T + 100, tags: [['e', id]] });
const NAME_BY_PUBKEY = new Map<string, string>();

/** A note and one event of each relation to it: reaction, reply, repost, quote, thread reply, zap. */
function world(tag: string): { note: NostrEvent; related: NostrEvent[] } {
  for (const name of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'zapper']) NAME_BY_PUBKEY.set(pubkeyOf(`${tag}-${name}`), `${tag}-${name}`);
  const note = signed(`${tag}-alice`, { content: `note ${tag}`, created_at: T });
  const reply = signed(`${tag}-bob`, { content: 'reply', created_at: T + 1, tags: [['e', note.id, '', 'root']] });
  const deep = signed(`${tag}-carol`, { content: 'deeper', created_at: T + 2, tags: [['e', note.id, '', 'root'], ['e', reply.id, '', 'reply']] });
  return {
    note,
    related: [
      signed(`${tag}-bob`, { kind: 7, content: '+', created_at: T + 3, tags: [['e', note.id]] }),
      signed(`${tag}-carol`, { kind: 7, content: '🤙', created_at: T + 4, tags: [['e', note.id]] }),
      reply,
      deep,
      signed(`${tag}-dave`, { kind: 6, content: '', created_at: T + 5, tags: [['e', note.id]] }),
      signed(`${tag}-erin`, { content: `nostr:${note.id}`, created_at: T + 6, tags: [['q', note.id]] }),
      zapReceipt({ sender: `${tag}-frank`, recipient: `${tag}-alice`, provider: `${tag}-zapper`, target: note.id, msats: 5_000 }),
    ],
  };
}

describe.each(BOTH_STORES)('$name: a batch written again', ({ open }) => {
  let opened: OpenedStore;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(() => opened.cleanup());

  it('leaves the figures equal to the rebuild (a replay after a failure adds nothing)', async () => {
    const { note, related } = world('again');
    await opened.store.putEvents([note, ...related]);
    expect(await opened.store.putEvents([note, ...related])).toEqual(Array(related.length + 1).fill('duplicate'));
    await expectExact(opened.store);
    const [stats] = await opened.store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(2);
  });

  it('deletion requests written again leave nothing of what they deleted counted', async () => {
    const { note, related } = world('deleted-again');
    await opened.store.putEvents([note, ...related]);
    const requests = related.map((event) => deletion(event.pubkey, event.id));
    await opened.store.putEvents(requests);
    await opened.store.putEvents(requests);
    await expectExact(opened.store);
    const [stats] = await opened.store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(0);
    expect(stats?.replies).toBe(0);
  });
});

describe('Redis: a put whose reply was lost, then replayed', () => {
  let testStore: TestStore;
  let store: RedisEventStore;
  beforeAll(async () => {
    testStore = await createTestStore();
    store = testStore.store as RedisEventStore;
  });
  afterAll(() => testStore.cleanup());

  /** What the store's own put script does, without what the store does after its reply. */
  const putScriptOnly = (event: NostrEvent) => store.client.nostrPutRegular(`${testStore.prefix}e:${event.id}`, wireFormOf(event), event.pubkey, '0');

  it('relates what Redis stored but whose relations were never sent: the replay heals it', async () => {
    const { note, related } = world('healed');
    await store.putEvents([note]);
    // The put ran; its reply was lost (a timeout, a connection killed), so nothing was related.
    for (const event of related) expect(await putScriptOnly(event)).toBe('stored');
    expect(await store.putEvents(related)).toEqual(related.map(() => 'duplicate'));
    await expectExact(store, NO_KIND_COUNTS);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(2);
    expect(stats?.replies).toBe(1);
  });

  it('counts once what was related, and related again by a command sent twice, then replayed', async () => {
    const { note, related } = world('twice');
    await store.putEvents([note]);
    for (const event of related) {
      await putScriptOnly(event);
      // Its relations ran, and ran again (a timed-out command that still ran, a resend): replies lost.
      await store.relations.relate(event, 1);
      await store.relations.relate(event, 1);
    }
    await store.putEvents(related);
    await expectExact(store, NO_KIND_COUNTS);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(2);
    expect(stats?.reposts).toBe(1);
    // Deleted by their authors: nothing is left counted (a reaction counted twice would be).
    await store.putEvents(related.map((event) => deletion(event.pubkey, event.id)));
    await expectExact(store, NO_KIND_COUNTS);
    const [after] = await store.relations.stats([note.id]);
    expect(after?.reactions.pubkeys).toBe(0);
  });

  it('removes the relations of events whose deletion ran but whose reply was lost, once the request is replayed', async () => {
    const { note, related } = world('undeleted');
    await store.putEvents([note, ...related]);
    const requests = related.map((event) => deletion(event.pubkey, event.id));
    // What the deletion's script does, without what the store does after its reply: the events
    // are tombstones, their relations still count.
    for (const event of related) expect((await store.client.nostrDeleteIdBuffer(`${testStore.prefix}e:${event.id}`, event.pubkey, '8', '3600'))[0].toString()).toBe('deleted');
    expect(await store.getEvents(related.map((event) => event.id))).toEqual(related.map(() => expect.objectContaining({ deleted: true })));
    await store.putEvents(requests);
    await expectExact(store, NO_KIND_COUNTS);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(0);
    expect(stats?.replies).toBe(0);
    expect(stats?.reposts).toBe(0);
    // Settled: written again, the requests find only tombstones, and no event's JSON is kept.
    await store.putEvents(requests);
    await expectExact(store, NO_KIND_COUNTS);
    for (const event of related) expect((await store.client.get(`${testStore.prefix}e:${event.id}`))?.length).toBe(65);
  });

  it('a removal that overtakes its addition leaves nothing counted', async () => {
    const { note, related } = world('overtaken');
    await store.putEvents([note]);
    for (const event of related) await store.relations.relate(event, -1);
    for (const event of related) await store.relations.relate(event, 1);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(0);
    expect(stats?.replies).toBe(0);
    expect(stats?.reposts).toBe(0);
  });
});

describe('Redis: the events held by kind, after a deletion whose reply was lost', () => {
  it('count it out once: on the replay, which settles its tombstone, and not again when a second writer replays it too', async () => {
    const testStore = await createTestStore();
    try {
      const store = testStore.store as RedisEventStore;
      const { note, related } = world('counted-out');
      await store.putEvents([note, ...related]);
      await expectExact(store);
      const requests = related.map((event) => deletion(event.pubkey, event.id));
      // The deletion's script ran; its reply was lost: nothing was counted out yet.
      for (const event of related) await store.client.nostrDeleteIdBuffer(`${testStore.prefix}e:${event.id}`, event.pubkey, '8', '3600');
      // Replayed by two writers at once: each finds the JSON kept, one settles each tombstone.
      await Promise.all([store.putEvents(requests), store.putEvents(requests)]);
      await expectExact(store);
      expect((await store.relations.eventCounts()).get(7)).toBeUndefined();
    } finally {
      await testStore.cleanup();
    }
  });
});

describe('Redis: a command in flight when the connection drops', () => {
  let redis: PrivateRedis;
  const clients: { disconnect(): void }[] = [];
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterEach(() => {
    redis.signal('SIGCONT');
    for (const client of clients.splice(0)) client.disconnect();
  });
  afterAll(() => redis.stop());

  it('is not sent again on the next connection: what it carried counts once', async () => {
    const client = connectRedis({ url: redis.url, timeoutMs: 300 });
    client.on('error', () => {});
    clients.push(client);
    await waitUntilReady(client, 5000);
    const store = new RedisEventStore(client, 'resend:');
    const note = signed('resend-alice', { content: 'resend', created_at: T });
    const quote = signed('resend-bob', { content: `nostr:${note.id}`, created_at: T + 1, tags: [['q', note.id]] });
    // A reaction first: the script is then loaded, and the one below runs as sent (EVALSHA).
    await store.putEvents([note, signed('resend-carol', { kind: 7, content: '+', created_at: T + 1, tags: [['e', note.id]] })]);
    // Sent while Redis hangs, then the connection is lost: Redis still runs what reached it, and
    // ioredis, by default, sends again what had no reply once it has reconnected.
    redis.signal('SIGSTOP');
    const sent = store.relations.relate(quote, 1).catch(() => 'failed');
    await sleep(100);
    // Lost, not closed: a half-closed socket would still read the reply.
    client.stream.destroy();
    await sleep(100);
    redis.signal('SIGCONT');
    await sent;
    await waitUntilReady(client, 5000);
    await sleep(300);
    // The store writes the quote (a replay, or its first write): the figures are the rebuild's.
    await store.putEvents([quote]);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.quotes).toBe(1);
    await expectExact(store, NO_KIND_COUNTS);
  });
});

describe('Redis: a replaceable transition whose reply was lost, then replayed', () => {
  let testStore: TestStore;
  let store: RedisEventStore;
  beforeAll(async () => {
    testStore = await createTestStore();
    store = testStore.store as RedisEventStore;
  });
  afterAll(() => testStore.cleanup());

  const keys = () => redisKeys(testStore.prefix);
  const followList = (name: string, follows: readonly string[], at: number) => signed(name, { kind: 3, created_at: at, tags: follows.map((pubkey) => ['p', pubkey]) });
  /** A batch token of this store's whose batch has ended (it failed: its entries are its own to heal). */
  const endedBatch = () => `${store.writer}ffffffff`;
  /** REPLACE as the store sends it, without what the store does after its reply; by default in a batch of this store's that failed. */
  const replaceScriptOnly = (event: NostrEvent, token = endedBatch()) => {
    const address = replaceableAddress(event) as string;
    return store.client.nostrReplaceEvent(keys().replaceable(address), keys().journal(address), wireFormOf(event), event.id, String(event.created_at), token);
  };
  const followers = async (pubkeys: readonly string[]) => (await store.relations.followCounts(pubkeys)).map((counts) => counts.followers);
  const journalHeld = (event: NostrEvent) => store.client.exists(keys().journal(replaceableAddress(event) as string));
  /** The journal entries of `event`'s address, dated as if written long ago (after the sign and the token: 10 digits of time). */
  const backdate = async (event: NostrEvent) => {
    const journal = keys().journal(replaceableAddress(event) as string);
    const held = (await store.client.get(journal)) as string;
    await store.client.set(journal, held.split('\n').map((line) => (line === '' ? line : `${line.slice(0, 17)}0000000001${line.slice(27)}`)).join('\n'));
  };

  it('a follow list replacing another: the replay applies the difference the lost reply never did, and the journal goes', async () => {
    const [bob, carol, dave] = ['lost-bob', 'lost-carol', 'lost-dave'].map(pubkeyOf) as [string, string, string];
    const first = followList('lost-alice', [bob, carol], T);
    await store.putEvents([first]);
    expect(await followers([bob, carol, dave])).toEqual([1, 1, 0]);
    const second = followList('lost-alice', [carol, dave], T + 10);
    expect((await replaceScriptOnly(second))[0]).toBe('replaced');
    // The fault as it stands: the list is replaced, the figures are the first list's.
    expect(await followers([bob, carol, dave])).toEqual([1, 1, 0]);
    expect(await journalHeld(second)).toBe(1);
    expect(await store.putEvents([second])).toEqual(['duplicate']);
    expect(await followers([bob, carol, dave])).toEqual([0, 1, 1]);
    expect(await journalHeld(second)).toBe(0);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('applied twice (a resend ran it too), then replayed: set, not added, so counted once', async () => {
    const [bob, carol, dave] = ['twice-bob', 'twice-carol', 'twice-dave'].map(pubkeyOf) as [string, string, string];
    const first = followList('twice-alice', [bob, carol], T);
    await store.putEvents([first]);
    const second = followList('twice-alice', [carol, dave], T + 10);
    await replaceScriptOnly(second);
    await store.relations.replace(first, second);
    await store.relations.replace(first, second);
    expect(await followers([bob, carol, dave])).toEqual([-1, 1, 2]);
    await store.putEvents([second]);
    expect(await followers([bob, carol, dave])).toEqual([0, 1, 1]);
    expect((await store.relations.followCounts([first.pubkey]))[0]?.following).toBe(2);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('a newer list written by another writer before the replay: healed to what is held, whichever comes', async () => {
    const [bob, carol, dave, erin] = ['newer-bob', 'newer-carol', 'newer-dave', 'newer-erin'].map(pubkeyOf) as [string, string, string, string];
    await store.putEvents([followList('newer-alice', [bob], T)]);
    const lost = followList('newer-alice', [carol], T + 10);
    await replaceScriptOnly(lost);
    // Another writer's newer list, written in full: it meets the lost transition's journal.
    const newer = followList('newer-alice', [dave, erin], T + 20);
    expect(await store.putEvents([newer])).toEqual(['replaced']);
    expect(await followers([bob, carol, dave, erin])).toEqual([0, 0, 1, 1]);
    expect(await store.putEvents([lost])).toEqual(['superseded']);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it("another process's transition still in flight is left to it: a write of the same list meanwhile does not heal it, and its follows count once", async () => {
    const [bob, carol] = ['flight-bob', 'flight-carol'].map(pubkeyOf) as [string, string];
    const first = followList('flight-alice', [bob], T);
    await store.putEvents([first]);
    const second = followList('flight-alice', [carol], T + 10);
    // Another process replaced the list; its relations are on their way.
    await replaceScriptOnly(second, 'abcdef0000000001');
    expect(await store.putEvents([second])).toEqual(['duplicate']);
    expect(await journalHeld(second)).toBe(1);
    // Its writes land, then it settles its entries (as the store does after the batch's follows).
    await store.relations.replace(first, second);
    await store.client.nostrSettleJournal(keys().journal(replaceableAddress(second) as string), `+abcdef0000000001${second.id}`, `-abcdef0000000001${first.id}`);
    expect(await followers([bob, carol])).toEqual([0, 1]);
    expect(await journalHeld(second)).toBe(0);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it("another process's transition abandoned (journaled over ten minutes ago, by Redis' clock) is healed by the next write of the address", async () => {
    const [bob, carol] = ['abandoned-bob', 'abandoned-carol'].map(pubkeyOf) as [string, string];
    const first = followList('abandoned-alice', [bob], T);
    await store.putEvents([first]);
    const second = followList('abandoned-alice', [carol], T + 10);
    await replaceScriptOnly(second, 'abcdef0000000002');
    await backdate(second);
    expect(await store.putEvents([second])).toEqual(['duplicate']);
    expect(await followers([bob, carol])).toEqual([0, 1]);
    expect(await journalHeld(second)).toBe(0);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('an abandoned transition that nothing writes again is healed by the sweep `sync` runs (healJournals); one still in flight is left', async () => {
    const [bob, carol, dave] = ['sweep-bob', 'sweep-carol', 'sweep-dave'].map(pubkeyOf) as [string, string, string];
    const first = followList('sweep-alice', [bob], T);
    const other = followList('sweep-erin', [bob], T);
    await store.putEvents([first, other]);
    const second = followList('sweep-alice', [carol], T + 10);
    await replaceScriptOnly(second, 'abcdef0000000004');
    await backdate(second);
    // Another list replaced by a process still writing it: not the sweep's to heal.
    const inFlight = followList('sweep-erin', [dave], T + 10);
    await replaceScriptOnly(inFlight, 'abcdef0000000005');
    expect(await followers([bob, carol])).toEqual([2, 0]);
    expect(await store.healJournals()).toBe(1);
    expect(await followers([bob, carol, dave])).toEqual([1, 1, 0]);
    expect(await journalHeld(second)).toBe(0);
    expect(await journalHeld(inFlight)).toBe(1);
    expect(await store.healJournals()).toBe(0);
    // Its writer's writes land, then it settles its entries.
    await store.relations.replace(other, inFlight);
    await store.client.nostrSettleJournal(keys().journal(replaceableAddress(inFlight) as string), `+abcdef0000000005${inFlight.id}`, `-abcdef0000000005${other.id}`);
    expect(await followers([bob, carol, dave])).toEqual([0, 1, 1]);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('`sync` runs the sweep on its own, now and then', async () => {
    const [bob, carol] = ['synced-sweep-bob', 'synced-sweep-carol'].map(pubkeyOf) as [string, string];
    await store.putEvents([followList('synced-sweep-alice', [bob], T)]);
    const second = followList('synced-sweep-alice', [carol], T + 10);
    await replaceScriptOnly(second, 'abcdef0000000007');
    await backdate(second);
    const sync = new RelaySync({ relays: [], kinds: [3], store, logger: captureLogs('silent').logger, journalSweepMs: 100 });
    sync.start();
    try {
      await expect.poll(() => journalHeld(second), { timeout: 5000, interval: 50 }).toBe(0);
    } finally {
      await sync.stop();
    }
    expect(await followers([bob, carol])).toEqual([0, 1]);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it("a list and its replacement in one batch, the replacement's relations failing: the retry takes the first list's follows and notifications away (each transition's entries settle apart)", async () => {
    const [bob, carol] = ['batch-bob', 'batch-carol'].map(pubkeyOf) as [string, string];
    const first = followList('batch-alice', [bob], T);
    const second = followList('batch-alice', [carol], T + 10);
    const relations = store.relations;
    const replace = relations.replace.bind(relations);
    let fail = true;
    relations.replace = async (previous, next, ...rest) => {
      if (fail && next.id === second.id) throw new Error('lost: the connection went');
      return replace(previous, next, ...rest);
    };
    try {
      await expect(store.putEvents([first, second])).rejects.toThrow();
      fail = false;
      expect(await store.putEvents([first, second])).toEqual(['superseded', 'duplicate']);
    } finally {
      relations.replace = replace;
    }
    expect(await followers([bob, carol])).toEqual([0, 1]);
    expect(await journalHeld(second)).toBe(0);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it("a heal while another process replaces the same list: the heal's sets wait for that process's follows to land, then set them to the list held", async () => {
    const [bob, carol, dave, erin] = ['race-bob', 'race-carol', 'race-dave', 'race-erin'].map(pubkeyOf) as [string, string, string, string];
    const lists = [[bob], [carol], [dave], [erin]].map((follows, version) => followList('race-alice', follows, T + 10 * version)) as [NostrEvent, NostrEvent, NostrEvent, NostrEvent];
    await store.putEvents([lists[0]]);
    // A process stopped after its REPLACE of the second list, long ago.
    await replaceScriptOnly(lists[1], 'abcdef0000000003');
    await backdate(lists[1]);
    // Another process (a store of its own on the same prefix) replaces the list once this one has
    // decided to heal, its follows sent as the heal runs.
    const other = new RedisEventStore(store.client, testStore.prefix);
    const flush = other.relations.flushFollows.bind(other.relations);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const flushing = new Promise<void>((resolve) => (entered = resolve));
    other.relations.flushFollows = async (follows) => {
      entered();
      await released;
      return flush(follows);
    };
    const healer = store as unknown as { heal: (...args: unknown[]) => Promise<boolean> };
    const heal = healer.heal.bind(store);
    let replaced: Promise<unknown> | undefined;
    healer.heal = async (...args: unknown[]) => {
      replaced = other.putEvents([lists[3]]);
      await flushing;
      release();
      return heal(...args);
    };
    try {
      expect(await store.putEvents([lists[2]])).toEqual(['replaced']);
      expect(await replaced).toEqual(['replaced']);
    } finally {
      healer.heal = heal;
    }
    expect(await followers([bob, carol, dave, erin])).toEqual([0, 0, 0, 1]);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it("a batch whose heal cannot set its follows (another writer's transition not settled in 3 s) fails, and its retry heals them", async () => {
    const [bob, carol] = ['stuck-bob', 'stuck-carol'].map(pubkeyOf) as [string, string];
    const first = followList('stuck-alice', [bob], T);
    await store.putEvents([first]);
    const second = followList('stuck-alice', [carol], T + 10);
    // A failed batch of this process's left a transition of the address: the next write heals it.
    await replaceScriptOnly(second, endedBatch());
    const third = followList('stuck-alice', [bob, carol], T + 20);
    const journal = keys().journal(replaceableAddress(third) as string);
    // Right after this write's script, another process journals a transition it is slow to settle.
    const replace = store.client.nostrReplaceEvent.bind(store.client);
    const [seconds] = await store.client.time();
    const stranger = `+abcdef0000000006${String(seconds).padStart(10, '0')}${'ab'.repeat(32)}\n`;
    store.client.nostrReplaceEvent = (async (...args: Parameters<typeof replace>) => {
      const reply = await replace(...args);
      await store.client.append(journal, stranger);
      return reply;
    }) as typeof replace;
    try {
      await expect(store.putEvents([third])).rejects.toThrow();
    } finally {
      store.client.nostrReplaceEvent = replace;
    }
    // That process settles its entry; the batch written again heals what it left.
    const held = (await store.client.get(journal)) as string;
    await store.client.set(journal, held.replace(stranger, ''));
    expect(await store.putEvents([third])).toEqual(['duplicate']);
    expect(await followers([bob, carol])).toEqual([1, 1]);
    expect(await journalHeld(third)).toBe(0);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('a deletion by `a` tag whose bar was raised but whose reply was lost: the replay takes the list out of every figure', async () => {
    const [bob, carol] = ['bar-bob', 'bar-carol'].map(pubkeyOf) as [string, string];
    const list = followList('bar-alice', [bob, carol], T);
    await store.putEvents([list]);
    const request = signed('bar-alice', { kind: 5, created_at: T + 10, tags: [['a', `3:${list.pubkey}:`]] });
    const address = replaceableAddress(list) as string;
    expect((await store.client.nostrRaiseBar(keys().replaceable(address), keys().journal(address), String(request.created_at), '', endedBatch()))[0]).not.toBe('');
    expect(await followers([bob, carol])).toEqual([1, 1]);
    await store.putEvents([request]);
    expect(await followers([bob, carol])).toEqual([0, 0]);
    expect(await journalHeld(list)).toBe(0);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('a deletion of a version by `e` tag whose reply was lost: the replay takes the version out of its slot and its figures', async () => {
    const [bob] = ['version-bob'].map(pubkeyOf) as [string];
    const list = followList('version-alice', [bob], T);
    await store.putEvents([list]);
    const request = signed('version-alice', { kind: 5, created_at: T + 10, tags: [['e', list.id]] });
    const [verdict] = await store.client.nostrDeleteIdBuffer(keys().event(list.id), list.pubkey, '8', '3600');
    expect(verdict.toString()).toBe('version');
    await store.putEvents([request]);
    expect(await followers([bob])).toEqual([0]);
    expect(await store.getReplaceable(3, [list.pubkey])).toEqual([expect.objectContaining({ deleted: true })]);
    // Settled: the tombstone is the author's alone again.
    expect((await store.client.get(keys().event(list.id)))?.length).toBe(65);
    await expectExact(store, NO_KIND_COUNTS);
  });

  it('a request to vanish whose removals ran but whose replies were lost: the replay removes what they left counted', async () => {
    const { note, related } = world('vanished');
    const bob = pubkeyOf('vanished-bob');
    const list = followList('vanished-bob', [note.pubkey], T);
    await store.putEvents([note, ...related, list]);
    const request = signed('vanished-bob', { kind: 62, created_at: T + 100, tags: [['relay', 'ALL_RELAYS']] });
    // The request's scripts ran: the time, a tombstone over each of bob's events, the bar over his list.
    await store.client.nostrVanishAt(keys().vanished(bob), String(request.created_at));
    for (const event of related.filter((event) => event.pubkey === bob)) expect((await store.client.nostrTombstoneBuffer(keys().event(event.id), bob)).length).toBeGreaterThan(0);
    const address = replaceableAddress(list) as string;
    await store.client.nostrRaiseBar(keys().replaceable(address), keys().journal(address), String(request.created_at), '', endedBatch());
    expect((await store.relations.stats([note.id]))[0]?.reactions.pubkeys).toBe(2);
    await store.putEvents([request]);
    const [stats] = await store.relations.stats([note.id]);
    expect(stats?.reactions.pubkeys).toBe(1);
    expect(stats?.replies).toBe(0);
    expect(await followers([note.pubkey])).toEqual([0]);
    await expectExact(store, NO_KIND_COUNTS);
  });
});
