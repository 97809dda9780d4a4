import { FOLLOW_LIST_KIND } from '../nostr/follows.js';
import { PROFILE_KIND } from '../nostr/kinds.js';
import type { EventStore } from './event-store.js';

/** How full the index is: `nostr-lookup stats`, `/metrics` and `GET /` say it, from kept counters. */
export interface IndexSummary {
  /** Servable events held. */
  events: number;
  /** Of them, by kind (kinds held only), by kind ascending. */
  kinds: Record<string, number>;
  /** Pubkeys with a profile (their latest kind 0). */
  profiles: number;
  /** Pubkeys with a follow list (their latest kind 3). */
  followLists: number;
  /** Follows: pubkeys those lists name, summed over the lists (RelationIndex.totals). */
  follows: number;
  /** Notifications held, all recipients (RelationIndex.totals). */
  notifications: number;
  /** What the store takes (EventStore.storedBytes); null where the store would not say (a Redis that refuses INFO). */
  storedBytes: number | null;
}

/**
 * The summary, in three reads whatever the index holds: the counts of servable events by kind that
 * the relationship index keeps on every transition (RelationIndex.eventCounts), its follows and
 * notifications (RelationIndex.totals; `relations check` compares both with the events), and the
 * store's size.
 */
export async function summarizeIndex(store: EventStore): Promise<IndexSummary> {
  const [counts, totals, storedBytes] = await Promise.all([store.relations.eventCounts(), store.relations.totals(), store.storedBytes().catch(() => null)]);
  const kinds = [...counts].filter(([, count]) => count !== 0).sort(([a], [b]) => a - b);
  return {
    events: kinds.reduce((sum, [, count]) => sum + count, 0),
    kinds: Object.fromEntries(kinds.map(([kind, count]) => [String(kind), count])),
    profiles: counts.get(PROFILE_KIND) ?? 0,
    followLists: counts.get(FOLLOW_LIST_KIND) ?? 0,
    follows: totals.follows,
    notifications: totals.notifications,
    storedBytes,
  };
}
