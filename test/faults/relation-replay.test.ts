import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type NostrEvent, wireFormOf } from '../../src/nostr/event.js';
import { connectRedis, waitUntilReady } from '../../src/store/redis/connect.js';
import { RedisEventStore } from '../../src/store/redis/redis-event-store.js';
import { BOTH_STORES, type OpenedStore } from '../support/both-stores.js';
import { pubkeyOf, signed } from '../support/events.js';
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
