import { describe, expect, it } from 'vitest';
import type { NostrEvent } from '../src/nostr/event.js';
import type { EventStore } from '../src/store/event-store.js';
import { rebuildRelations } from '../src/store/relation-check.js';
import { BOTH_STORES } from './support/both-stores.js';
import { pubkeyOf, signed } from './support/events.js';
import { expectExact } from './support/relation-conformance.js';

// `relations rebuild` relates each servable event once, though the store hands one over twice (a
// Redis SCAN may): a follow list's scripts add up what they are sent (found by review: a list seen
// twice counted its follows twice, in the totals and in its pubkeys' followers).
describe.each(BOTH_STORES)('relations rebuild on the $name store', ({ open }) => {
  it('an event handed over twice is related once: follows, followers, notifications and counts equal the recount', async () => {
    const { store, cleanup } = await open();
    try {
      const note = signed('rebuild-alice', { created_at: 1_700_000_000, content: 'a note' });
      await store.putEvents([
        note,
        signed('rebuild-bob', { kind: 3, created_at: 1_700_000_001, content: '', tags: [['p', pubkeyOf('rebuild-alice')], ['p', pubkeyOf('rebuild-carol')]] }),
        signed('rebuild-carol', { kind: 7, created_at: 1_700_000_002, content: '+', tags: [['e', note.id], ['p', note.pubkey]] }),
      ]);
      const twice: EventStore = Object.create(store, {
        servableEvents: {
          value: async function* (): AsyncIterable<NostrEvent[]> {
            for await (const batch of store.servableEvents()) {
              yield batch;
              yield batch;
            }
          },
        },
      }) as EventStore;
      await rebuildRelations(twice);
      await expectExact(store);
      expect(await store.relations.totals()).toEqual({ follows: 2, notifications: 3 });
    } finally {
      await cleanup();
    }
  });
});
