import { describe, expect, it } from 'vitest';
import { type OpenStore, withStoreFrom } from './store-under-test.js';

/** Every rule of cursors (CursorStore); to run against each store. */
export function describeCursorStoreConformance(name: string, open: OpenStore): void {
  describe(`${name}: CursorStore conformance`, () => {
    const withStore = withStoreFrom(open);

    it(
      'keeps named cursors across a restart',
      withStore(async (store, subject) => {
        expect(await store.cursors.get('relay:wss://a')).toBeUndefined();
        await store.cursors.set('relay:wss://a', '1700000000');
        await store.cursors.set('relay:wss://a', '1700000100');
        await store.close();
        const again = await subject.reopen();
        try {
          expect(await again.cursors.get('relay:wss://a')).toBe('1700000100');
        } finally {
          await again.close();
        }
      }),
    );
  });
}
