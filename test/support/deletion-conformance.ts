import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { EventStore, Held } from '../../src/store/event-store.js';
import { DELETED } from '../../src/store/tombstones.js';
import { profile, pubkeyOf, signed } from './events.js';
import { type OpenStore, withStoreFrom } from './store-under-test.js';

const T = 1_700_000_000;

/** A deletion request (NIP-09) by `author`, with `e` tags for `ids` and `a` tags for `addresses`. */
export function deletion(author: string, { ids = [], addresses = [], at = T + 100 }: { ids?: string[]; addresses?: string[]; at?: number }): NostrEvent {
  return signed(author, {
    kind: 5,
    created_at: at,
    tags: [...ids.map((id) => ['e', id]), ...addresses.map((address) => ['a', address])],
    content: 'published by accident',
  });
}

/** A request to vanish (NIP-62) by `author` at `at`, naming `relay` (ALL_RELAYS by default). */
export function vanish(author: string, at: number, relay = 'ALL_RELAYS'): NostrEvent {
  return signed(author, { kind: 62, created_at: at, tags: [['relay', relay]], content: 'please forget me' });
}

/** What a read says, as something toEqual can compare: the event id, 'deleted', or null. */
function said(held: Held): string | null {
  if (held === DELETED) return 'deleted';
  return held?.event?.id ?? null;
}

async function ids(store: EventStore, wanted: readonly string[]): Promise<(string | null)[]> {
  return (await store.getEvents(wanted)).map(said);
}

async function profiles(store: EventStore, pubkeys: readonly string[]): Promise<(string | null)[]> {
  return (await store.getProfiles(pubkeys)).map(said);
}

/** Writes `events` one batch each, in this order; returns each event's outcome. */
async function putEach(store: EventStore, events: readonly NostrEvent[]): Promise<string[]> {
  const outcomes: string[] = [];
  for (const event of events) outcomes.push(...(await store.putEvents([event])));
  return outcomes;
}

/**
 * Deletions (NIP-09) and requests to vanish (NIP-62), applied by the store whatever the order of
 * arrival, with freshly signed events.
 */
