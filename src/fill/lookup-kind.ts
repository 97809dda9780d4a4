import type { Filter } from 'nostr-tools/filter';
import { DELETION_KIND } from '../nostr/deletions.js';
import type { NostrEvent } from '../nostr/event.js';
import { coordinateOf, isReplaceableKind, PROFILE_KIND, readCoordinate, supersedes } from '../nostr/kinds.js';
import { addressMarkKey, eventMarkKey, profileMarkKey } from '../store/mark-store.js';

/**
 * The two things looked up through relays, as typed descriptions instead of prefixed strings: how
 * their key is asked of a relay, which event answers it, which of two answers wins, and how it is
 * marked. A key is an event id or a pubkey (64 lowercase hex).
 */
export interface LookupKind {
  readonly name: 'event' | 'profile' | 'address';
  /**
   * The filters that ask relays for these keys (one REQ; NIP-01 allows several filters); for events,
   * also the deletion requests naming them (NIP-09), so that a deleted note is not brought back by
   * a relay that still holds it.
   */
  filters(keys: readonly string[]): Filter[];
  /** The key an arriving event answers, if it answers one. */
  keyOf(event: NostrEvent): string;
  /** Of two events for one key, whether `candidate` wins over `held`. */
  wins(candidate: NostrEvent, held: NostrEvent): boolean;
  /** Whether the first event found for a key is its answer (no need to wait for other relays). */
  readonly firstIsFinal: boolean;
  /** The key's mark (store/mark-store.ts). */
  markKey(key: string): string;
  /** Whether the filters also ask for deletion requests naming the keys (`{"kinds":[5],"#e":[…]}`). */
  readonly asksDeletions: boolean;
}

/**
 * Ids or authors per filter, at most. A GraphQL request can want thousands of profiles (100 events
 * × 100 relevant pubkeys); relays refuse oversized filters, so larger sets are split into several
 * filters of the same REQ: still one subscription per relay.
 */
export const MAX_VALUES_PER_FILTER = 500;

export const EVENT_LOOKUP: LookupKind = {
  name: 'event',
  filters: (ids) =>
    chunks(ids, MAX_VALUES_PER_FILTER).flatMap((part) => [{ ids: part }, { kinds: [DELETION_KIND], '#e': part }]),
  asksDeletions: true,
  keyOf: (event) => event.id,
  // An id names one event: the first that verifies is the answer (NIP-01).
  wins: () => false,
  firstIsFinal: true,
  markKey: eventMarkKey,
};

export const PROFILE_LOOKUP: LookupKind = {
  name: 'profile',
  filters: (pubkeys) => chunks(pubkeys, MAX_VALUES_PER_FILTER).map((part) => ({ kinds: [PROFILE_KIND], authors: part })),
  asksDeletions: false,
  keyOf: (event) => (event.kind === PROFILE_KIND ? event.pubkey : ''),
  // Relays may hold different versions: the newest wins (NIP-01 replaceable rule).
  wins: (candidate, held) => supersedes(candidate, held),
  firstIsFinal: false,
  markKey: profileMarkKey,
};

/**
 * The latest version at a NIP-01 coordinate (`<kind>:<pubkey>:<d>`, an naddr). Asked by kind, author
 * and `d` (one filter per kind and author, their `d` values together); the newest version wins.
 */
export const ADDRESS_LOOKUP: LookupKind = {
  name: 'address',
  filters: (coordinates) => {
    const groups = new Map<string, { kind: number; pubkey: string; ds: string[] }>();
    for (const text of new Set(coordinates)) {
      const coordinate = readCoordinate(text);
      if (!coordinate) continue;
      const group = `${coordinate.kind}:${coordinate.pubkey}`;
      const held = groups.get(group) ?? { kind: coordinate.kind, pubkey: coordinate.pubkey, ds: [] };
      held.ds.push(coordinate.d);
      groups.set(group, held);
    }
    return [...groups.values()].flatMap(({ kind, pubkey, ds }) =>
      isReplaceableKind(kind)
        ? [{ kinds: [kind], authors: [pubkey] }]
        : chunks(ds, MAX_VALUES_PER_FILTER).map((part) => ({ kinds: [kind], authors: [pubkey], '#d': part })),
    );
  },
  asksDeletions: false,
  keyOf: coordinateOf,
  wins: (candidate, held) => supersedes(candidate, held),
  firstIsFinal: false,
  markKey: (coordinate) => addressMarkKey(readCoordinate(coordinate)?.address ?? coordinate),
};

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const unique = [...new Set(items)];
  const parts: T[][] = [];
  for (let start = 0; start < unique.length; start += size) parts.push(unique.slice(start, start + size));
  return parts;
}
