import { describe, expect, it } from 'vitest';
import { profileMarkKey } from '../../src/store/mark-store.js';
import { describeCursorStoreConformance } from './cursor-store-conformance.js';
import { describeDeletionConformance } from './deletion-conformance.js';
import { describeEventIndexConformance } from './event-index-conformance.js';
import { profile, pubkeyOf, signed } from './events.js';
import { describeMarkStoreConformance } from './mark-store-conformance.js';
import { describeRelationConformance } from './relation-conformance.js';
import { type OpenStore, withStoreFrom } from './store-under-test.js';

export type { StoreUnderTest } from './store-under-test.js';

/**
 * Every rule a store must keep, to run against each implementation: one suite per concern (events,
 * marks, cursors), then what spans them.
 */
export function describeEventStoreConformance(name: string, open: OpenStore): void {
  describeEventIndexConformance(name, open);
  describeMarkStoreConformance(name, open);
  describeCursorStoreConformance(name, open);
  describeDeletionConformance(name, open);
  describeRelationConformance(name, open);
  describe(`${name}: EventStore conformance`, () => {
    const withStore = withStoreFrom(open);

    it(
      'reads profiles with their marks in one call',
      withStore(async (store) => {
        const alice = profile('alice', { name: 'Alice' });
        await store.putEvents([alice]);
        await store.marks.set([profileMarkKey(pubkeyOf('alice')), profileMarkKey(pubkeyOf('bob'))], 60);
        const read = await store.getProfilesWithMarks([pubkeyOf('alice'), pubkeyOf('bob'), pubkeyOf('carol')]);
        expect(read.map(({ profile, marked }) => [profile?.event?.id ?? null, marked])).toEqual([
          [alice.id, true],
          [null, true],
          [null, false],
        ]);
        expect(await store.getProfilesWithMarks([])).toEqual([]);
      }),
    );

    it(
      'reads the latest event of any replaceable kind with any mark in one call (relay lists and their freshness)',
      withStore(async (store) => {
        const list = signed('alice', { kind: 10002, tags: [['r', 'wss://relay.example.com']] });
        await store.putEvents([list]);
        await store.marks.set([`relays:${pubkeyOf('bob')}`], 60, ['noted']);
        const read = await store.getReplaceableWithMarks(10002, [pubkeyOf('alice'), pubkeyOf('bob')], (pubkey) => `relays:${pubkey}`);
        expect(read.map(({ event, marked, note }) => [event?.event?.id ?? null, marked, note])).toEqual([
          [list.id, false, null],
          [null, true, 'noted'],
        ]);
        expect(await store.getReplaceableWithMarks(10002, [], (pubkey) => pubkey)).toEqual([]);
      }),
    );

    it(
      'answers ping',
      withStore(async (store) => {
        await expect(store.ping()).resolves.toBeUndefined();
      }),
    );
  });
}