export function describeDeletionConformance(name: string, open: OpenStore): void {
  describe(`${name}: deletions (NIP-09) and requests to vanish (NIP-62)`, () => {
    const withStore = withStoreFrom(open);

    it(
      'NIP-09 e tag: the author deletes a note, in either order; the note is not stored again; the request stays readable',
      withStore(async (store) => {
        const note = signed('alice', { content: 'oops' });
        const request = deletion('alice', { ids: [note.id] });
        expect(await putEach(store, [note, request])).toEqual(['stored', 'applied']);
        expect(await ids(store, [note.id, request.id])).toEqual(['deleted', request.id]);
        // Re-sent by a relay, an import or a sync: refused.
        expect(await store.putEvents([note])).toEqual(['deleted']);
        expect(await ids(store, [note.id])).toEqual(['deleted']);
        // The request again changes nothing.
        expect(await store.putEvents([request])).toEqual(['duplicate']);

        const later = signed('alice', { content: 'deleted before it arrived' });
        const early = deletion('alice', { ids: [later.id], at: T + 200 });
        expect(await putEach(store, [early, later])).toEqual(['applied', 'deleted']);
        expect(await ids(store, [later.id, early.id])).toEqual(['deleted', early.id]);
        expect(await store.putEvents([later])).toEqual(['deleted']);
      }),
    );

    it(
      'NIP-09: a deletion signed by anyone else changes nothing, in either order',
      withStore(async (store) => {
        const note = signed('alice', { content: 'mine' });
        const forged = deletion('mallory', { ids: [note.id] });
        expect(await putEach(store, [note, forged])).toEqual(['stored', 'applied']);
        expect(await ids(store, [note.id])).toEqual([note.id]);

        const other = signed('alice', { content: 'also mine' });
        const early = deletion('mallory', { ids: [other.id] });
        expect(await putEach(store, [early, other])).toEqual(['applied', 'stored']);
        expect(await ids(store, [other.id])).toEqual([other.id]);
        // Nor an a tag naming someone else's address.
        const article = signed('alice', { kind: 30023, tags: [['d', 'post']], content: 'article' });
        const byOther = deletion('mallory', { addresses: [`30023:${pubkeyOf('alice')}:post`] });
        expect(await putEach(store, [byOther, article])).toEqual(['stored', 'stored']);
        expect(await ids(store, [article.id])).toEqual([article.id]);
      }),
    );

    it(
      'NIP-09: a deletion naming the same id among other deleters still applies to its author (pending deletions keep every signer)',
      withStore(async (store) => {
        const note = signed('alice', { content: 'named by many' });
        const requests = ['m1', 'm2', 'alice', 'm3'].map((author) => deletion(author, { ids: [note.id] }));
        await putEach(store, requests);
        expect(await store.putEvents([note])).toEqual(['deleted']);
        expect(await ids(store, [note.id])).toEqual(['deleted']);
      }),
    );

    it(
      'NIP-09: with 16 other keys naming an id first, the author’s deletion still deletes it when it comes in the same batch as the event (fetch on miss stores them together)',
      withStore(async (store) => {
        const note = signed('alice', { content: 'crowded' });
        await putEach(
          store,
          Array.from({ length: 16 }, (_, index) => deletion(`stranger-${index}`, { ids: [note.id] })),
        );
        expect(await store.putEvents([deletion('alice', { ids: [note.id] }), note])).toEqual(['applied', 'deleted']);
        expect(await ids(store, [note.id])).toEqual(['deleted']);
        // A replaceable version too.
        const card = profile('alice', { name: 'crowded' }, T);
        await putEach(
          store,
          Array.from({ length: 16 }, (_, index) => deletion(`stranger-${index}`, { ids: [card.id] })),
        );
        expect(await store.putEvents([card, deletion('alice', { ids: [card.id] })])).toEqual(['deleted', 'applied']);
        expect(await profiles(store, [pubkeyOf('alice')])).toEqual(['deleted']);
      }),
    );

    it(
      'NIP-09: the event and its deletion in one batch, in either order',
      withStore(async (store) => {
        const one = signed('bob', { content: 'one' });
        const two = signed('bob', { content: 'two' });
        const first = deletion('bob', { ids: [one.id] });
        const second = deletion('bob', { ids: [two.id] });
        expect(await store.putEvents([one, first, second, two])).toEqual(['deleted', 'applied', 'applied', 'deleted']);
        expect(await ids(store, [one.id, two.id])).toEqual(['deleted', 'deleted']);
      }),
    );

    it(
      'NIP-09 a tag: every version up to the deletion goes, a same-second version too; a newer version is served again',
      withStore(async (store) => {
        const address = `30023:${pubkeyOf('carol')}:essay`;
        const version = (at: number, content: string) => signed('carol', { kind: 30023, created_at: at, tags: [['d', 'essay']], content });
        const v1 = version(T, 'first');
        const atDeletion = version(T + 100, 'same second as the deletion');
        const v3 = version(T + 200, 'after');
        const request = deletion('carol', { addresses: [address], at: T + 100 });
        // Event first.
        expect(await putEach(store, [v1, request])).toEqual(['stored', 'applied']);
        expect(await ids(store, [v1.id])).toEqual(['deleted']);
        // Versions the deletion covers are refused when they arrive later; a newer one is stored.
        expect(await putEach(store, [atDeletion, v1, v3])).toEqual(['deleted', 'deleted', 'stored']);
        expect(await ids(store, [atDeletion.id, v3.id])).toEqual(['deleted', v3.id]);
        // A deletion older than the version held leaves it.
        expect(await store.putEvents([deletion('carol', { addresses: [address], at: T + 150 })])).toEqual(['applied']);
        expect(await ids(store, [v3.id])).toEqual([v3.id]);
      }),
    );

    it(
      'NIP-09 a tag on a profile (kind 0, `0:<pubkey>:`): deleted in either order, and a newer profile is served again',
      withStore(async (store) => {
        const dave = pubkeyOf('dave');
        const old = profile('dave', { name: 'Dave' }, T);
        const request = deletion('dave', { addresses: [`0:${dave}:`], at: T + 10 });
        expect(await putEach(store, [request, old])).toEqual(['applied', 'deleted']);
        expect(await profiles(store, [dave])).toEqual(['deleted']);
        expect(await ids(store, [old.id])).toEqual(['deleted']);
        const newer = profile('dave', { name: 'Dave again' }, T + 20);
        expect(await store.putEvents([newer])).toEqual(['stored']);
        expect(await profiles(store, [dave])).toEqual([newer.id]);

        const erin = pubkeyOf('erin');
        const held = profile('erin', { name: 'Erin' }, T);
        expect(await putEach(store, [held, deletion('erin', { addresses: [`0:${erin}:`], at: T + 10 })])).toEqual(['stored', 'applied']);
        expect(await profiles(store, [erin])).toEqual(['deleted']);
      }),
    );

    it(
      'NIP-09 e tag on a profile version: the profile reads deleted; older versions stay superseded, newer ones are stored',
      withStore(async (store) => {
        const frank = pubkeyOf('frank');
        const older = profile('frank', { name: 'old' }, T);
        const current = profile('frank', { name: 'current' }, T + 10);
        const request = deletion('frank', { ids: [current.id] });
        expect(await putEach(store, [current, request])).toEqual(['stored', 'applied']);
        expect(await profiles(store, [frank])).toEqual(['deleted']);
        expect(await ids(store, [current.id])).toEqual(['deleted']);
        expect(await putEach(store, [older, current])).toEqual(['superseded', 'deleted']);
        const newer = profile('frank', { name: 'new' }, T + 20);
        expect(await store.putEvents([newer])).toEqual(['stored']);
        expect(await profiles(store, [frank])).toEqual([newer.id]);

        // The other order: the deletion first.
        const grace = pubkeyOf('grace');
        const version = profile('grace', { name: 'Grace' }, T);
        expect(await putEach(store, [deletion('grace', { ids: [version.id] }), version])).toEqual(['applied', 'deleted']);
        expect(await profiles(store, [grace])).toEqual(['deleted']);
        // Someone else's e tag naming a profile changes nothing.
        const heidi = profile('heidi', { name: 'Heidi' }, T);
        expect(await putEach(store, [heidi, deletion('mallory', { ids: [heidi.id] })])).toEqual(['stored', 'applied']);
        expect(await profiles(store, [pubkeyOf('heidi')])).toEqual([heidi.id]);
      }),
    );

    it(
      'NIP-09: a deletion of a deletion does nothing, in either order',
      withStore(async (store) => {
        const note = signed('ivan', { content: 'gone' });
        const first = deletion('ivan', { ids: [note.id] });
        const undo = deletion('ivan', { ids: [first.id], at: T + 200 });
        expect(await putEach(store, [note, first, undo])).toEqual(['stored', 'applied', 'applied']);
        expect(await ids(store, [note.id, first.id, undo.id])).toEqual(['deleted', first.id, undo.id]);

        const other = signed('ivan', { content: 'also gone' });
        const second = deletion('ivan', { ids: [other.id], at: T + 300 });
        const undoFirst = deletion('ivan', { ids: [second.id], at: T + 400 });
        expect(await putEach(store, [undoFirst, other, second])).toEqual(['applied', 'stored', 'applied']);
        expect(await ids(store, [other.id, second.id])).toEqual(['deleted', second.id]);
      }),
    );

    it(
      'NIP-62: a request to vanish removes every event of its author up to its time, refuses them from then on, and accepts newer ones',
      withStore(async (store) => {
        const judy = pubkeyOf('judy');
        const note = signed('judy', { content: 'note', created_at: T });
        const article = signed('judy', { kind: 30023, tags: [['d', 'a']], created_at: T });
        const card = profile('judy', { name: 'Judy' }, T);
        const list = signed('judy', { kind: 10002, tags: [['r', 'wss://relay.example.com']], created_at: T });
        const ownDeletion = deletion('judy', { ids: ['ab'.repeat(32)], at: T + 1 });
        const bystander = signed('ken', { content: 'not judy', created_at: T });
        await store.putEvents([note, article, card, list, ownDeletion, bystander]);
        const request = vanish('judy', T + 50);
        expect(await store.putEvents([request])).toEqual(['applied']);
        expect(await ids(store, [note.id, article.id, card.id, list.id, ownDeletion.id, bystander.id, request.id])).toEqual([
          'deleted',
          'deleted',
          'deleted',
          'deleted',
          'deleted',
          bystander.id,
          request.id,
        ]);
        expect(await profiles(store, [judy])).toEqual(['deleted']);
        expect((await store.getReplaceable(10002, [judy])).map(said)).toEqual(['deleted']);
        // Re-sent: refused. At the request's second: refused. Newer: accepted.
        const atRequest = signed('judy', { content: 'same second', created_at: T + 50 });
        const newer = signed('judy', { content: 'back', created_at: T + 51 });
        const newerCard = profile('judy', { name: 'Judy 2' }, T + 60);
        expect(await store.putEvents([note, card, atRequest, newer, newerCard])).toEqual(['deleted', 'deleted', 'deleted', 'stored', 'stored']);
        expect(await ids(store, [atRequest.id, newer.id])).toEqual(['deleted', newer.id]);
        expect(await profiles(store, [judy])).toEqual([newerCard.id]);
        // An older request to vanish changes nothing more; the newest time holds.
        expect(await store.putEvents([vanish('judy', T + 10)])).toEqual(['applied']);
        expect(await ids(store, [newer.id])).toEqual([newer.id]);
      }),
    );

    it(
      'NIP-62: the request first, then the events it covers (import order): refused, and read as deleted',
      withStore(async (store) => {
        const mike = pubkeyOf('mike');
        const request = vanish('mike', T + 50);
        const note = signed('mike', { content: 'old', created_at: T });
        const card = profile('mike', { name: 'Mike' }, T);
        expect(await putEach(store, [request, note, card])).toEqual(['applied', 'deleted', 'deleted']);
        expect(await ids(store, [note.id, card.id])).toEqual(['deleted', 'deleted']);
        expect(await profiles(store, [mike])).toEqual(['deleted']);
      }),
    );

    it(
      'NIP-62: a request naming another relay is stored and not applied; one naming PUBLIC_URL is applied',
      withStore(async (store) => {
        const note = signed('nina', { content: 'stays', created_at: T });
        await store.putEvents([note]);
        const elsewhere = vanish('nina', T + 50, 'wss://some.other.relay');
        expect(await store.putEvents([elsewhere])).toEqual(['stored']);
        expect(await ids(store, [note.id])).toEqual([note.id]);
      }),
    );

    it('NIP-62: PUBLIC_URL names this service (any scheme, trailing slash or not)', async () => {
      const subject = await open({ publicUrl: 'https://lookup.example.com/' });
      try {
        const { store } = subject;
        const note = signed('olga', { content: 'goes', created_at: T });
        await store.putEvents([note]);
        expect(await store.putEvents([vanish('olga', T + 50, 'wss://lookup.example.com')])).toEqual(['applied']);
        expect(await ids(store, [note.id])).toEqual(['deleted']);
        const other = signed('pete', { content: 'stays', created_at: T });
        await store.putEvents([other]);
        expect(await store.putEvents([vanish('pete', T + 50, 'wss://lookup.example.org')])).toEqual(['stored']);
        expect(await ids(store, [other.id])).toEqual([other.id]);
      } finally {
        await subject.cleanup();
      }
    });

    it('a deletion whose event is not held is remembered for PENDING_TTL_SECONDS (30 days; 1 s here), then forgotten', async () => {
      const subject = await open({ pendingTtlSeconds: 1 });
      try {
        const { store } = subject;
        const late = signed('uma', { content: 'arrives after the deletion expired' });
        const soon = signed('uma', { content: 'arrives in time' });
        await store.putEvents([deletion('uma', { ids: [late.id, soon.id] })]);
        expect(await store.putEvents([soon])).toEqual(['deleted']);
        await new Promise((resolve) => setTimeout(resolve, 1300));
        expect(await store.putEvents([late])).toEqual(['stored']);
        expect(await ids(store, [late.id, soon.id])).toEqual([late.id, 'deleted']);
      } finally {
        await subject.cleanup();
      }
    });

    it(
      'the rules hold after a restart (tombstones are stored, not remembered in memory)',
      withStore(async (_store, subject) => {
        const note = signed('quinn', { content: 'x', created_at: T });
        const request = deletion('quinn', { ids: [note.id] });
        await subject.store.putEvents([request]);
        await subject.store.putEvents([vanish('rita', T + 5)]);
        const reopened = await subject.reopen();
        try {
          expect(await reopened.putEvents([note, signed('rita', { created_at: T })])).toEqual(['deleted', 'deleted']);
        } finally {
          if (reopened !== subject.store) await reopened.close();
        }
      }),
    );

    it('generated: every order of arrival, in batches or one by one, ends in the same answers', async () => {
      // A small world: two authors' notes, profiles and an article; deletions by the author and by
      // someone else; a-tag deletions; a request to vanish; a newer version after it.
      const sam = pubkeyOf('sam');
      const note1 = signed('sam', { content: 'n1', created_at: T });
      const note2 = signed('sam', { content: 'n2', created_at: T + 1 });
      const other = signed('tina', { content: 't1', created_at: T });
      const card = profile('sam', { name: 'Sam' }, T);
      const art1 = signed('sam', { kind: 30023, tags: [['d', 'x']], created_at: T });
      const art2 = signed('sam', { kind: 30023, tags: [['d', 'x']], created_at: T + 300 });
      const back = signed('tina', { content: 't2', created_at: T + 6 });
      const world = [
        note1,
        note2,
        other,
        card,
        art1,
        art2,
        deletion('sam', { ids: [note1.id, other.id], at: T + 10 }),
        deletion('tina', { ids: [note2.id], at: T + 11 }),
        deletion('sam', { addresses: [`30023:${sam}:x`], at: T + 20 }),
        deletion('tina', { ids: [other.id], at: T + 12 }),
        vanish('tina', T + 5),
        back,
      ];
      const expected = ['deleted', note2.id, 'deleted', card.id, art2.id, back.id];
      await fc.assert(
        fc.asyncProperty(fc.shuffledSubarray(world, { minLength: world.length }), fc.integer({ min: 1, max: 4 }), async (order, batch) => {
          const subject = await open();
          try {
            for (let start = 0; start < order.length; start += batch) await subject.store.putEvents(order.slice(start, start + batch));
            const read = await ids(subject.store, [note1.id, note2.id, other.id, card.id, art2.id, back.id]);
            expect(read).toEqual(expected);
            // The old article version is never served: deleted if it was held when the a tag came,
            // else superseded by the newer version (NIP-01: not kept), so not found.
            expect([['deleted'], [null]]).toContainEqual(await ids(subject.store, [art1.id]));
            expect(await profiles(subject.store, [sam])).toEqual([card.id]);
          } finally {
            await subject.cleanup();
          }
        }),
        { numRuns: 12 },
      );
    });
  });
}
