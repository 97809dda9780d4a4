import { describe, expect, it } from 'vitest';
import { type OpenStore, withStoreFrom } from './store-under-test.js';

/** Every rule of marks (MarkStore): expiry, batch reads, claims; to run against each store. */
export function describeMarkStoreConformance(name: string, open: OpenStore): void {
  describe(`${name}: MarkStore conformance`, () => {
    const withStore = withStoreFrom(open);

    it(
      'keeps marks until they expire, in one batch read',
      withStore(async (store) => {
        await store.marks.set(['event:a', 'profile:b'], 1);
        await store.marks.set(['event:long'], 60);
        expect(await store.marks.has(['event:a', 'profile:b', 'event:long', 'event:never'])).toEqual([true, true, true, false]);
        await store.marks.clear(['profile:b']);
        expect(await store.marks.has(['profile:b'])).toEqual([false]);
        await new Promise((resolve) => setTimeout(resolve, 1100));
        expect(await store.marks.has(['event:a', 'event:long'])).toEqual([false, true]);
        expect(await store.marks.has([])).toEqual([]);
      }),
    );

    it(
      'keeps a note per mark while it is in force: empty for a mark without one, null for none or expired',
      withStore(async (store) => {
        await store.marks.set(['event:noted', 'event:plain', 'profile:noted'], 1, ['ab12cd34 ef56ab78', '', 'x']);
        await store.marks.set(['event:bare'], 60);
        expect(await store.marks.notes(['event:noted', 'event:plain', 'profile:noted', 'event:bare', 'event:none'])).toEqual([
          'ab12cd34 ef56ab78',
          '',
          'x',
          '',
          null,
        ]);
        expect(await store.marks.has(['event:noted', 'event:none'])).toEqual([true, false]);
        const [withMark] = await store.getProfilesWithMarks(['noted']);
        expect(withMark).toEqual({ profile: null, marked: true, note: 'x' });
        await new Promise((resolve) => setTimeout(resolve, 1100));
        expect(await store.marks.notes(['event:noted', 'event:bare'])).toEqual([null, '']);
        expect(await store.marks.notes([])).toEqual([]);
      }),
    );

    it(
      'renotes marks in force without moving their expiry, and never makes a mark',
      withStore(async (store) => {
        await store.marks.set(['event:short', 'event:long'], 1, ['old', 'old']);
        await store.marks.set(['event:long'], 60, ['old']);
        await store.marks.renote(['event:short', 'event:long', 'event:absent'], ['new', 'newer', 'x']);
        expect(await store.marks.notes(['event:short', 'event:long', 'event:absent'])).toEqual(['new', 'newer', null]);
        await new Promise((resolve) => setTimeout(resolve, 1100));
        expect(await store.marks.notes(['event:short', 'event:long', 'event:absent'])).toEqual([null, 'newer', null]);
      }),
    );

    it(
      'claims a mark once while it is in force, whoever asks, and again once it expired',
      withStore(async (store) => {
        await store.marks.set(['profile:held'], 60);
        expect(await store.marks.claim(['profile:new', 'profile:held', 'profile:new'], 1)).toEqual([true, false, false]);
        // Concurrent claims of one key: exactly one wins.
        const racing = await Promise.all([1, 2, 3, 4].map(() => store.marks.claim(['profile:race'], 60)));
        expect(racing.flat().filter(Boolean)).toHaveLength(1);
        await new Promise((resolve) => setTimeout(resolve, 1100));
        expect(await store.marks.claim(['profile:new'], 60)).toEqual([true]);
        expect(await store.marks.has(['profile:new', 'profile:held'])).toEqual([true, true]);
      }),
    );
  });
}
