import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import type { EventStore } from '../../src/store/event-store.js';
import { createTestStore } from './test-store.js';

export interface OpenedStore {
  store: EventStore;
  /** Closes the store and removes what it held. */
  cleanup(): Promise<void>;
}

/** Both stores, fresh each time: for `describe.each` over suites that must hold on either. */
export const BOTH_STORES: { name: string; open(): Promise<OpenedStore> }[] = [
  {
    name: 'Redis',
    async open() {
      const opened = await createTestStore();
      return { store: opened.store, cleanup: opened.cleanup };
    },
  },
  {
    name: 'embedded (LMDB)',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-both-'));
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
