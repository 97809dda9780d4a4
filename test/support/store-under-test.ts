import type { EventStore } from '../../src/store/event-store.js';

export interface StoreUnderTest {
  store: EventStore;
  /** Another store on the same data, as a restarted process would open it. */
  reopen(): EventStore | Promise<EventStore>;
  cleanup(): Promise<void>;
}

/** Opens a fresh store; `publicUrl` as PUBLIC_URL (requests to vanish naming it apply); `pendingTtlSeconds` shortened for tests. */
export type OpenStore = (options?: StoreOptions) => Promise<StoreUnderTest>;

export interface StoreOptions {
  publicUrl?: string;
  pendingTtlSeconds?: number;
  /** Redis only: followers per bucket log before they move (tests of the layout use 96, the size it had before b6bd54e). */
  followBucketSize?: number;
  /** NOTE_SEARCH: the note search index kept and read (the test stores' default: true, so that the suites check it; the store classes' and the service's: false). */
  noteSearch?: boolean;
}

/** Runs a test against a fresh store, cleaned up after. */
export function withStoreFrom(open: OpenStore) {
  return (test: (store: EventStore, subject: StoreUnderTest) => Promise<void>) => async () => {
    const subject = await open();
    try {
      await test(subject.store, subject);
    } finally {
      await subject.cleanup();
    }
  };
}
