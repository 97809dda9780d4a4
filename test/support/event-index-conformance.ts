import { describe, expect, it } from 'vitest';
import { type NostrEvent, serializeEvent } from '../../src/nostr/event.js';
import { profile, pubkeyOf, realEvents, signed } from './events.js';
import { type OpenStore, withStoreFrom } from './store-under-test.js';

/** Every rule of the event index (EventIndex), to run against each store. */
export function describeEventIndexConformance(name: string, open: OpenStore): void {
  describe(`${name}: EventIndex conformance`, () => {
    const withStore = withStoreFrom(open);

    it(
      'stores, reads back byte-exact (the UTF-8 of the NIP-01 serialisation), and reports duplicates',
      withStore(async (store) => {
        // Four-byte emoji, accents, and a lone surrogate (JSON.stringify writes it as an escape).
        const unusual = signed('una', { content: '🌅 ünï \ud800 "q" \\', tags: [['t', 'ключ']] });
        const events = [...realEvents().filter((event) => event.kind === 1), unusual];
        expect(await store.putEvents(events)).toEqual(events.map(() => 'stored'));
        expect(await store.putEvents(events)).toEqual(events.map(() => 'duplicate'));
        const read = await store.getEvents(events.map((event) => event.id));
        expect(read.map((stored) => stored?.event)).toEqual(events);
        for (const [index, stored] of read.entries()) {
          const expected = serializeEvent(events[index] as NostrEvent);
          expect(stored?.json?.bytes.toString('hex')).toBe(Buffer.from(expected, 'utf8').toString('hex'));
          expect(String(stored?.json)).toBe(expected);
        }
      }),
    );

    it(
      'an addressable event whose d tag is longer than any store key is stored, found by id, and replaced',
      withStore(async (store) => {
        const d = 'd'.repeat(4096);
        const first = signed('long-d', { kind: 30023, created_at: 1_700_000_000, tags: [['d', d]], content: 'v1' });
        const second = signed('long-d', { kind: 30023, created_at: 1_700_000_001, tags: [['d', d]], content: 'v2' });
        const other = signed('long-d', { kind: 30023, tags: [['d', `${d}x`]], content: 'another address' });
        const plain = signed('long-d', { content: 'in the same batch' });
        expect(await store.putEvents([first, other, plain])).toEqual(['stored', 'stored', 'stored']);
        expect((await store.getEvents([first.id, other.id, plain.id])).map((stored) => stored?.event)).toEqual([
          first,
          other,
          plain,
        ]);
        expect(await store.putEvents([second])).toEqual(['replaced']);
        expect((await store.getEvents([first.id, second.id])).map((stored) => stored?.event ?? null)).toEqual([
          null,
          second,
        ]);
      }),
    );

    it(
      'reads the latest event of a replaceable kind per pubkey (relay lists, NIP-65), in order, null where none',
      withStore(async (store) => {
        const older = signed('lister', { kind: 10002, created_at: 1_700_000_000, tags: [['r', 'wss://old.example']] });
        const newer = signed('lister', { kind: 10002, created_at: 1_700_000_001, tags: [['r', 'wss://new.example']] });
        const contacts = signed('lister', { kind: 3, tags: [] });
        await store.putEvents([newer, older, contacts]);
        const read = await store.getReplaceable(10002, [pubkeyOf('nobody'), pubkeyOf('lister')]);
        expect(read.map((stored) => stored?.event ?? null)).toEqual([null, newer]);
        expect((await store.getReplaceable(3, [pubkeyOf('lister')]))[0]?.event).toEqual(contacts);
        expect(await store.getReplaceable(10002, [])).toEqual([]);
      }),
    );

    it(
      'reads the latest version at NIP-01 coordinates (naddr), in order: addressable by d, replaceable by kind, a long d hashed, null where none or malformed',
      withStore(async (store) => {
        const zoe = pubkeyOf('zoe');
        const v1 = signed('zoe', { kind: 30023, created_at: 1_700_000_000, tags: [['d', 'essay']], content: 'v1' });
        const v2 = signed('zoe', { kind: 30023, created_at: 1_700_000_100, tags: [['d', 'essay']], content: 'v2' });
        const other = signed('zoe', { kind: 30023, tags: [['d', 'other']], content: 'other' });
        const long = signed('zoe', { kind: 30023, tags: [['d', 'd'.repeat(600)]], content: 'long' });
        const card = profile('zoe', { name: 'Zoe' });
        await store.putEvents([v2, v1, other, long, card]);
        const read = await store.getByCoordinates([
          `30023:${zoe}:essay`,
          `30023:${zoe}:missing`,
          `0:${zoe}:`,
          `30023:${zoe}:${'d'.repeat(600)}`,
          `30023:${zoe}:other`,
          `1:${zoe}:`, // a regular kind has no coordinate
          'not a coordinate',
          `30023:${zoe.toUpperCase()}:essay`,
        ]);
        expect(read.map((held) => held?.event?.id ?? null)).toEqual([v2.id, null, card.id, long.id, other.id, null, null, null]);
        expect(await store.getByCoordinates([])).toEqual([]);
      }),
    );

    it(
      'reads many ids in one call, in order, null where unknown',
      withStore(async (store) => {
        const a = signed('alice', { content: 'a' });
        const b = signed('bob', { content: 'b' });
        await store.putEvents([a, b]);
        const read = await store.getEvents([b.id, 'f'.repeat(64), a.id, b.id]);
        expect(read.map((stored) => stored?.event?.id ?? null)).toEqual([b.id, null, a.id, b.id]);
        expect(await store.getEvents([])).toEqual([]);
      }),
    );

    it(
      'NIP-01: the newest profile wins whatever the write order',
      withStore(async (store) => {
        const versions = [1, 2, 3, 4].map((n) => profile('alice', { name: `v${n}` }, 1_700_000_000 + n));
        for (const order of [
          [0, 1, 2, 3],
          [3, 2, 1, 0],
          [2, 0, 3, 1],
        ]) {
          const ordered = order.map((index) => versions[index] as NostrEvent);
          await store.putEvents(ordered.slice(0, 1));
          for (const event of ordered.slice(1)) await store.putEvents([event]);
          const [latest] = await store.getProfiles([pubkeyOf('alice')]);
          expect(latest?.event).toEqual(versions[3]);
        }
        // Only the latest version is kept: older ids are no longer found (NIP-01 replaceable events).
        const byId = await store.getEvents(versions.map((event) => event.id));
        expect(byId.map((stored) => stored?.event?.id ?? null)).toEqual([null, null, null, versions[3]?.id]);
      }),
    );

    it(
      'reports stored, replaced and superseded',
      withStore(async (store) => {
        const old = profile('bob', { name: 'old' }, 100);
        const newer = profile('bob', { name: 'new' }, 200);
        expect(await store.putEvents([old])).toEqual(['stored']);
        expect(await store.putEvents([newer])).toEqual(['replaced']);
        expect(await store.putEvents([old])).toEqual(['superseded']);
        expect(await store.putEvents([newer])).toEqual(['duplicate']);
      }),
    );

    it(
      'NIP-01: on a created_at tie the lowest id wins, in either order',
      withStore(async (store) => {
        const candidates = ['x', 'y', 'z', 'w'].map((name) => profile('carol', { name }, 1_700_000_500));
        const lowest = [...candidates].sort((a, b) => (a.id < b.id ? -1 : 1))[0] as NostrEvent;
        for (const event of candidates) await store.putEvents([event]);
        expect((await store.getProfiles([pubkeyOf('carol')]))[0]?.event?.id).toBe(lowest.id);
        for (const event of [...candidates].reverse()) await store.putEvents([event]);
        expect((await store.getProfiles([pubkeyOf('carol')]))[0]?.event?.id).toBe(lowest.id);
      }),
    );

    it(
      'concurrent writers cannot regress a profile',
      withStore(async (store) => {
        const versions = Array.from({ length: 40 }, (_, n) =>
          profile('dave', { name: `v${n}` }, 1_700_000_000 + n),
        );
        const newest = versions[39] as NostrEvent;
        const shuffled = [...versions].sort(() => Math.random() - 0.5);
        await Promise.all(shuffled.map((event) => store.putEvents([event])));
        expect((await store.getProfiles([pubkeyOf('dave')]))[0]?.event).toEqual(newest);
        expect((await store.getEvents([newest.id]))[0]?.event).toEqual(newest);
      }),
    );

    it(
      'several versions in one batch keep the newest',
      withStore(async (store) => {
        const versions = [3, 1, 2].map((n) => profile('erin', { n }, 1_700_000_000 + n));
        expect(await store.putEvents(versions)).toEqual(['stored', 'superseded', 'superseded']);
        expect((await store.getProfiles([pubkeyOf('erin')]))[0]?.event).toEqual(versions[0]);
      }),
    );

    it(
      'reads a batch of profiles in one call, in order, null where none',
      withStore(async (store) => {
        const names = Array.from({ length: 25 }, (_, n) => `batch-${n}`);
        await store.putEvents(names.filter((_, n) => n % 2 === 0).map((name) => profile(name, { name })));
        const read = await store.getProfiles(names.map(pubkeyOf));
        expect(read.map((stored) => (stored?.event ? JSON.parse(stored.event.content).name : null))).toEqual(
          names.map((name, n) => (n % 2 === 0 ? name : null)),
        );
        expect(await store.getProfiles([])).toEqual([]);
      }),
    );

    it(
      'a profile found by id is the latest one, with the seven fields',
      withStore(async (store) => {
        const event = profile('frank', { name: 'frank' });
        await store.putEvents([event]);
        const [byId] = await store.getEvents([event.id]);
        expect(byId?.event).toEqual(event);
        expect(Object.keys(JSON.parse(String(byId?.json)))).toEqual([
          'id',
          'pubkey',
          'created_at',
          'kind',
          'tags',
          'content',
          'sig',
        ]);
      }),
    );

    it(
      'other replaceable kinds (3, 10002) and addressable kinds (30000+, per d tag) follow the same rule',
      withStore(async (store) => {
        const contacts = [
          signed('gina', { kind: 3, created_at: 10 }),
          signed('gina', { kind: 3, created_at: 20 }),
        ];
        const relays = [
          signed('gina', { kind: 10002, created_at: 30 }),
          signed('gina', { kind: 10002, created_at: 5 }),
        ];
        const articles = [
          signed('gina', { kind: 30023, created_at: 1, tags: [['d', 'one']] }),
          signed('gina', { kind: 30023, created_at: 2, tags: [['d', 'one']] }),
          signed('gina', { kind: 30023, created_at: 1, tags: [['d', 'two']] }),
        ];
        expect(await store.putEvents(contacts)).toEqual(['stored', 'replaced']);
        expect(await store.putEvents(relays)).toEqual(['stored', 'superseded']);
        expect(await store.putEvents(articles)).toEqual(['stored', 'replaced', 'stored']);
        const ids = [...contacts, ...relays, ...articles].map((event) => event.id);
        expect((await store.getEvents(ids)).map((stored) => stored !== null)).toEqual([
          false,
          true,
          true,
          false,
          false,
          true,
          true,
        ]);
      }),
    );

    it(
      'created_at beyond 2^31 is kept exact and compared as a number',
      withStore(async (store) => {
        const later = profile('hank', { name: 'later' }, 2 ** 31 + 1);
        const earlier = profile('hank', { name: 'earlier' }, 2 ** 31 - 1);
        const far = signed('hank', { created_at: 2 ** 40 + 3 });
        await store.putEvents([later, earlier, far]);
        expect((await store.getProfiles([pubkeyOf('hank')]))[0]?.event?.created_at).toBe(2 ** 31 + 1);
        const [stored] = await store.getEvents([far.id]);
        expect(String(stored?.json)).toContain(`"created_at":${2 ** 40 + 3},`);
      }),
    );

    it(
      'keeps what it stored across a restart of the process',
      withStore(async (store, subject) => {
        const note = signed('olga', { content: 'still here' });
        const versions = [profile('olga', { v: 1 }, 1), profile('olga', { v: 2 }, 2)];
        await store.putEvents([note, ...versions]);
        await store.close();
        const again = await subject.reopen();
        try {
          expect((await again.getEvents([note.id]))[0]?.event).toEqual(note);
          expect((await again.getProfiles([pubkeyOf('olga')]))[0]?.event).toEqual(versions[1]);
          // The rule still holds against what survived the restart.
          expect(await again.putEvents([versions[0] as NostrEvent])).toEqual(['superseded']);
        } finally {
          await again.close();
        }
      }),
    );
  });
}
