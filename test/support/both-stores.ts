import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RelayConfig } from '../../src/config/env.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { LmdbEventStore } from '../../src/store/embedded/lmdb-event-store.js';
import type { EventStore } from '../../src/store/event-store.js';
import { startTestServer, type TestServer } from './test-server.js';
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
      const store = new LmdbEventStore(dir, { noteSearch: true });
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

/**
 * A fresh store (seeded, one write per event: the order of arrival is part of what is tested) and a
 * server on it with `relays`; both registered in `cleanups`, to stop after the test.
 */
export async function storeAndServer(
  open: () => Promise<OpenedStore>,
  cleanups: (() => Promise<unknown>)[],
  relays: Partial<RelayConfig>,
  seed: readonly NostrEvent[] = [],
): Promise<{ server: TestServer; store: EventStore }> {
  const opened = await open();
  cleanups.push(() => opened.cleanup());
  for (const event of seed) await opened.store.putEvents([event]);
  const server = await startTestServer(opened.store, { relays });
  cleanups.push(() => server.close());
  return { server, store: opened.store };
}
