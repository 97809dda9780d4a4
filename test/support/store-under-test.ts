import type { EventStore } from '../../src/store/event-store.js';

export interface StoreUnderTest {
  store: EventStore;
  /** Another store on the same data, as a restarted process would open it. */
  reopen(): EventStore | Promise<EventStore>;
  cleanup(): Promise<void>;
}

/** Opens a fresh store; `publicUrl` as PUBLIC_URL (requests to vanish naming it apply). */
export type OpenStore = (options?: { publicUrl?: string }) => Promise<StoreUnderTest>;

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
